package sim

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkChatUnaryZeroDelay is the simulator's own cost per chat completion with no
// TTFB and no pace, so the gateway's load tests can tell it apart from theirs:
// "handler" is the handler alone, "http" adds a keep-alive loopback round trip.
func BenchmarkChatUnaryZeroDelay(b *testing.B) {
	p := Provider{Name: "bench", TTFB: Fixed(0), Stream: Pace{Chunks: 16, Interval: 0}}
	const body = `{"model":"m","messages":[{"role":"user","content":"hello"}]}`

	b.Run("handler", func(b *testing.B) {
		s := NewProvider(p, Options{})
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})

	b.Run("http", func(b *testing.B) {
		r := startSim(b, p, Options{})
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		defer client.CloseIdleConnections()
		url := r.URL() + "/chat/completions"
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	})
}
