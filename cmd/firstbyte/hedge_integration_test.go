//go:build integration

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lateUpstream answers an OpenAI chat request naming tag, its first byte
// after delay (a stream: four chunks 2 ms apart after it); gone counts the
// requests whose connection the gateway closed before that.
type lateUpstream struct {
	*httptest.Server
	gone atomic.Int32
}

func newLateUpstream(t *testing.T, tag string, delay time.Duration) *lateUpstream {
	u := &lateUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			u.gone.Add(1)
			return
		}
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, tag)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 4 {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"from %s %d \"},\"finish_reason\":null}]}\n\n", tag, i)
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":4,\"total_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(u.Close)
	return u
}

// TestHedgeThroughTheBinary: with strategy.hedge on, a first attempt whose
// first byte is late gets a hedge on the next target after the configured
// delay; the hedge's answer alone reaches the client (unary and streaming,
// OpenAI and Anthropic clients: the latter translated), X-Firstbyte-Hedged
// says won, the late upstream sees its connection closed, and
// firstbyte_hedges_total counts each.
func TestHedgeThroughTheBinary(t *testing.T) {
	parallelTimed(t)
	late, quick := newLateUpstream(t, "late", 3*time.Second), newLateUpstream(t, "quick", 5*time.Millisecond)
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
strategy: {mode: fallback, hedge: {enabled: true, after: 100ms, budget: 1, max: 1}}
providers:
  late:  {kind: openai, base_url: %q, models: [m]}
  quick: {kind: openai, base_url: %q, models: [m]}
targets:
  - {virtual_key: late}
  - {virtual_key: quick}
`, late.URL+"/v1", quick.URL+"/v1"))

	cases := []struct {
		name, path, body string
	}{
		{"openai unary", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"openai stream", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic unary", "/v1/messages", `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic stream", "/v1/messages", `{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	}
	for i, tc := range cases {
		resp := postAPI(t, gw.api, tc.path, tc.body, "anthropic-version", "2023-06-01")
		if resp.status != 200 || resp.target() != "quick" || resp.header.Get("X-Firstbyte-Hedged") != "won" || resp.header.Get("X-Firstbyte-Attempts") != "2" {
			t.Fatalf("%s: %d from %q, hedged %q, %s attempts; want 200 from quick, hedged won, 2 attempts\n%s",
				tc.name, resp.status, resp.target(), resp.header.Get("X-Firstbyte-Hedged"), resp.header.Get("X-Firstbyte-Attempts"), resp.body)
		}
		if !strings.Contains(resp.body, "from quick") || strings.Contains(resp.body, "from late") {
			t.Errorf("%s: the body is not quick's alone:\n%s", tc.name, resp.body)
		}
		if resp.elapsed > 2*time.Second {
			t.Errorf("%s: took %v; the hedge should serve it in about 100 ms", tc.name, resp.elapsed)
		}
		pollUntil(t, 5*time.Second, fmt.Sprintf("%s: the late upstream's connection closed", tc.name), func() bool { return late.gone.Load() == int32(i+1) })
	}
	pollUntil(t, 5*time.Second, "firstbyte_hedges_total{result=won} to count every request", func() bool {
		return scrapeMetric(t, gw.admin, "firstbyte_hedges_total", `result="won"`) == float64(len(cases))
	})
	if n := scrapeMetric(t, gw.admin, "firstbyte_attempts_total", `outcome="hedge_lost"`); n != float64(len(cases)) {
		t.Errorf("hedge_lost attempts = %v, want %d (each loser counted as lost, not failed)", n, len(cases))
	}
}
