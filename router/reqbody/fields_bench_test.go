package reqbody

// Benchmarks of request model extraction: the only look the gateway takes
// inside a request body. Scan validates the whole body (json.Valid)
// and then walks its top level once; WithModel splices the upstream model
// in when a model_map renames it. Both scale with the body, so they are
// measured at a one-turn prompt, a short conversation and a long context.

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
)

func BenchmarkScanRequest(b *testing.B) {
	for _, size := range benchutil.RequestSizes {
		body := benchutil.ChatRequest(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				f, err := Scan(body)
				if err != nil || f.Model != "llama-3.3-70b" {
					b.Fatalf("Scan = %+v, %v", f, err)
				}
			}
			benchutil.ReportCPU(b, start)
		})
	}
}

// BenchmarkWithModel: "same" is the common case (no model_map rename:
// the body goes as it came); "renamed" copies the body once.
func BenchmarkWithModel(b *testing.B) {
	for _, size := range benchutil.RequestSizes {
		body := benchutil.ChatRequest(size)
		f, err := Scan(body)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("same/bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				if out := f.WithModel(nil, body, f.Model); len(out) != len(body) {
					b.Fatal("body changed")
				}
			}
			benchutil.ReportCPU(b, start)
		})
		b.Run("renamed/bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				if out := f.WithModel(nil, body, "llama-3.3-70b-versatile"); len(out) <= len(body) {
					b.Fatal("model not replaced")
				}
			}
			benchutil.ReportCPU(b, start)
		})
	}
}

// BenchmarkCheckInput: the input checks after Scan, on a request
// without tools (the byte search that finds no tool field) and on one
// whose conversation has a tool call and its result in every fourth turn
// (the messages walked).
func BenchmarkCheckInput(b *testing.B) {
	for _, size := range benchutil.RequestSizes {
		plain := benchutil.ChatRequest(size)
		tools := bytes.Replace(plain, []byte(`{"messages":[`), []byte(`{"messages":[`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},`+
			`{"role":"tool","tool_call_id":"call_1","content":"42"},`), 1)
		for _, tc := range []struct {
			name string
			body []byte
		}{{"plain", plain}, {"tools", tools}} {
			f, err := Scan(tc.body)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(tc.name+"/bytes="+strconv.Itoa(len(tc.body)), func(b *testing.B) {
				b.SetBytes(int64(len(tc.body)))
				b.ReportAllocs()
				start := benchutil.ProcessCPU(b)
				for b.Loop() {
					if bad := Check(ChatCompletions, &f); bad.Msg != "" {
						b.Fatal(bad.Msg)
					}
				}
				benchutil.ReportCPU(b, start)
			})
		}
	}
}
