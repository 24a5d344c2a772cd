// Package benchutil holds what the router's benchmarks share: the process's
// CPU time, reported per op beside ns/op, and a chat request body of a
// chosen size. Only tests import it, so it is never part of the binary.
package benchutil

import (
	"strings"
	"testing"
	"time"
)

// RequestSizes are the body sizes the request benchmarks measure: a
// one-turn prompt, a short conversation and a long context.
var RequestSizes = []int{200, 4 << 10, 128 << 10}

// ChatRequest is a chat request of about size bytes: mostly string bytes
// with the escapes a real prompt has, then a few top-level members, "model"
// last (SDKs put it anywhere; after the messages is the longer scan).
func ChatRequest(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	turn := `{"role":"user","content":"` + strings.Repeat(`lorem ipsum dolor sit amet, \"quoted\" text `, 4) + `"}`
	for i := 0; b.Len() < size || i == 0; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(turn)
	}
	b.WriteString(`],"temperature":0.2,"max_tokens":256,"stream":false,"model":"llama-3.3-70b"}`)
	return []byte(b.String())
}

// ReportCPU adds cpu-ns/op: the process's CPU time since start (a
// ProcessCPU taken before the loop) per op.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(ProcessCPU(b)-start)/float64(b.N), "cpu-ns/op")
}
