package router

// Benchmarks of request model extraction: the only look the gateway takes
// inside a request body. scanRequest validates the whole body (json.Valid)
// and then walks its top level once; withModel splices the upstream model
// in when a model_map renames it. Both scale with the body, so they are
// measured at a one-turn prompt, a short conversation and a long context.

import (
	"strconv"
	"strings"
	"testing"
)

// benchBody is a chat request whose messages total about size bytes, with
// "model" after them (SDKs put it anywhere; after is the longer scan).
func benchBody(size int) []byte {
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

var bodySizes = []int{200, 4 << 10, 128 << 10}

func BenchmarkScanRequest(b *testing.B) {
	for _, size := range bodySizes {
		body := benchBody(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				f, err := scanRequest(body)
				if err != nil || f.Model != "llama-3.3-70b" {
					b.Fatalf("scanRequest = %+v, %v", f, err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkWithModel: "same" is the common case (no model_map rename:
// the body goes as it came); "renamed" copies the body once.
func BenchmarkWithModel(b *testing.B) {
	for _, size := range bodySizes {
		body := benchBody(size)
		f, err := scanRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("same/bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				if out := f.withModel(nil, body, f.Model); len(out) != len(body) {
					b.Fatal("body changed")
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
		b.Run("renamed/bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				if out := f.withModel(nil, body, "llama-3.3-70b-versatile"); len(out) <= len(body) {
					b.Fatal("model not replaced")
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
