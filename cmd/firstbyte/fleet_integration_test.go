//go:build integration

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// Bounds on the Node steps: a first npm ci downloads the SDK and the
// OpenTelemetry packages; the application itself makes 45 calls of at most
// 150 ms each.
const (
	npmCIWithin   = 5 * time.Minute
	nodeAppWithin = time.Minute
)

// nodeFleetDir is the Node application that calls providers directly.
func nodeFleetDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "clients", "node-fleet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the fleet test runs a Node 20+ application (`make test-integration` installs its packages with npm ci)", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, fs.ErrNotExist) {
		runNode(t, dir, npmCIWithin, childEnv(), "npm", "ci", "--no-audit", "--no-fund")
	}
	return dir
}

// runNode runs a command in dir with a time limit and returns its stdout;
// it fails the test with all its output if the command fails.
func runNode(t *testing.T, dir string, within time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		t.Fatalf("%s %v in %s: %v\nstdout:\n%s\nstderr:\n%s", name, args, dir, err, stdout.String(), stderr.String())
	}
	if s := stderr.String(); s != "" {
		t.Logf("%s %v stderr:\n%s", name, args, s)
	}
	return stdout.String()
}

// appSummary is what the Node application measured itself.
type appSummary struct {
	Service   string `json:"service"`
	Providers map[string]struct {
		Calls    int     `json:"calls"`
		MedianMS float64 `json:"median_ms"`
	} `json:"providers"`
}

// TestFleetAppTeachesAnIdleGateway is learning from the fleet with real
// parts: a Node application using the official openai client, traced by
// @opentelemetry/instrumentation-openai and the OpenTelemetry JS SDK, calls
// three providers directly (unary chat completions; medians 20, 60 and 150
// ms) and exports OTLP/protobuf to the real collector running the shipped
// collector/otelcol/config/fleet.yaml. The collector sends every span on to
// a gateway that has served nothing (its exporter "a") and to a sink (its
// exporter "b"), where the test reads the spans as the gateway got them.
// The gateway's first request must be led to the application's fastest
// provider, on the application's measurements alone.
//
//	node app ──> slow, medium, fast (sim)      gateway ──> slow, medium, fast
//	   │ OTLP/HTTP                              ^ /v1/traces
//	   v                                        │
//	firstbyte-otelcol (fleet.yaml) ──── a ──────┘
//	                               └─── b ──> sink (the spans, recorded)
func TestFleetAppTeachesAnIdleGateway(t *testing.T) {
	parallelTimed(t)
	dir := nodeFleetDir(t)
	pace := sim.Pace{Chunks: 1} // a unary answer takes the TTFB only
	providers := []sim.Provider{
		{Name: "slow", TTFB: sim.Dist{Median: 150 * time.Millisecond, Spread: 0.1}, Stream: pace},
		{Name: "medium", TTFB: sim.Dist{Median: 60 * time.Millisecond, Spread: 0.1}, Stream: pace},
		{Name: "fast", TTFB: sim.Dist{Median: 20 * time.Millisecond, Spread: 0.1}, Stream: pace},
	}
	running := map[string]*sim.Running{}
	for _, p := range providers {
		running[p.Name] = startSimProvider(t, p)
	}
	const (
		token = "it-ingest-token"
		app   = "checkout"
		model = "gpt-4o-mini" // every provider serves it: only the port tells them apart
		calls = 15
	)

	// fleet.yaml reads the collector's and the gateway's addresses from the
	// environment, and the gateway exports to the collector too, as in a
	// fleet: so the addresses are chosen first.
	grpcAddr, httpAddr := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
	adminAddr := loopbackAddr(freeLoopbackPort(t))
	// slow is declared first so that declaration order cannot pass for ranking.
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: %s}
providers:
  slow:   {kind: openai, base_url: %q, api_key: test-key}
  medium: {kind: openai, base_url: %q, api_key: test-key}
  fast:   {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: slow,   model_map: {m1: %[5]s}}
  - {virtual_key: medium, model_map: {m1: %[5]s}}
  - {virtual_key: fast,   model_map: {m1: %[5]s}}
telemetry:
  otlp_endpoint: http://%[6]s
  ingest:
    enabled: true
    token: %[7]s
    # The Node OpenAI instrumentation does not say whether a call streamed:
    # the application is listed as one that never does.
    foreign: {enabled: true, services: [%[8]s], unary_services: [%[8]s]}
`, adminAddr, running["slow"].URL(), running["medium"].URL(), running["fast"].URL(), model, httpAddr, token, app), exportEnv...)

	sink := newSpanSink(t)
	fleet, err := filepath.Abs(filepath.Join("..", "..", "collector", "otelcol", "config", "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	startCollector(t, grpcAddr, httpAddr, "file:"+fleet,
		"FIRSTBYTE_A_ADMIN="+gw.admin,
		"FIRSTBYTE_B_ADMIN="+strings.TrimPrefix(sink.url, "http://"),
		"FIRSTBYTE_INGEST_TOKEN="+token,
	)

	if ts, _ := foreignState(t, gw.admin, "m1"); totalForeignSamples(ts) != 0 {
		t.Fatalf("the gateway knows %+v before the application ran, want nothing", ts)
	}

	// The application, with the standard OpenTelemetry environment.
	type entry struct {
		Name    string `json:"name"`
		BaseURL string `json:"base_url"`
		Model   string `json:"model"`
	}
	var list []entry
	for _, p := range providers {
		list = append(list, entry{p.Name, running[p.Name].URL(), model})
	}
	listJSON, _ := json.Marshal(list)
	start := time.Now()
	out := runNode(t, dir, nodeAppWithin, childEnv(
		"OTEL_SERVICE_NAME="+app,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+httpAddr,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=200",
		"FLEET_PROVIDERS="+string(listJSON),
		fmt.Sprintf("FLEET_CALLS=%d", calls),
		"NO_COLOR=1",
	), "node", "app.cjs")
	t.Logf("node app.cjs (%v): %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	var measured appSummary
	if err := json.Unmarshal([]byte(out), &measured); err != nil {
		t.Fatalf("the application's summary %q: %v", out, err)
	}

	// Every call reaches the gateway through the collector as a foreign sample.
	var ts map[string]foreignTarget
	var services map[string]int64
	pollUntil(t, 15*time.Second, fmt.Sprintf("%d foreign samples per target", calls), func() bool {
		ts, services = foreignState(t, gw.admin, "m1")
		return totalForeignSamples(ts) >= 3*calls
	})
	for _, p := range providers {
		s := ts[p.Name]
		if s.foreign != calls || s.samples != calls || s.self != 0 || s.peers != 0 {
			t.Errorf("%s: samples %d (self %d, peers %d, foreign %d), want %d, all foreign", p.Name, s.samples, s.self, s.peers, s.foreign, calls)
		}
		// The sample is the span's duration, which the application's own
		// clock around the same call agrees with.
		own := time.Duration(measured.Providers[p.Name].MedianMS * float64(time.Millisecond))
		if diff := (s.p50 - own).Abs(); diff > 5*time.Millisecond+own/5 {
			t.Errorf("%s: the gateway's p50 %v, the application's own median %v: want them within 20%% + 5ms", p.Name, s.p50, own)
		}
		t.Logf("%s: TTFB median %v, the application measured %v, the gateway learned p50 %v from %d foreign samples",
			p.Name, p.TTFB.Median, own, s.p50, s.foreign)
	}
	if !(ts["fast"].p50 < ts["medium"].p50 && ts["medium"].p50 < ts["slow"].p50) {
		t.Errorf("p50s fast %v, medium %v, slow %v: want ascending", ts["fast"].p50, ts["medium"].p50, ts["slow"].p50)
	}
	if !ts["fast"].leader || ts["fast"].rank != 1 {
		t.Errorf("/debug/routing: fast rank %d leader %v, want rank 1, the leader", ts["fast"].rank, ts["fast"].leader)
	}
	if services[app] != 3*calls || len(services) != 1 {
		t.Errorf("/debug/routing foreign_services = %v, want only %s: %d", services, app, 3*calls)
	}
	if n := scrapeMetric(t, gw.admin, "firstbyte_spans_consumed_total", `source="foreign"`); n != 3*calls {
		t.Errorf(`firstbyte_spans_consumed_total{source="foreign"} = %v, want %d`, n, 3*calls)
	}

	checkRecordedSpans(t, sink, app, calls, running)

	// The gateway's first request, led by what the application measured.
	if sel := firstRequestLeads(t, gw, "m1", "fast"); sel != "leader" {
		t.Logf("the first request's selection was %s", sel)
	}
}

func totalForeignSamples(ts map[string]foreignTarget) int {
	n := 0
	for _, s := range ts {
		n += s.foreign
	}
	return n
}

// checkRecordedSpans reads the application's spans as the collector sent
// them on, logs one in full (what docs/fleet.md tabulates), and checks that
// each has exactly the shape of the jsChatSpan fixture that
// TestForeignSpansShapedLikeNodeApp posts.
func checkRecordedSpans(t *testing.T, sink *spanSink, app string, calls int, running map[string]*sim.Running) {
	t.Helper()
	var spans []sinkSpan
	pollUntil(t, 10*time.Second, "the application's spans at the sink", func() bool {
		spans = spans[:0]
		for _, s := range sink.spans("") {
			if s.resStr("service.name") == app {
				spans = append(spans, s)
			}
		}
		return len(spans) >= 3*calls
	})
	if len(spans) != 3*calls {
		t.Errorf("the sink got %d spans from %s, want %d (one per call)", len(spans), app, 3*calls)
	}
	t.Logf("one of %s's spans, as the gateway got it:\n%s", app, describeSpan(spans[0]))

	fixture := ptrace.NewTraces()
	jsChatSpan(jsResourceSpans(fixture, app), 1, "m", time.Now(), time.Millisecond, "", 1)
	want := fixture.ResourceSpans().At(0)
	wantSpan := want.ScopeSpans().At(0).Spans().At(0)
	ports := map[int64]bool{}
	for _, r := range running {
		ports[simPort(t, r)] = true
	}
	for i, s := range spans {
		if got, w := attrShape(s.res.Attributes()), attrShape(want.Resource().Attributes()); got != w {
			t.Errorf("span %d: resource attributes %s, want %s", i, got, w)
		}
		if s.scope.Name() != jsScopeName || s.scope.Version() != jsScopeVersion {
			t.Errorf("span %d: scope %s %s, want %s %s", i, s.scope.Name(), s.scope.Version(), jsScopeName, jsScopeVersion)
		}
		if got, w := attrShape(s.span.Attributes()), attrShape(wantSpan.Attributes()); got != w {
			t.Errorf("span %d: attributes %s\nwant (jsChatSpan) %s", i, got, w)
		}
		if s.span.Kind() != ptrace.SpanKindClient || s.span.Status().Code() != ptrace.StatusCodeUnset || s.span.Name() != "chat gpt-4o-mini" {
			t.Errorf("span %d: %q kind %v status %v, want \"chat gpt-4o-mini\" CLIENT, status unset", i, s.span.Name(), s.span.Kind(), s.span.Status().Code())
		}
		if s.str("gen_ai.system") != "openai" || s.str("server.address") != "127.0.0.1" || s.str("gen_ai.request.model") != "gpt-4o-mini" {
			t.Errorf("span %d: gen_ai.system %q, server.address %q, gen_ai.request.model %q; want openai, 127.0.0.1, gpt-4o-mini",
				i, s.str("gen_ai.system"), s.str("server.address"), s.str("gen_ai.request.model"))
		}
		if p, ok := s.attr("server.port"); !ok || p.Type() != pcommon.ValueTypeInt || !ports[p.Int()] {
			t.Errorf("span %d: server.port %v, want one of the providers' ports %v", i, p.AsRaw(), ports)
		}
	}
}

// describeSpan prints a span the way the collector's debug exporter does,
// attributes sorted.
func describeSpan(s sinkSpan) string {
	var b strings.Builder
	line := func(k string, v pcommon.Value) { fmt.Fprintf(&b, "    %s: %s(%s)\n", k, v.Type(), v.AsString()) }
	b.WriteString("  resource:\n")
	res := sortedAttrs(s.res.Attributes())
	for _, k := range res {
		v, _ := s.res.Attributes().Get(k)
		line(k, v)
	}
	fmt.Fprintf(&b, "  scope: %s %s\n", s.scope.Name(), s.scope.Version())
	fmt.Fprintf(&b, "  span: %q kind %s status %s, %v\n", s.span.Name(), s.span.Kind(), s.span.Status().Code(),
		s.span.EndTimestamp().AsTime().Sub(s.span.StartTimestamp().AsTime()))
	for _, k := range sortedAttrs(s.span.Attributes()) {
		v, _ := s.span.Attributes().Get(k)
		line(k, v)
	}
	return b.String()
}

func sortedAttrs(m pcommon.Map) []string {
	var ks []string
	for k := range m.All() {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
