package jsonscan

import (
	"strconv"
	"strings"
	"testing"
)

// benchObject is a chat request of about size bytes: mostly string bytes
// with the escapes a real prompt has, a few top-level members after them.
func benchObject(size int) []byte {
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

var benchSizes = []int{200, 4 << 10, 128 << 10}

func BenchmarkValid(b *testing.B) {
	for _, size := range benchSizes {
		body := benchObject(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				if _, ok := Valid(body); !ok {
					b.Fatal("not valid")
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkObject is validation and the walk over the top-level members in
// one pass, as the request path and the translators use it.
func BenchmarkObject(b *testing.B) {
	for _, size := range benchSizes {
		body := benchObject(size)
		b.Run("bytes="+strconv.Itoa(len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				n := 0
				if !Object(body, func(_, _ []byte) { n++ }) || n != 5 {
					b.Fatal("not an object of 5 members")
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
