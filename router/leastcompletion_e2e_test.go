package router_test

// End-to-end least-completion: real HTTP upstreams that stream at fixed
// token rates, the real OTel SDK, aggregator and tracker; the clock and the
// random source are injected. A provider "takes" its first byte and then
// its answer's tokens at its rate by advancing the shared fake clock, so the
// TTFB and the output rate the spans carry are exactly its own.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// rateProvider streams max_tokens tokens: its first chunk after ttfb, the
// rest at rate tokens per second once the client has read the first chunk
// (proceed), then the usage chunk.
func rateProvider(t *testing.T, name string, ttfb time.Duration, rate float64, clock *router.FakeClock, proceed <-chan struct{}, log *hitLog) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		log.add(name)
		clock.Advance(ttfb)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-proceed
		clock.Advance(time.Duration(math.Round(float64(req.MaxTokens) / rate * float64(time.Second))))
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n",
			req.MaxTokens, req.MaxTokens+1)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// completionRig is a gateway in mode over the (throughput) study's three
// targets: t1 first byte in 100 ms at 30 tokens/s, t2 400 ms at 150, t3
// 250 ms at 60.
type completionRig struct {
	g       *learningGateway
	proceed chan struct{}
	log     *hitLog
}

func newCompletionRig(t *testing.T, mode string) *completionRig {
	clock, log, proceed := router.NewFakeClock(), &hitLog{}, make(chan struct{})
	t1 := rateProvider(t, "t1", 100*time.Millisecond, 30, clock, proceed, log)
	t2 := rateProvider(t, "t2", 400*time.Millisecond, 150, clock, proceed, log)
	t3 := rateProvider(t, "t3", 250*time.Millisecond, 60, clock, proceed, log)
	g := startLearningGateway(t, fmt.Sprintf(`
strategy: {mode: %s}
providers:
  t1: {base_url: %q}
  t2: {base_url: %q}
  t3: {base_url: %q}
targets:
  - {virtual_key: t1, model_map: {m: m}}
  - {virtual_key: t2, model_map: {m: m}}
  - {virtual_key: t3, model_map: {m: m}}
`, mode, t1, t2, t3), clock, &scriptRand{})
	return &completionRig{g: g, proceed: proceed, log: log}
}

// stream asks for a streamed answer of maxTokens tokens (hdr: extra
// headers) and reads it whole; it returns the target that served it.
func (c *completionRig) stream(t *testing.T, maxTokens int, hdr ...string) string {
	t.Helper()
	resp := post(t, c.g.url, "/v1/chat/completions",
		fmt.Sprintf(`{"model":"m","stream":true,"max_tokens":%d,"messages":[{"role":"user","content":"hi"}]}`, maxTokens), hdr...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp.Body))
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	c.proceed <- struct{}{} // the first chunk is through: now the rest of the answer
	readAll(t, resp.Body)
	return resp.Header.Get(router.HeaderTarget)
}

// teach sends every target, by name, 4 answers of 600 tokens and 4 of 2.
func (c *completionRig) teach(t *testing.T) {
	for _, target := range []string{"t1", "t2", "t3"} {
		for range 4 {
			c.stream(t, 600, router.HeaderProviderOrder, target)
			c.stream(t, 2, router.HeaderProviderOrder, target)
		}
	}
}

// least-completion sends a long answer to the target that finishes it
// first (t2: 0.4 s + 600/150 = 4.4 s), where least-latency sends it to the
// fastest first byte (t1: 20.1 s); a short answer goes to t1 under both.
func TestLeastCompletionChoosesDifferentlyForLongAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode        string
		long, short string
		parts       bool // check /debug/routing's prediction for t2
	}{
		{"least-latency", "t1", "t1", false},
		{"least-completion", "t2", "t1", true},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			rig := newCompletionRig(t, tt.mode)
			rig.teach(t)
			rig.log.take()
			if got := rig.stream(t, 600); got != tt.long {
				t.Errorf("600-token answer served by %s, want %s", got, tt.long)
			}
			if got := rig.stream(t, 2); got != tt.short {
				t.Errorf("2-token answer served by %s, want %s", got, tt.short)
			}
			if !tt.parts {
				return
			}
			for _, tr := range rig.g.gw.Routing()[0].Targets {
				if tr.Target != "t2" {
					continue
				}
				p := tr.Completion
				// The answers seen are 600 or 2 tokens, half each: the
				// median (the upper middle) is 600.
				if p == nil || !p.Measured || math.Abs(p.TTFBSeconds-0.4) > 1e-6 || math.Abs(p.OutputRate-150) > 1e-3 ||
					p.OutputTokens != 600 || math.Abs(p.Seconds-4.4) > 1e-3 {
					t.Errorf("/debug/routing t2 completion = %+v, want 0.4 s + 600 tokens / 150 tokens/s = 4.4 s", p)
				}
			}
		})
	}
}
