package router

// Benchmarks of request model extraction: the only look the gateway takes
// inside a request body. scanRequest validates the whole body (json.Valid)
// and then walks its top level once; withModel splices the upstream model
// in when a model_map renames it. Both scale with the body, so they are
// measured at a one-turn prompt, a short conversation and a long context.

import (
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
				f, err := scanRequest(body)
				if err != nil || f.Model != "llama-3.3-70b" {
					b.Fatalf("scanRequest = %+v, %v", f, err)
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
		f, err := scanRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("same/bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				if out := f.withModel(nil, body, f.Model); len(out) != len(body) {
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
				if out := f.withModel(nil, body, "llama-3.3-70b-versatile"); len(out) <= len(body) {
					b.Fatal("model not replaced")
				}
			}
			benchutil.ReportCPU(b, start)
		})
	}
}
