package router_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// An integrity rig is one gateway (one routing mode, hedging on or off)
// over 2 to 4 fake providers that serve one client model, each under its
// own URL path, key and upstream model. A fake answers what the running
// request's plan says (a 200, an error, a timeout, a hang) and checks
// every request it is sent: its own path, its own key and nothing else
// that looks like a key, its own upstream model in the body. The rigs
// live across many sequences, so breakers, disables, cooldowns and the
// tracker carry state from one sequence to the next, as a gateway's do.
//
//	client --(auth: client key)--> gateway --+--> /p0/v1/chat/completions  Bearer key-p0
//	                                         +--> /p1/v1/chat/completions  Bearer key-p1
//	                                         +--> /p2/v1/messages          x-api-key: key-p2

// The rigs' timeouts: short, so a timeout or a hang costs little wall
// time; the slow behaviour's body comes past first_byte, within total.
const (
	rigFirstByte = 25 * time.Millisecond
	rigTotal     = 80 * time.Millisecond
	rigSlowBody  = 40 * time.Millisecond
	rigClientKey = "client-secret-key"
)

// behaviour is what a fake provider does with a client request's attempts.
type behaviour uint8

const (
	behaveOK      behaviour = iota // a valid answer at once
	behave401                      // the key refused
	behave403                      // a permission refusal
	behave429                      // a rate limit, with the plan's Retry-After
	behave503                      // an outage
	behaveTimeout                  // no headers within the first-byte timeout
	behaveHang                     // headers at once, then nothing
	behaveSlow                     // headers at once, the rest after rigSlowBody
)

var behaviourNames = [...]string{"ok", "401", "403", "429", "503", "timeout", "hang", "slow"}

func (b behaviour) String() string { return behaviourNames[b] }

// behaviourTable maps a byte (mod 16) to a behaviour, weighted towards
// answers so that sequences both break and heal targets.
var behaviourTable = [16]behaviour{
	behaveOK, behaveOK, behaveOK, behaveOK, behaveOK, behaveSlow, behaveSlow,
	behave401, behave403, behave429, behave429, behave503, behave503,
	behaveTimeout, behaveHang, behaveOK,
}

// requestPlan is what each fake does with one client request.
type requestPlan struct {
	beh        []behaviour // by provider index
	retryAfter int         // a 429's Retry-After, seconds
}

// integrityFake is one fake provider of a rig.
type integrityFake struct {
	rig  *integrityRig
	idx  int
	name string // p0, p1, ...: provider, target and path segment
	kind string // openai or anthropic
	url  string // the fake's server
}

type integrityRig struct {
	name    string // mode/hedge/layout, for failure messages
	gateway http.Handler
	clock   *router.FakeClock
	fakes   []*integrityFake
	next    atomic.Int64 // request tags

	plans sync.Map // request tag -> *requestPlan

	mu         sync.Mutex
	violations []string // guarded by mu
}

// rigLayouts are the rigs' providers by kind (o: openai, a: anthropic).
var rigLayouts = []string{"oo", "oa", "ooa", "ooao"}

// newIntegrityRigs builds a rig for every mode, hedging off and on, and
// every layout.
func newIntegrityRigs(tb testing.TB) []*integrityRig {
	tb.Helper()
	var rigs []*integrityRig
	for _, mode := range config.Modes {
		for _, hedge := range []bool{false, true} {
			for _, layout := range rigLayouts {
				rigs = append(rigs, newIntegrityRig(tb, mode, hedge, layout))
			}
		}
	}
	return rigs
}

func newIntegrityRig(tb testing.TB, mode string, hedge bool, layout string) *integrityRig {
	tb.Helper()
	r := &integrityRig{name: fmt.Sprintf("%s/hedge=%t/%s", mode, hedge, layout), clock: router.NewOffsetClock()}
	for i, k := range layout {
		kind := "openai"
		if k == 'a' {
			kind = "anthropic"
		}
		f := &integrityFake{rig: r, idx: i, name: fmt.Sprintf("p%d", i), kind: kind}
		srv := httptest.NewServer(f)
		tb.Cleanup(srv.Close)
		f.url = srv.URL
		r.fakes = append(r.fakes, f)
	}
	tracker := collector.NewTracker(collector.TrackerOptions{Now: r.clock.Now})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{InstanceID: "self"})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "self", Aggregator: agg, Getenv: func(string) string { return "" },
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = shutdown(context.Background()) })
	cfg, err := config.Parse([]byte(r.config(mode, hedge)), func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: tracker, TracerProvider: sdk.TracerProvider, Now: r.clock.Now})
	if err != nil {
		tb.Fatal(err)
	}
	r.gateway = gw.Handler()
	return r
}

// config is the rig's gateway config: every fake a provider serving
// client model m as its own upstream model um-<name>, priced apart (for
// cost-optimized), the first one retried once.
func (r *integrityRig) config(mode string, hedge bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "auth: {keys: [%s]}\nstrategy: {mode: %s, hedge: {enabled: %t, after: 15ms, budget: 1, max: 2}}\nproviders:\n", rigClientKey, mode, hedge)
	for i, f := range r.fakes {
		fmt.Fprintf(&b, "  %s: {kind: %s, base_url: %q, api_key: key-%s, "+
			"timeout: {first_byte: %s, idle: %s, total: %s}, circuit_breaker: {failures: 2, cooldown: 10s}, "+
			"pricing: {um-%s: {input: %d, output: %d}}}\n",
			f.name, f.kind, f.url+"/"+f.name+"/v1", f.name, rigFirstByte, rigFirstByte, rigTotal, f.name, i+1, 2*(i+1))
	}
	b.WriteString("targets:\n")
	for i, f := range r.fakes {
		fmt.Fprintf(&b, "  - {virtual_key: %s, model_map: {m: um-%s}, retry: {attempts: %d}}\n", f.name, f.name, 1-min(i, 1))
	}
	return b.String()
}

func (r *integrityRig) violate(format string, args ...any) {
	r.mu.Lock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// takeViolations returns what the fakes and the client saw wrong since the
// last call.
func (r *integrityRig) takeViolations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.violations
	r.violations = nil
	return v
}

// ServeHTTP checks what the gateway sent, then answers as planned.
func (f *integrityFake) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	tag := string(requestTag.Find(body))
	f.check(req, body, tag)
	plan, _ := f.rig.plans.Load(tag)
	p, _ := plan.(*requestPlan)
	if p == nil { // an attempt that arrived after its request ended
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	f.answer(w, req, p.beh[f.idx], p.retryAfter, bytes.Contains(body, []byte(`"stream":true`)))
}

// check records every way the request is not this provider's own.
func (f *integrityFake) check(req *http.Request, body []byte, tag string) {
	wantPath, wantAuth, wantKey := "/"+f.name+"/v1/chat/completions", "Bearer key-"+f.name, ""
	if f.kind == "anthropic" {
		wantPath, wantAuth, wantKey = "/"+f.name+"/v1/messages", "", "key-"+f.name
	}
	if req.URL.Path != wantPath {
		f.rig.violate("%s (%s) request %s: path %q, want %q", f.name, f.kind, tag, req.URL.Path, wantPath)
	}
	if got := req.Header.Get("Authorization"); got != wantAuth {
		f.rig.violate("%s (%s) request %s: Authorization %q, want %q", f.name, f.kind, tag, got, wantAuth)
	}
	if got := req.Header.Get("X-Api-Key"); got != wantKey {
		f.rig.violate("%s (%s) request %s: x-api-key %q, want %q", f.name, f.kind, tag, got, wantKey)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			if (strings.Contains(v, "key-p") && !strings.HasSuffix(v, "key-"+f.name)) || strings.Contains(v, rigClientKey) {
				f.rig.violate("%s request %s: header %s carries another credential %q", f.name, tag, k, v)
			}
		}
	}
	if !bytes.Contains(body, []byte(`"model":"um-`+f.name+`"`)) {
		f.rig.violate("%s request %s: body does not name its upstream model um-%s: %.200s", f.name, tag, f.name, body)
	}
	if tag == "" {
		f.rig.violate("%s: a request without the client's content: %.200s", f.name, body)
	}
}

// answer does what behaviour b says, in the fake's own API format.
func (f *integrityFake) answer(w http.ResponseWriter, req *http.Request, b behaviour, retryAfter int, stream bool) {
	switch b {
	case behaveTimeout:
		wait(req, 4*rigTotal)
		return
	case behave401, behave403, behave429, behave503:
		if b == behave429 {
			w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(map[behaviour]int{behave401: 401, behave403: 403, behave429: 429, behave503: 503}[b])
		_, _ = io.WriteString(w, f.errorBody(b))
		return
	}
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	switch b {
	case behaveHang:
		wait(req, 4*rigTotal)
		return
	case behaveSlow:
		if !wait(req, rigSlowBody) {
			return
		}
	}
	_, _ = io.WriteString(w, f.okBody(stream))
}

// wait waits d or until the gateway gives up on the request, and reports
// whether the request is still wanted.
func wait(req *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-req.Context().Done():
		return false
	}
}

// okBody is a valid answer whose text names the fake: from-<name>.
func (f *integrityFake) okBody(stream bool) string {
	text := "from-" + f.name
	switch {
	case f.kind == "anthropic" && stream:
		return msgStart + msgBlock +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text + "\"}}\n\n" +
			msgStopText + msgStop
	case f.kind == "anthropic":
		return `{"id":"msg_1","type":"message","role":"assistant","model":"um-` + f.name + `","content":[{"type":"text","text":"` + text + `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
	case stream:
		return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"um-" + f.name + "\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"" + text + "\"},\"finish_reason\":null}]}\n\n" +
			chatStop + chatDone
	}
	return `{"id":"c1","object":"chat.completion","created":1,"model":"um-` + f.name + `","choices":[{"index":0,"message":{"role":"assistant","content":"` + text + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
}

// errorBody is the error a provider of the fake's kind sends for b.
func (f *integrityFake) errorBody(b behaviour) string {
	if f.kind == "anthropic" {
		typ := map[behaviour]string{behave401: "authentication_error", behave403: "permission_error", behave429: "rate_limit_error", behave503: "overloaded_error"}[b]
		return `{"type":"error","error":{"type":"` + typ + `","message":"refused"}}`
	}
	return map[behaviour]string{
		behave401: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
		behave403: `{"error":{"message":"not allowed","type":"permission_error","code":null}}`,
		behave429: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
		behave503: `{"error":{"message":"overloaded","type":"server_error","code":null}}`,
	}[b]
}
