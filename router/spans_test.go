package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

func attrMap(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// TestAttemptSpans: one SERVER span per request continuing the incoming
// traceparent, one CLIENT span per attempt with exactly the attempt span's
// attributes; TTFB only on the 2xx attempt; later attempts say failover.
func TestAttemptSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	a := newUpstream(t, jsonAnswer(503, `{}`))
	b := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
	gw := newGatewayWith(t, "fallback", "", router.Options{TracerProvider: tp},
		target{name: "a", url: a.URL, upstream: "up-a"}, target{name: "b", url: b.URL, upstream: "up-b"})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody, "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	readAll(t, resp.Body)
	// The answer leaves before the server span ends: wait for it.
	spans := waitForSpans(t, exp, 3)
	var server tracetest.SpanStub
	var attempts []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %q trace id %s, want the incoming %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
		switch s.SpanKind {
		case trace.SpanKindServer:
			server = s
		case trace.SpanKindClient:
			attempts = append(attempts, s)
		}
	}
	if server.Name != "POST /v1/chat/completions" || server.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("server span %q parent %s, want it to continue the incoming span", server.Name, server.Parent.SpanID())
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(attempts))
	}
	want := []map[string]any{
		{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "up-a",
			"server.address": "127.0.0.1", "http.response.status_code": int64(503), "error.type": "503",
			"firstbyte.target": "a", "firstbyte.requested_model": "m", "firstbyte.attempt": int64(1),
			"firstbyte.selection": "order", "firstbyte.outcome": "failover",
			"firstbyte.inflight": int64(1), "firstbyte.inflight_at_end": int64(0)},
		{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "up-b",
			"server.address": "127.0.0.1", "http.response.status_code": int64(200),
			"firstbyte.target": "b", "firstbyte.requested_model": "m", "firstbyte.attempt": int64(2),
			"firstbyte.selection": "failover", "firstbyte.outcome": "success",
			"firstbyte.inflight": int64(1), "firstbyte.inflight_at_end": int64(0)},
	}
	for i, s := range attempts {
		if wantName := "chat up-" + string(rune('a'+i)); s.Name != wantName {
			t.Errorf("attempt %d name %q, want %q", i+1, s.Name, wantName)
		}
		if s.Parent.SpanID() != server.SpanContext.SpanID() {
			t.Errorf("attempt %d is not a child of the server span", i+1)
		}
		got := attrMap(s.Attributes)
		for k, w := range want[i] {
			if v, ok := got[k]; !ok || v.AsInterface() != w {
				t.Errorf("attempt %d %s = %v, want %v", i+1, k, v.AsInterface(), w)
			}
		}
		if _, ok := got["server.port"]; !ok {
			t.Errorf("attempt %d has no server.port", i+1)
		}
		ttfb, hasTTFB := got["gen_ai.response.time_to_first_chunk"]
		if i == 0 && hasTTFB {
			t.Errorf("failed attempt carries a TTFB")
		}
		if i == 1 && (!hasTTFB || ttfb.Type() != attribute.FLOAT64 || ttfb.AsFloat64() <= 0) {
			t.Errorf("successful attempt TTFB = %v, want a positive double", ttfb.AsInterface())
		}
	}
	// The upstream got a traceparent continuing the attempt span.
	_, hdr := b.last()
	if tp := hdr.Get("traceparent"); !strings.Contains(tp, traceID) || !strings.Contains(tp, attempts[1].SpanContext.SpanID().String()) {
		t.Errorf("upstream traceparent = %q, want trace %s and the attempt's span id", tp, traceID)
	}
}

// waitForSpans waits (boundedly) until exp holds n spans.
func waitForSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	t.Helper()
	router.WaitUntil(t, strconv.Itoa(n)+" spans", func() bool { return len(exp.GetSpans()) >= n })
	spans := exp.GetSpans()
	if len(spans) != n {
		t.Fatalf("got %d spans, want %d", len(spans), n)
	}
	return spans
}

// TestSamplingNeverHidesAttempts: with export sampling off, nothing is
// exported, yet the tracker learns from every attempt.
func TestSamplingNeverHidesAttempts(t *testing.T) {
	t.Parallel()
	tracker := collector.NewTracker(collector.TrackerOptions{})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		Aggregator: agg,
		Getenv: func(k string) string {
			return map[string]string{"OTEL_TRACES_SAMPLER": "always_off"}[k]
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	exp := tracetest.NewInMemoryExporter()
	sdk.TracerProvider.RegisterSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp))

	up := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGatewayWith(t, "least-latency", "", router.Options{Stats: tracker, TracerProvider: sdk.TracerProvider}, target{name: "a", url: up.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	for range 3 {
		post(t, srv.URL, "/v1/chat/completions", chatBody)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported with always_off, want 0", n)
	}
	// The attempt span ends, and the tracker records, right after the
	// answer is flushed: the third sample may land just after the client
	// has its answer.
	router.WaitUntil(t, "the tracker's third sample", func() bool {
		_, n, _ := liveP50(tracker, time.Now(), "a", "m")
		return n >= 3
	})
	if _, n, _ := liveP50(tracker, time.Now(), "a", "m"); n != 3 {
		t.Errorf("tracker has %d samples, want 3: export sampling must not hide attempts", n)
	}
}

func TestSetupHonoursEnvironment(t *testing.T) {
	env := map[string]string{
		"OTEL_SERVICE_NAME":        "edge-gw",
		"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test,service.instance.id=gw%2D7",
	}
	t.Setenv("OTEL_SERVICE_NAME", env["OTEL_SERVICE_NAME"])
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", env["OTEL_RESOURCE_ATTRIBUTES"])
	getenv := func(k string) string { return env[k] }
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "firstbyte", Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	got := map[string]string{}
	for _, kv := range sdk.Resource.Attributes() {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	for k, w := range map[string]string{"service.name": "edge-gw", "service.instance.id": "gw-7", "deployment.environment.name": "test"} {
		if got[k] != w {
			t.Errorf("resource %s = %q, want %q", k, got[k], w)
		}
	}
	if sdk.InstanceID != "gw-7" {
		t.Errorf("instance id = %q, want gw-7 from OTEL_RESOURCE_ATTRIBUTES (percent-decoded, as the SDK's resource has it)", sdk.InstanceID)
	}
	if sdk.Exporting {
		t.Errorf("exporting without an endpoint")
	}
	if _, _, err := telemetry.Setup(context.Background(), telemetry.Options{Getenv: func(k string) string {
		return map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}[k]
	}}); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_SAMPLER") {
		t.Errorf("bad sampler: err = %v, want one naming OTEL_TRACES_SAMPLER", err)
	}
}

// TestAnthropicMessages: /v1/messages goes to anthropic-kind targets with
// the provider key as x-api-key, streaming and unary, and errors come back
// in Anthropic's shape.
func TestAnthropicMessages(t *testing.T) {
	t.Parallel()
	up, err := sim.StartProvider(sim.Provider{Name: "claude", Stream: sim.Pace{Chunks: 3}}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	cfg := `
providers:
  claude: {kind: anthropic, base_url: "` + up.URL() + `", api_key: sk-ant-test, models: [claude-x]}
targets: [{virtual_key: claude}]
`
	parsed, err := config.Parse([]byte(cfg), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(parsed, router.Options{Stats: collector.NewTracker(collector.TrackerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	resp := post(t, srv.URL, "/v1/messages", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	var msg struct{ Type, Model string }
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || resp.StatusCode != 200 || msg.Type != "message" {
		t.Fatalf("unary: status %d, %+v, %v", resp.StatusCode, msg, err)
	}
	hdr, _ := up.LastRequest()
	if hdr.Get("x-api-key") != "sk-ant-test" || hdr.Get("Authorization") != "" || hdr.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("upstream headers: x-api-key %q, Authorization %q, anthropic-version %q", hdr.Get("x-api-key"), hdr.Get("Authorization"), hdr.Get("anthropic-version"))
	}
	stream := readAll(t, post(t, srv.URL, "/v1/messages", `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if !strings.Contains(stream, "event: message_start") || !strings.HasSuffix(strings.TrimSpace(stream), `{"type":"message_stop"}`) {
		t.Errorf("stream did not pass through whole: %q", stream)
	}
	count := readAll(t, post(t, srv.URL, "/v1/messages/count_tokens", `{"model":"claude-x","messages":[]}`).Body)
	if hdr, _ := up.LastRequest(); hdr.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("a client that names no anthropic-version: upstream got %q, want the default 2023-06-01", hdr.Get("anthropic-version"))
	}
	if !strings.Contains(count, "input_tokens") {
		t.Errorf("count_tokens = %s", count)
	}
	resp = post(t, srv.URL, "/v1/messages", `{"model":"gpt-4o"}`)
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 404 || e.Type != "error" || e.Error.Type != "not_found_error" {
		t.Errorf("unknown model on /v1/messages: %d %+v, want 404 in Anthropic's shape", resp.StatusCode, e)
	}
	// Chat completions reach an anthropic target too, translated; the
	// OpenAI-only endpoints do not.
	resp = post(t, srv.URL, "/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`)
	var chat struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&chat); err != nil || resp.StatusCode != 200 || chat.Object != "chat.completion" || len(chat.Choices) != 1 {
		t.Errorf("chat/completions for an anthropic-only model: %d %+v (%v), want a translated chat completion", resp.StatusCode, chat, err)
	}
	if resp := post(t, srv.URL, "/v1/embeddings", `{"model":"claude-x","input":"hi"}`); resp.StatusCode != 404 {
		t.Errorf("embeddings for an anthropic-only model: %d, want 404", resp.StatusCode)
	}
}

func TestDebugRouting(t *testing.T) {
	t.Parallel()
	clock := router.NewFakeClock()
	log := &hitLog{}
	fast := startSimProvider(t, "fast", 100e6, clock, log)
	slow := startSimProvider(t, "slow", 500e6, clock, log)
	cold := startSimProvider(t, "cold", 1e6, clock, log)
	g := startLearningGateway(t, `
providers:
  fast: {base_url: "`+fast.srv.URL+`/v1"}
  slow: {base_url: "`+slow.srv.URL+`/v1"}
  cold: {base_url: "`+cold.srv.URL+`/v1"}
targets:
  - {virtual_key: slow, model_map: {m: m}}
  - {virtual_key: fast, model_map: {m: m}}
  - {virtual_key: cold, model_map: {m: m}}
`, clock, &scriptRand{})
	ask(t, g.url, "m", router.HeaderProviderOrder, "slow")
	ask(t, g.url, "m", router.HeaderProviderOrder, "fast")
	type routingPage struct {
		Mode   string
		Models []routingview.Model
	}
	read := func() (page routingPage) {
		rec := httptest.NewRecorder()
		g.gw.RoutingHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/routing", nil))
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		return page
	}
	// The attempt span ends, and the tracker records, right after the
	// answer is flushed: wait for both samples.
	router.WaitUntil(t, "both samples", func() bool {
		n := 0
		for _, m := range read().Models {
			for _, tr := range m.Targets {
				n += tr.Samples
			}
		}
		return n == 2
	})
	clock.Advance(30e9)

	page := read()
	if page.Mode != "least-latency" || len(page.Models) != 1 {
		t.Fatalf("page = %+v", page)
	}
	byName := map[string]routingview.Target{}
	for _, tr := range page.Models[0].Targets {
		byName[tr.Target] = tr
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"cold rank", byName["cold"].Rank, 1},
		{"fast rank", byName["fast"].Rank, 2},
		{"slow rank", byName["slow"].Rank, 3},
		{"fast leader", byName["fast"].Leader, true},
		{"slow leader", byName["slow"].Leader, false},
		{"fast p50", byName["fast"].P50Seconds, 0.1},
		{"slow samples", byName["slow"].Samples, 1},
		{"cold samples", byName["cold"].Samples, 0},
		{"fast oldest age", byName["fast"].OldestSampleAgeS, 30.0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// blockedConsumer stands for slow telemetry (metrics, export): it blocks
// every span until released.
type blockedConsumer struct{ release chan struct{} }

func (b blockedConsumer) ConsumeTraces(context.Context, ptrace.Traces) error {
	<-b.release
	return nil
}

// TestTelemetryIsOffTheClientsPath: with everything telemetry does besides
// the tracker stuck, a client still gets whole answers, and the tracker has
// learned from each before the next request on the connection is ordered:
// the answer is flushed before the attempt span ends, but the handler
// records it before it returns, and only then does the server read the
// connection's next request.
func TestTelemetryIsOffTheClientsPath(t *testing.T) {
	t.Parallel()
	tracker := collector.NewTracker(collector.TrackerOptions{})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{})
	stuck := blockedConsumer{release: make(chan struct{})}
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		Aggregator: agg, Observers: stuck, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(stuck.release)
		_ = shutdown(context.Background())
	}()
	var mu sync.Mutex
	var known []int // the samples the tracker held as each request reached the upstream
	answer := jsonAnswer(200, `{"ok":true}`)
	unary := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, n, _ := liveP50(tracker, time.Now(), "a", "m")
		mu.Lock()
		known = append(known, n)
		mu.Unlock()
		answer(w, r)
	})
	gw := newGatewayWith(t, "least-latency", "", router.Options{Stats: tracker, TracerProvider: sdk.TracerProvider}, target{name: "a", url: unary.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	transport := &http.Transport{MaxConnsPerHost: 1} // one connection: each request follows the last answer on it
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 5 * time.Second, Transport: transport}
	const requests = 4
	for i := range requests {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatBody))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d with telemetry stuck: %v", i+1, err)
		}
		if body := readAll(t, resp.Body); body != `{"ok":true}` {
			t.Fatalf("request %d: body %q", i+1, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(known) != requests {
		t.Fatalf("the upstream saw %d requests, want %d", len(known), requests)
	}
	for i, n := range known {
		if n != i {
			t.Errorf("request %d reached the upstream with %d samples in the tracker, want %d: routing must learn from an answer before the connection's next request", i+1, n, i)
		}
	}
}
