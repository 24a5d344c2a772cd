package jsonscan

import (
	"strconv"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
)

func BenchmarkValid(b *testing.B) {
	for _, size := range benchutil.RequestSizes {
		body := benchutil.ChatRequest(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				if _, ok := Valid(body); !ok {
					b.Fatal("not valid")
				}
			}
			benchutil.ReportCPU(b, start)
		})
	}
}

// BenchmarkObject is validation and the walk over the top-level members in
// one pass, as the request path and the translators use it.
func BenchmarkObject(b *testing.B) {
	for _, size := range benchutil.RequestSizes {
		body := benchutil.ChatRequest(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := benchutil.ProcessCPU(b)
			for b.Loop() {
				n := 0
				if !Object(body, func(_, _ []byte) { n++ }) || n != 5 {
					b.Fatal("not an object of 5 members")
				}
			}
			benchutil.ReportCPU(b, start)
		})
	}
}
