//go:build integration

package main

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// exportEnv makes the gateway's batcher export every 100 ms and give up on
// an export after 1 s, so a test sees spans (and failed exports) quickly.
var exportEnv = []string{"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_EXPORTER_OTLP_TIMEOUT=1000"}

// otlpFixture is the set-up of the OTLP tests: two healthy providers serving
// m1, and m-failover served by a provider that always answers 503 and, after
// it, by alpha.
type otlpFixture struct {
	alpha, beta, broken *sim.Running
}

func newOTLPFixture(t *testing.T) *otlpFixture {
	t.Helper()
	return &otlpFixture{
		alpha:  startSimProvider(t, sim.Provider{Name: "alpha", TTFB: sim.Fixed(10 * time.Millisecond), Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond}}),
		beta:   startSimProvider(t, sim.Provider{Name: "beta", TTFB: sim.Fixed(15 * time.Millisecond), Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond}}),
		broken: startSimProvider(t, sim.Provider{Name: "broken", TTFB: sim.Fixed(2 * time.Millisecond), Errors: sim.ErrorRate{Rate: 1, Status: http.StatusServiceUnavailable}}),
	}
}

// config is the gateway config exporting over OTLP to endpoint.
func (f *otlpFixture) config(endpoint string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  alpha:  {kind: openai, base_url: %q, api_key: test-key}
  beta:   {kind: openai, base_url: %q, api_key: test-key}
  broken: {kind: openai, base_url: %q, api_key: test-key, circuit_breaker: {failures: 1000}}
targets:
  - {virtual_key: alpha,  model_map: {m1: alpha-model, m-failover: alpha-model}}
  - {virtual_key: beta,   model_map: {m1: beta-model}}
  - {virtual_key: broken, model_map: {m-failover: broken-model}}
telemetry:
  service_name: firstbyte-it
  otlp_endpoint: %q
`, f.alpha.URL(), f.beta.URL(), f.broken.URL(), endpoint)
}

func simPort(t *testing.T, r *sim.Running) int64 {
	t.Helper()
	_, port, _ := strings.Cut(r.Addr(), ":")
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("sim address %q: %v", r.Addr(), err)
	}
	return int64(n)
}

// waitForSpans waits until the sink holds at least servers SERVER and
// clients CLIENT spans of instance, and returns them all.
func waitForSpans(t *testing.T, sink *spanSink, instance string, servers, clients int) []sinkSpan {
	t.Helper()
	var spans []sinkSpan
	pollUntil(t, 15*time.Second, fmt.Sprintf("%d server and %d client spans at the sink", servers, clients), func() bool {
		spans = sink.spans(instance)
		return countKind(spans, ptrace.SpanKindServer) >= servers && countKind(spans, ptrace.SpanKindClient) >= clients
	})
	return spans
}

// TestOTLPExportToCollector: a real OpenTelemetry Collector receives the
// gateway's spans with the attempt span's attributes and the TTFB; stopped
// mid-run, requests still all succeed and the failed exports are counted.
//
//	client ─> firstbyte ─> alpha, beta, broken (sim)
//	              │ OTLP/HTTP
//	              v
//	      firstbyte-otelcol ─> sink
func TestOTLPExportToCollector(t *testing.T) {
	parallelTimed(t)
	f := newOTLPFixture(t)
	col, sink := startCollectorToSink(t)
	gw := startGatewayProc(t, "gateway", f.config("http://"+col.httpAddr), exportEnv...)

	// Requests: unary and streaming on m1, one continuing a trace, one that
	// fails over from broken to alpha.
	const (
		incomingTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
		incomingParent = "00f067aa0ba902b7"
	)
	for i := range 4 {
		if r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false)); r.status != http.StatusOK {
			t.Fatalf("unary request %d = %d, want 200: %s", i, r.status, r.body)
		}
	}
	for i := range 2 {
		r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", true))
		if r.status != http.StatusOK || !strings.Contains(r.body, "[DONE]") {
			t.Fatalf("stream %d = %d, want 200 ending in [DONE]: %s", i, r.status, r.body)
		}
	}
	r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false),
		"traceparent", "00-"+incomingTrace+"-"+incomingParent+"-01")
	if r.status != http.StatusOK {
		t.Fatalf("request with traceparent = %d, want 200: %s", r.status, r.body)
	}
	upstreamTraceparent := ""
	for _, s := range []*sim.Running{f.alpha, f.beta} {
		if h, _ := s.LastRequest(); h != nil && strings.Contains(h.Get("Traceparent"), incomingTrace) {
			upstreamTraceparent = h.Get("Traceparent")
		}
	}
	if upstreamTraceparent == "" {
		t.Errorf("no upstream received a traceparent with trace id %s", incomingTrace)
	}
	fo := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m-failover", false), "X-Firstbyte-Provider-Order", "broken,alpha")
	if fo.status != http.StatusOK || fo.target() != "alpha" || fo.header.Get("X-Firstbyte-Attempts") != "2" || fo.selection() != "manual" {
		t.Fatalf("failover request = %d target=%q attempts=%q selection=%q, want 200 alpha 2 manual: %s",
			fo.status, fo.target(), fo.header.Get("X-Firstbyte-Attempts"), fo.selection(), fo.body)
	}
	const requests, attempts = 8, 9

	spans := waitForSpans(t, sink, gw.instanceID, requests, attempts)
	checkExportedSpans(t, f, gw, spans, requests, attempts, incomingTrace, incomingParent)

	// The collector dies; the gateway must not notice on the request path.
	col.kill()
	before := len(sink.spans(gw.instanceID))
	var slowest time.Duration
	sent := 0
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", sent%3 == 0))
		sent++
		if r.status != http.StatusOK {
			t.Fatalf("request %d with the collector down = %d, want 200: %s", sent, r.status, r.body)
		}
		slowest = max(slowest, r.elapsed)
		if r.elapsed > time.Second {
			t.Errorf("request %d with the collector down took %v, want < 1s", sent, r.elapsed)
		}
		if sent >= 20 && scrapeMetric(t, gw.admin, "firstbyte_export_failures_total") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("firstbyte_export_failures_total still 0 after %d requests and 20s with the collector down", sent)
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("collector down: %d requests, all 200, slowest %v, export failures %v", sent, slowest,
		scrapeMetric(t, gw.admin, "firstbyte_export_failures_total"))
	if after := len(sink.spans(gw.instanceID)); after != before {
		t.Errorf("sink got %d spans after the collector was killed", after-before)
	}
	if code := gw.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("gateway exit code after SIGTERM with the collector down = %d, want 0", code)
	}
}

// checkExportedSpans checks the spans of TestOTLPExportToCollector against
// the attempt and server span vocabulary.
func checkExportedSpans(t *testing.T, f *otlpFixture, gw *gatewayProc, spans []sinkSpan, requests, attempts int, incomingTrace, incomingParent string) {
	t.Helper()
	if n := countKind(spans, ptrace.SpanKindServer); n != requests {
		t.Errorf("SERVER spans = %d, want %d (one per request)", n, requests)
	}
	if n := countKind(spans, ptrace.SpanKindClient); n != attempts {
		t.Errorf("CLIENT spans = %d, want %d (one per attempt)", n, attempts)
	}
	servers := map[pcommon.SpanID]sinkSpan{}
	children := map[pcommon.SpanID][]sinkSpan{}
	for _, s := range spans {
		if got := s.resStr("service.name"); got != "firstbyte-it" {
			t.Errorf("resource service.name = %q, want firstbyte-it", got)
		}
		if got := s.resStr("service.instance.id"); got == "" || got != gw.instanceID {
			t.Errorf("resource service.instance.id = %q, want %q (the id the gateway logged)", got, gw.instanceID)
		}
		switch s.span.Kind() {
		case ptrace.SpanKindServer:
			servers[s.span.SpanID()] = s
		case ptrace.SpanKindClient:
			children[s.span.ParentSpanID()] = append(children[s.span.ParentSpanID()], s)
		default:
			t.Errorf("span %q has kind %v, want SERVER or CLIENT", s.span.Name(), s.span.Kind())
		}
	}
	ports := map[string]int64{"alpha": simPort(t, f.alpha), "beta": simPort(t, f.beta), "broken": simPort(t, f.broken)}
	upstreamModel := map[string]string{"alpha": "alpha-model", "beta": "beta-model", "broken": "broken-model"}

	continued := false
	for id, srv := range servers {
		if srv.span.Name() != "POST /v1/chat/completions" {
			t.Errorf("server span name = %q, want %q", srv.span.Name(), "POST /v1/chat/completions")
		}
		if srv.span.TraceID().String() == incomingTrace {
			continued = true
			if got := srv.span.ParentSpanID().String(); got != incomingParent {
				t.Errorf("server span continuing the incoming trace: parent = %s, want %s", got, incomingParent)
			}
		}
		kids := children[id]
		if len(kids) == 0 {
			t.Errorf("server span %s (%s) has no CLIENT attempt span as child", id, srv.str("firstbyte.requested_model"))
			continue
		}
		sort.Slice(kids, func(i, j int) bool { return attemptNumber(kids[i]) < attemptNumber(kids[j]) })
		for i, k := range kids {
			if k.span.TraceID() != srv.span.TraceID() {
				t.Errorf("attempt span trace id %s, want its server span's %s", k.span.TraceID(), srv.span.TraceID())
			}
			checkAttemptSpan(t, k, ports, upstreamModel)
			if got := intAttr(t, k, "firstbyte.attempt"); got != int64(i+1) {
				t.Errorf("attempts of request %s: attempt %d has firstbyte.attempt %d", id, i+1, got)
			}
			if i > 0 && k.str("firstbyte.selection") != "failover" {
				t.Errorf("attempt %d of a request: firstbyte.selection = %q, want failover", i+1, k.str("firstbyte.selection"))
			}
		}
		if srv.str("firstbyte.requested_model") == "m-failover" {
			if len(kids) != 2 {
				t.Fatalf("failover request has %d attempt spans, want 2", len(kids))
			}
			first, second := kids[0], kids[1]
			if first.str("firstbyte.target") != "broken" || first.str("error.type") == "" || intAttr(t, first, "http.response.status_code") != 503 {
				t.Errorf("failover request attempt 1: target %q error.type %q status %d, want broken, set, 503",
					first.str("firstbyte.target"), first.str("error.type"), intAttr(t, first, "http.response.status_code"))
			}
			if first.str("firstbyte.selection") != "manual" {
				t.Errorf("failover request attempt 1: firstbyte.selection = %q, want manual", first.str("firstbyte.selection"))
			}
			if second.str("firstbyte.target") != "alpha" || second.str("firstbyte.selection") != "failover" {
				t.Errorf("failover request attempt 2: target %q selection %q, want alpha, failover",
					second.str("firstbyte.target"), second.str("firstbyte.selection"))
			}
		}
	}
	if !continued {
		t.Errorf("no server span has the incoming traceparent's trace id %s", incomingTrace)
	}
}

// attemptNumber is firstbyte.attempt, or 0 when it is missing or no Int.
func attemptNumber(s sinkSpan) int64 {
	if v, ok := s.attr("firstbyte.attempt"); ok && v.Type() == pcommon.ValueTypeInt {
		return v.Int()
	}
	return 0
}

func intAttr(t *testing.T, s sinkSpan, k string) int64 {
	t.Helper()
	v, ok := s.attr(k)
	if !ok {
		t.Errorf("span %q: no %s", s.span.Name(), k)
		return 0
	}
	if v.Type() != pcommon.ValueTypeInt {
		t.Errorf("span %q: %s is %v, want Int", s.span.Name(), k, v.Type())
		return 0
	}
	return v.Int()
}

// checkAttemptSpan checks one CLIENT attempt span's name and attributes.
func checkAttemptSpan(t *testing.T, s sinkSpan, ports map[string]int64, upstreamModel map[string]string) {
	t.Helper()
	target := s.str("firstbyte.target")
	want := map[string]string{
		"gen_ai.operation.name": "chat",
		"gen_ai.provider.name":  "openai",
		"gen_ai.request.model":  upstreamModel[target],
		"server.address":        "127.0.0.1",
	}
	for k, v := range want {
		if got := s.str(k); got != v {
			t.Errorf("attempt span (target %q) %s = %q, want %q", target, k, got, v)
		}
	}
	if _, ok := ports[target]; !ok {
		t.Errorf("attempt span firstbyte.target = %q, want one of alpha, beta, broken", target)
		return
	}
	if want := "chat " + upstreamModel[target]; s.span.Name() != want {
		t.Errorf("attempt span name = %q, want %q", s.span.Name(), want)
	}
	if got := intAttr(t, s, "server.port"); got != ports[target] {
		t.Errorf("attempt span (target %s) server.port = %d, want %d", target, got, ports[target])
	}
	if m := s.str("firstbyte.requested_model"); m != "m1" && m != "m-failover" {
		t.Errorf("attempt span firstbyte.requested_model = %q, want m1 or m-failover", m)
	}
	switch sel := s.str("firstbyte.selection"); sel {
	case "cold", "leader", "explore", "manual", "failover":
	default:
		t.Errorf("attempt span firstbyte.selection = %q, want one of the selection reasons", sel)
	}
	intAttr(t, s, "firstbyte.attempt")
	status := intAttr(t, s, "http.response.status_code")
	ttfb, hasTTFB := s.attr("gen_ai.response.time_to_first_chunk")
	switch {
	case status >= 200 && status < 300:
		switch {
		case !hasTTFB:
			t.Errorf("2xx attempt span (target %s) has no gen_ai.response.time_to_first_chunk", target)
		case ttfb.Type() != pcommon.ValueTypeDouble || ttfb.Double() <= 0:
			t.Errorf("2xx attempt span (target %s): gen_ai.response.time_to_first_chunk = %v (%v), want a double > 0", target, ttfb.AsRaw(), ttfb.Type())
		default:
			dur := s.span.EndTimestamp().AsTime().Sub(s.span.StartTimestamp().AsTime()).Seconds()
			if ttfb.Double() > dur+1e-6 || ttfb.Double() < 0.005 {
				t.Errorf("attempt span (target %s): TTFB %gs, want between the sims' 10ms and the span's %gs", target, ttfb.Double(), dur)
			}
		}
		if et := s.str("error.type"); et != "" {
			t.Errorf("2xx attempt span (target %s) has error.type %q", target, et)
		}
	default:
		if hasTTFB {
			t.Errorf("attempt span with status %d (target %s) carries a TTFB %v, want none", status, target, ttfb.AsRaw())
		}
		if s.str("error.type") == "" {
			t.Errorf("failed attempt span (status %d, target %s) has no error.type", status, target)
		}
	}
}

// TestOTLPSamplerOffStillLearns: with OTEL_TRACES_SAMPLER=always_off no span
// leaves the process, yet every attempt still teaches the tracker.
func TestOTLPSamplerOffStillLearns(t *testing.T) {
	t.Parallel()
	f := newOTLPFixture(t)
	col, sink := startCollectorToSink(t)
	off := startGatewayProc(t, "gateway-sampler-off", f.config("http://"+col.httpAddr), append(exportEnv, "OTEL_TRACES_SAMPLER=always_off")...)
	const requests = 6
	for i := range requests {
		if r := postAPI(t, off.api, "/v1/chat/completions", chatRequestBody("m1", i%2 == 0)); r.status != http.StatusOK {
			t.Fatalf("request %d = %d, want 200: %s", i, r.status, r.body)
		}
	}
	// The last answer's sample is recorded right after the answer is
	// flushed: it may land just after the client has it.
	pollUntil(t, 5*time.Second, "the last request's sample", func() bool {
		return totalSamples(modelRouting(t, off.admin, "m1")) >= requests
	})
	if got := totalSamples(modelRouting(t, off.admin, "m1")); got != requests {
		t.Errorf("/debug/routing samples for m1 with the sampler off = %d, want %d (one per attempt)", got, requests)
	}
	// A graceful stop flushes whatever the batcher holds.
	if code := off.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Fatalf("sampler-off gateway exit code = %d, want 0", code)
	}

	// Control: a gateway with the default sampler, through the same collector
	// afterwards; once its spans are at the sink, any of the first one's would
	// be too.
	on := startGatewayProc(t, "gateway-sampler-on", f.config("http://"+col.httpAddr), exportEnv...)
	if r := postAPI(t, on.api, "/v1/chat/completions", chatRequestBody("m1", false)); r.status != http.StatusOK {
		t.Fatalf("control request = %d, want 200: %s", r.status, r.body)
	}
	waitForSpans(t, sink, on.instanceID, 1, 1)
	if n := len(sink.spans(off.instanceID)); n != 0 {
		t.Errorf("the gateway with OTEL_TRACES_SAMPLER=always_off exported %d spans, want 0", n)
	}
}

// TestOTLPExportGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the spans to
// the collector's gRPC receiver.
func TestOTLPExportGRPC(t *testing.T) {
	t.Parallel()
	f := newOTLPFixture(t)
	col, sink := startCollectorToSink(t)
	gw := startGatewayProc(t, "gateway-grpc", f.config("http://"+col.grpcAddr), append(exportEnv, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc")...)
	for i := range 3 {
		if r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", i == 0)); r.status != http.StatusOK {
			t.Fatalf("request %d = %d, want 200: %s", i, r.status, r.body)
		}
	}
	spans := waitForSpans(t, sink, gw.instanceID, 3, 3)
	for _, s := range spans {
		if s.span.Kind() == ptrace.SpanKindClient && s.str("firstbyte.target") == "" {
			t.Errorf("attempt span %q over gRPC has no firstbyte.target", s.span.Name())
		}
	}
}
