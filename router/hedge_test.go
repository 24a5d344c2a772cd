package router_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Hedging through real HTTP: whichever attempt produces a first byte first
// serves the request, unary and streaming, in both client formats, and no
// client ever gets bytes of two attempts.

// taggedStream answers a streaming chat request with n chunks whose
// content is tag, the first after first, then every 2 ms; a unary one with
// one answer naming tag after first.
func taggedStream(tag string, first func() time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case <-time.After(first()):
		case <-r.Context().Done():
			return
		}
		if !strings.Contains(string(body), `"stream":true`) {
			jsonAnswer(200, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`+tag+`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 5 {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s%d \"},\"finish_reason\":null}]}\n\n", tag, i)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(2 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":5,\"total_tokens\":6}}\n\ndata: [DONE]\n\n")
	}
}

func hedgeConfig(budget float64, urls ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "strategy: {mode: fallback, hedge: {enabled: true, after: 40ms, budget: %g, max: 1}}\nproviders:\n", budget)
	for i, u := range urls {
		fmt.Fprintf(&b, "  p%d: {base_url: %q, models: [m]}\n", i, u+"/v1")
	}
	b.WriteString("targets:\n")
	for i := range urls {
		fmt.Fprintf(&b, "  - {virtual_key: p%d}\n", i)
	}
	return b.String()
}

func TestHedgeServesTheFasterThroughEveryPath(t *testing.T) {
	slow := newUpstream(t, taggedStream("SLOW", func() time.Duration { return 2 * time.Second }))
	fast := newUpstream(t, taggedStream("FAST", func() time.Duration { return 5 * time.Millisecond }))
	gw := gatewayFromYAML(t, hedgeConfig(1, slow.URL, fast.URL), router.Options{})
	srv := newServer(t, gw)
	for _, tc := range []struct{ name, path, body, last string }{
		{"OpenAI unary", "/v1/chat/completions", chatBody, `"content":"FAST"`},
		{"OpenAI stream", "/v1/chat/completions", streamChat, "data: [DONE]\n\n"},
		{"Anthropic unary, translated", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, `"text":"FAST"`},
		{"Anthropic stream, translated", "/v1/messages", streamMessages, "event: message_stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp := post(t, srv.URL, tc.path, tc.body)
			body := readAll(t, resp.Body)
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v: the hedge did not serve", took)
			}
			if resp.StatusCode != 200 || strings.Contains(body, "SLOW") || !strings.Contains(body, "FAST") || !strings.Contains(body, tc.last) {
				t.Fatalf("%d %s: want the fast target's whole answer alone", resp.StatusCode, body)
			}
			if h := resp.Header; h.Get(router.HeaderHedged) != "won" || h.Get(router.HeaderTarget) != "p1" || h.Get(router.HeaderAttempts) != "2" {
				t.Fatalf("headers: hedged %q target %q attempts %q; want won, p1, 2", h.Get(router.HeaderHedged), h.Get(router.HeaderTarget), h.Get(router.HeaderAttempts))
			}
		})
	}
}

// TestManyRacesNeverMixTwoAnswers: 200 streamed requests race two
// upstreams whose first chunks come at random times either side of the
// hedge's delay; every client gets one upstream's stream, whole, and never
// a byte of the other.
func TestManyRacesNeverMixTwoAnswers(t *testing.T) {
	jitter := func() time.Duration { return time.Duration(rand.IntN(80)) * time.Millisecond }
	a := newUpstream(t, taggedStream("AAA", jitter))
	b := newUpstream(t, taggedStream("BBB", jitter))
	gw := gatewayFromYAML(t, hedgeConfig(1, a.URL, b.URL), router.Options{})
	srv := newServer(t, gw)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, srv.URL, "/v1/chat/completions", streamChat)
			body := readAll(t, resp.Body)
			hasA, hasB := strings.Contains(body, "AAA"), strings.Contains(body, "BBB")
			if resp.StatusCode != 200 || hasA == hasB || !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Count(body, "data: [DONE]") != 1 {
				t.Errorf("%d: a %v, b %v, body %q", resp.StatusCode, hasA, hasB, body)
			}
			mu.Lock()
			won[resp.Header.Get(router.HeaderHedged)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if won["won"] == 0 || won["lost"] == 0 {
		t.Errorf("hedges won %d, lost %d: the races never went both ways", won["won"], won["lost"])
	}
}

// newServer serves gw on loopback for the test.
func newServer(t *testing.T, gw *router.Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestClientGoneMidRaceCancelsBothAttempts: a client that goes away while
// its first attempt and its hedge both wait for a first byte cancels both
// upstream requests, streaming or not, and leaves no goroutine behind.
func TestClientGoneMidRaceCancelsBothAttempts(t *testing.T) {
	for _, body := range []string{chatBody, streamChat} {
		arrived, cancelled := make(chan string, 2), make(chan string, 2)
		hold := func(tag string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				arrived <- tag
				<-r.Context().Done() // never a first byte
				cancelled <- tag
			}
		}
		a, b := newUpstream(t, hold("a")), newUpstream(t, hold("b"))
		srv := newServer(t, gatewayFromYAML(t, hedgeConfig(1, a.URL, b.URL), router.Options{}))

		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		for range 2 { // the first attempt, then the hedge 40 ms later
			select {
			case <-arrived:
			case <-time.After(5 * time.Second):
				t.Fatal("the first attempt and its hedge did not both reach their upstreams")
			}
		}
		cancel()
		<-done
		for range 2 {
			select {
			case <-cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("an upstream request of the race was not cancelled after the client left")
			}
		}
		requireGoroutinesBack(t, before)
	}
}
