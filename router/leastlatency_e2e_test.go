package router_test

// End-to-end least-latency: real HTTP upstreams, the real OTel SDK, the
// real aggregator and tracker. The only fakes are the clock and the random
// source, injected so every order is exact: a simulated provider "takes"
// its latency by advancing the shared fake clock before it answers, so the
// TTFB the gateway measures (and the span carries) is exactly that latency.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// scriptRand answers IntN from a script; unscripted draws return n-1, which
// means "do not explore" and "keep declaration order" in a shuffle.
type scriptRand struct {
	mu   sync.Mutex
	ints []int
}

func (r *scriptRand) script(v ...int) {
	r.mu.Lock()
	r.ints = append(r.ints, v...)
	r.mu.Unlock()
}

func (r *scriptRand) IntN(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ints) == 0 {
		return n - 1
	}
	v := r.ints[0]
	r.ints = r.ints[1:]
	return v % n
}

func (r *scriptRand) Float64() float64 { return 0.5 }

// hitLog records which provider received each attempt, in order.
type hitLog struct {
	mu   sync.Mutex
	hits []string
}

func (l *hitLog) add(name string) { l.mu.Lock(); l.hits = append(l.hits, name); l.mu.Unlock() }

func (l *hitLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hits
	l.hits = nil
	return h
}

// simProvider answers after "taking" its latency on the fake clock.
type simProvider struct {
	name    string
	latency atomic.Int64 // time.Duration per upstream model "" (all) unless byModel says otherwise
	status  atomic.Int64 // 0: 200 with a completion
	byModel map[string]time.Duration
	srv     *httptest.Server
}

func startSimProvider(t *testing.T, name string, latency time.Duration, clock *router.FakeClock, log *hitLog) *simProvider {
	p := &simProvider{name: name}
	p.latency.Store(int64(latency))
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		log.add(name)
		d := time.Duration(p.latency.Load())
		if v, ok := p.byModel[req.Model]; ok {
			d = v
		}
		clock.Advance(d)
		w.Header().Set("Content-Type", "application/json")
		if s := p.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			fmt.Fprintf(w, `{"error":{"message":"status %d from %s","type":"test"}}`, s, name)
			return
		}
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`, req.Model)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// learningGateway is the gateway wired as cmd/firstbyte wires it: SDK ->
// aggregating processor -> aggregator -> tracker -> least-latency.
type learningGateway struct {
	url     string
	gw      *router.Gateway
	tracker *collector.Tracker
	agg     *collector.Aggregator
}

func startLearningGateway(t *testing.T, cfgYAML string, clock *router.FakeClock, r mode.Rand) *learningGateway {
	t.Helper()
	tracker := collector.NewTracker(collector.TrackerOptions{Now: clock.Now})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{InstanceID: "self"})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "self", Aggregator: agg, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	cfg, err := config.Parse([]byte(cfgYAML), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: tracker, Rand: r, TracerProvider: sdk.TracerProvider, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return &learningGateway{url: srv.URL, gw: gw, tracker: tracker, agg: agg}
}

func threeTargetConfig(groq, openai, anthropic *simProvider) string {
	return fmt.Sprintf(`
providers:
  groq:      {base_url: %q}
  openai:    {base_url: %q}
  anthropic: {base_url: %q}
targets:
  - {virtual_key: groq,      model_map: {llama: llama-3.3-70b-versatile}}
  - {virtual_key: openai,    model_map: {llama: gpt-4o-mini}}
  - {virtual_key: anthropic, model_map: {llama: claude-haiku}}
`, groq.srv.URL+"/v1", openai.srv.URL+"/v1", anthropic.srv.URL+"/v1")
}

type answer struct {
	status    int
	target    string
	attempts  string
	selection string
	body      string
}

func ask(t *testing.T, url, model string, hdr ...string) answer {
	t.Helper()
	resp := post(t, url, "/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`, hdr...)
	body := readAll(t, resp.Body)
	return answer{resp.StatusCode, resp.Header.Get(router.HeaderTarget), resp.Header.Get(router.HeaderAttempts), resp.Header.Get(router.HeaderSelection), body}
}

// TestLeastLatencyStory reproduces, in order, every row of the issue's
// table: three targets serve one model; groq p50 0.3 s, openai 0.6 s,
// anthropic newly added.
func TestLeastLatencyStory(t *testing.T) {
	t.Parallel()
	clock, log, rnd := router.NewFakeClock(), &hitLog{}, &scriptRand{}
	groq := startSimProvider(t, "groq", 300*time.Millisecond, clock, log)
	openai := startSimProvider(t, "openai", 600*time.Millisecond, clock, log)
	anthropic := startSimProvider(t, "anthropic", 900*time.Millisecond, clock, log)
	g := startLearningGateway(t, threeTargetConfig(groq, openai, anthropic), clock, rnd)

	// groq and openai have history; anthropic was just added.
	for range 3 {
		ask(t, g.url, "llama", router.HeaderProviderOrder, "groq")
		ask(t, g.url, "llama", router.HeaderProviderOrder, "openai")
	}
	log.take()

	// allFail makes every provider answer 503 for one request, so the
	// order tried is visible in full.
	orderTried := func() []string {
		for _, p := range []*simProvider{groq, openai, anthropic} {
			p.status.Store(503)
		}
		defer func() {
			for _, p := range []*simProvider{groq, openai, anthropic} {
				p.status.Store(0)
			}
		}()
		a := ask(t, g.url, "llama")
		if a.status != 503 || a.attempts != "3" {
			t.Fatalf("all failing: status %d attempts %s, want 503 after 3 attempts", a.status, a.attempts)
		}
		return log.take()
	}

	t.Run("first request after adding anthropic: anthropic first (unmeasured first)", func(t *testing.T) {
		a := ask(t, g.url, "llama")
		if a.target != "anthropic" || a.selection != "cold" {
			t.Errorf("served by %s (%s), want anthropic (cold)", a.target, a.selection)
		}
		if hits := log.take(); !slices.Equal(hits, []string{"anthropic"}) {
			t.Errorf("tried %v, want [anthropic]", hits)
		}
	})

	t.Run("anthropic measured at 0.9 s: groq, openai, anthropic", func(t *testing.T) {
		// Its sample is recorded right after its answer is flushed.
		router.WaitUntil(t, "anthropic's sample", func() bool {
			_, n, _ := liveP50(g.tracker, clock.Now(), "anthropic", "claude-haiku")
			return n > 0
		})
		if p50, n, ok := liveP50(g.tracker, clock.Now(), "anthropic", "claude-haiku"); !ok || p50 != 900*time.Millisecond || n != 1 {
			t.Fatalf("tracker P50(anthropic) = %v, %d, %v; want 900ms from one span", p50, n, ok)
		}
		if got, want := orderTried(), []string{"groq", "openai", "anthropic"}; !slices.Equal(got, want) {
			t.Errorf("Order() = %v, want %v", got, want)
		}
		a := ask(t, g.url, "llama")
		if a.target != "groq" || a.selection != "leader" || a.attempts != "1" {
			t.Errorf("served by %s (%s, %s attempts), want groq (leader, 1)", a.target, a.selection, a.attempts)
		}
		log.take()
	})

	t.Run("about one request in ten: openai or anthropic first (exploration)", func(t *testing.T) {
		rnd.script(0, 0) // explore; first non-leader (openai)
		if got, want := orderTried(), []string{"openai", "groq", "anthropic"}; !slices.Equal(got, want) {
			t.Errorf("explore #1: Order() = %v, want %v", got, want)
		}
		rnd.script(0, 1) // explore; second non-leader (anthropic)
		a := ask(t, g.url, "llama")
		if a.target != "anthropic" || a.selection != "explore" {
			t.Errorf("served by %s (%s), want anthropic (explore)", a.target, a.selection)
		}
		log.take()
	})

	t.Run("groq returns 503: openai serves it", func(t *testing.T) {
		groq.status.Store(503)
		defer groq.status.Store(0)
		a := ask(t, g.url, "llama")
		if a.status != 200 || a.target != "openai" || a.attempts != "2" || a.selection != "leader" {
			t.Errorf("got %d from %s after %s attempts (%s), want 200 from openai after 2 (leader)", a.status, a.target, a.attempts, a.selection)
		}
		if hits := log.take(); !slices.Equal(hits, []string{"groq", "openai"}) {
			t.Errorf("tried %v, want [groq openai]", hits)
		}
	})

	t.Run("groq returns 422: the client gets the 422", func(t *testing.T) {
		groq.status.Store(422)
		defer groq.status.Store(0)
		a := ask(t, g.url, "llama")
		if a.status != 422 || a.target != "groq" || !strings.Contains(a.body, "status 422 from groq") {
			t.Errorf("got %d from %s: %s; want groq's 422 unchanged", a.status, a.target, a.body)
		}
		if hits := log.take(); !slices.Equal(hits, []string{"groq"}) {
			t.Errorf("tried %v, want [groq] only", hits)
		}
	})

	t.Run("no request for six minutes: all three unmeasured again", func(t *testing.T) {
		clock.Advance(6 * time.Minute)
		for _, m := range g.gw.Routing() {
			for _, tr := range m.Targets {
				if tr.Samples != 0 || tr.Leader {
					t.Errorf("%s after six idle minutes: %d samples, leader %v; want 0, false", tr.Target, tr.Samples, tr.Leader)
				}
			}
		}
		a := ask(t, g.url, "llama")
		if a.selection != "cold" {
			t.Errorf("selection = %s, want cold", a.selection)
		}
		log.take()
	})

	t.Run("after a restart: all three unmeasured again", func(t *testing.T) {
		restarted := startLearningGateway(t, threeTargetConfig(groq, openai, anthropic), clock, &scriptRand{})
		for _, m := range restarted.gw.Routing() {
			for _, tr := range m.Targets {
				if tr.Samples != 0 {
					t.Errorf("%s after restart: %d samples, want 0", tr.Target, tr.Samples)
				}
			}
		}
		if a := ask(t, restarted.url, "llama"); a.selection != "cold" {
			t.Errorf("selection = %s, want cold", a.selection)
		}
		log.take()
	})
}

// TestStreamingFirstChunkBeatsWholeUnaryAnswer: a stream whose first chunk
// comes at 100 ms ranks ahead of a unary answer arriving whole at 400 ms,
// although the stream lasts 3 s.
func TestStreamingFirstChunkBeatsWholeUnaryAnswer(t *testing.T) {
	t.Parallel()
	clock, log := router.NewFakeClock(), &hitLog{}
	unary := startSimProvider(t, "unary", 400*time.Millisecond, clock, log)
	firstChunkSeen := make(chan struct{})
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add("stream")
		clock.Advance(100 * time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-firstChunkSeen // the gateway has relayed it: now the long tail
		clock.Advance(2900 * time.Millisecond)
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer stream.Close()
	g := startLearningGateway(t, fmt.Sprintf(`
providers:
  stream: {base_url: %q}
  unary:  {base_url: %q}
targets:
  - {virtual_key: unary,  model_map: {m: m}}
  - {virtual_key: stream, model_map: {m: m}}
`, stream.URL+"/v1", unary.srv.URL+"/v1"), clock, &scriptRand{})

	resp := post(t, g.url, "/v1/chat/completions", `{"model":"m","stream":true}`, router.HeaderProviderOrder, "stream")
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	close(firstChunkSeen)
	readAll(t, resp.Body)
	ask(t, g.url, "m", router.HeaderProviderOrder, "unary")
	// The unary's sample is recorded right after its answer is flushed (the
	// stream's, before the unary request was read on the same connection).
	router.WaitUntil(t, "the unary's sample", func() bool {
		_, n, _ := liveP50(g.tracker, clock.Now(), "unary", "m")
		return n > 0
	})

	if p50, _, _ := liveP50(g.tracker, clock.Now(), "stream", "m"); p50 != 100*time.Millisecond {
		t.Errorf("stream p50 = %v, want 100ms (its first chunk, not its 3 s length)", p50)
	}
	if p50, _, _ := liveP50(g.tracker, clock.Now(), "unary", "m"); p50 != 400*time.Millisecond {
		t.Errorf("unary p50 = %v, want 400ms (the whole answer)", p50)
	}
	if lead := g.gw.Routing()[0].Targets[0]; lead.Target != "stream" || !lead.Leader {
		t.Errorf("routing leads with %s (leader %v), want stream", lead.Target, lead.Leader)
	}
}

// TestUpstreamModelsRankOnTheirOwnNumbers: one target serving two client
// models under different upstream models keeps a p50 per upstream model.
func TestUpstreamModelsRankOnTheirOwnNumbers(t *testing.T) {
	t.Parallel()
	clock, log := router.NewFakeClock(), &hitLog{}
	groq := startSimProvider(t, "groq", 0, clock, log)
	groq.byModel = map[string]time.Duration{"small-up": 100 * time.Millisecond, "big-up": 900 * time.Millisecond}
	openai := startSimProvider(t, "openai", 500*time.Millisecond, clock, log)
	g := startLearningGateway(t, fmt.Sprintf(`
providers:
  groq:   {base_url: %q}
  openai: {base_url: %q}
targets:
  - {virtual_key: groq,   model_map: {small: small-up, big: big-up}}
  - {virtual_key: openai, model_map: {small: gpt-small, big: gpt-big}}
`, groq.srv.URL+"/v1", openai.srv.URL+"/v1"), clock, &scriptRand{})
	for _, m := range []string{"small", "big"} {
		ask(t, g.url, m, router.HeaderProviderOrder, "groq")
		ask(t, g.url, m, router.HeaderProviderOrder, "openai")
	}
	if a := ask(t, g.url, "small"); a.target != "groq" {
		t.Errorf("small: served by %s, want groq (100ms < 500ms)", a.target)
	}
	if a := ask(t, g.url, "big"); a.target != "openai" {
		t.Errorf("big: served by %s, want openai (500ms < groq's 900ms)", a.target)
	}
}

// TestTrackerLearnsOnlyThroughSpans: a hand-built trace, consumed as a
// peer's, changes the order; nothing else told the router anything.
//
//	resource {service.instance.id: peer-1}
//	└── span "chat gpt-4o-mini"  CLIENT  firstbyte.target=openai  ttfb=0.05 s  status 200
//	└── span "chat llama-3.3-70b-versatile"  CLIENT  firstbyte.target=groq  ttfb=0.8 s  status 200
func TestTrackerLearnsOnlyThroughSpans(t *testing.T) {
	t.Parallel()
	clock, log := router.NewFakeClock(), &hitLog{}
	groq := startSimProvider(t, "groq", 300*time.Millisecond, clock, log)
	openai := startSimProvider(t, "openai", 600*time.Millisecond, clock, log)
	anthropic := startSimProvider(t, "anthropic", 900*time.Millisecond, clock, log)
	g := startLearningGateway(t, threeTargetConfig(groq, openai, anthropic), clock, &scriptRand{})
	for _, name := range []string{"groq", "openai", "anthropic"} {
		ask(t, g.url, "llama", router.HeaderProviderOrder, name)
	}
	if a := ask(t, g.url, "llama"); a.target != "groq" {
		t.Fatalf("before the peer's spans: served by %s, want groq", a.target)
	}

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.instance.id", "peer-1")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	addSpan := func(target, model string, ttfb float64, n int) {
		for range n {
			s := spans.AppendEmpty()
			s.SetName("chat " + model)
			s.SetKind(ptrace.SpanKindClient)
			end := clock.Now()
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-time.Second)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
			s.Attributes().PutStr("firstbyte.target", target)
			s.Attributes().PutStr("gen_ai.request.model", model)
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			s.Attributes().PutInt("http.response.status_code", 200)
			s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", ttfb)
		}
	}
	addSpan("openai", "gpt-4o-mini", 0.05, 5)
	addSpan("groq", "llama-3.3-70b-versatile", 0.8, 5)
	if err := g.agg.ConsumePeerTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if a := ask(t, g.url, "llama"); a.target != "openai" || a.selection != "leader" {
		t.Errorf("after the peer's spans: served by %s (%s), want openai (leader)", a.target, a.selection)
	}
}

// TestConcurrentRequestsRaceFree runs many requests at once through the
// learning path with the real clock and random source (run under -race).
func TestConcurrentRequestsRaceFree(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
	up2 := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
	tracker := collector.NewTracker(collector.TrackerOptions{})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{Aggregator: agg, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	gw := newGatewayWith(t, "least-latency", "", router.Options{Stats: tracker, TracerProvider: sdk.TracerProvider, Rand: rand.New(&lockedSource{src: rand.NewPCG(1, 2)})},
		target{name: "a", url: up.URL}, target{name: "b", url: up2.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	var wg sync.WaitGroup
	var failures atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatBody))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of 320 concurrent requests failed", n)
	}
	// Each client's last sample is recorded right after its answer is
	// flushed: wait for the windows to be what 320 samples make them.
	var na, nb int
	router.WaitUntil(t, "the last clients' samples", func() bool {
		_, na, _ = liveP50(tracker, time.Now(), "a", "m")
		_, nb, _ = liveP50(tracker, time.Now(), "b", "m")
		return max(na, nb) == 100 && min(na, nb) >= 10
	})
	// 320 successes: the leader's window is full (100) and the runner-up
	// was explored about one request in ten.
	if max(na, nb) != 100 || min(na, nb) < 10 {
		t.Errorf("live samples a=%d b=%d, want the leader's window full and the runner-up explored", na, nb)
	}
}

// lockedSource makes a seeded PCG safe for concurrent requests.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}
