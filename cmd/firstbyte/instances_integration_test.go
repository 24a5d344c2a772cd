//go:build integration

package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSeveralInstancesShareTheRanking is several instances sharing one ranking, with the shipped
// collector/otelcol/config/fanout.yaml: two gateways export to one
// collector, which sends every span to both instances' admin /v1/traces.
// Traffic goes through A only; B learns A's ranking from A's spans, A skips
// its own spans coming back, and B, restarted, learns it again.
//
//	client ─> A ──OTLP──> otelcol (fanout.yaml) ──/v1/traces──> A (skips its own)
//	          B ──OTLP──┘                        └─/v1/traces──> B (learns)
func TestSeveralInstancesShareTheRanking(t *testing.T) {
	parallelTimed(t)
	fast := startSimProvider(t, sim.Provider{Name: "fast", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: 1}})
	slow := startSimProvider(t, sim.Provider{Name: "slow", TTFB: sim.Fixed(40 * time.Millisecond), Stream: sim.Pace{Chunks: 1}})

	const token = "it-ingest-token"
	// fanout.yaml reads the collector's ports and both instances' admin
	// addresses from the environment, so they are chosen first; B restarts
	// on its own admin address, where the collector keeps sending.
	grpcAddr, httpAddr := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
	adminA, adminB := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
	// The collector keeps a connection to each instance's ingest; with no
	// spans to send it sits idle, and a draining instance keeps it open for
	// the next export until the grace ends: a short grace keeps B's restart
	// short.
	config := func(admin string) string {
		return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: %s}
shutdown: {grace: 2s}
providers:
  fast: {kind: openai, base_url: %q, api_key: test-key}
  slow: {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: fast, model_map: {m1: fast-model}}
  - {virtual_key: slow, model_map: {m1: slow-model}}
telemetry:
  otlp_endpoint: http://%s
  ingest: {enabled: true, token: %s}
`, admin, fast.URL(), slow.URL(), httpAddr, token)
	}
	// A names its instance in the environment, percent-encoded as the
	// OTel spec allows: it must skip exactly the decoded id its spans carry.
	a := startGatewayProc(t, "gateway-a", config(adminA), slices.Concat(exportEnv, []string{"OTEL_RESOURCE_ATTRIBUTES=service.instance.id=gw%2Da"})...)
	if a.instanceID != "gw-a" {
		t.Errorf("A's instance id = %q, want gw-a (decoded from OTEL_RESOURCE_ATTRIBUTES)", a.instanceID)
	}
	b := startGatewayProc(t, "gateway-b", config(adminB), exportEnv...)

	fanout, err := filepath.Abs(filepath.Join("..", "..", "collector", "otelcol", "config", "fanout.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	startCollector(t, grpcAddr, httpAddr, "file:"+fanout,
		"FIRSTBYTE_A_ADMIN="+adminA,
		"FIRSTBYTE_B_ADMIN="+adminB,
		"FIRSTBYTE_INGEST_TOKEN="+token,
	)

	drive := func(n int) {
		t.Helper()
		for i := range n {
			if r := postAPI(t, a.api, "/v1/chat/completions", chatRequestBody("m1", i%2 == 1)); r.status != http.StatusOK {
				t.Fatalf("request %d through A = %d, want 200: %s", i, r.status, r.body)
			}
		}
	}
	// learnsFromA waits until inst's ranking of m1 has as many samples per
	// target as A's and the same leader.
	learnsFromA := func(inst *gatewayProc) {
		t.Helper()
		want := modelRouting(t, a.admin, "m1")
		if leaderOf(want) != "fast" {
			t.Fatalf("A's leader for m1 = %q, want fast: %+v", leaderOf(want), want)
		}
		var got map[string]targetState
		pollUntil(t, 10*time.Second, inst.name+" learning A's ranking through the collector", func() bool {
			got = modelRouting(t, inst.admin, "m1")
			return got["fast"].samples == want["fast"].samples && got["slow"].samples == want["slow"].samples
		})
		if leaderOf(got) != leaderOf(want) {
			t.Errorf("%s's leader = %q, want A's %q (B: %+v, A: %+v)", inst.name, leaderOf(got), leaderOf(want), got, want)
		}
		if peer := scrapeMetric(t, inst.admin, "firstbyte_spans_consumed_total", `source="peer"`); peer == 0 {
			t.Errorf(`%s firstbyte_spans_consumed_total{source="peer"} = 0, want > 0`, inst.name)
		}
	}

	drive(20)
	// The last answer's sample is recorded right after the answer is
	// flushed: it may land just after the client has it.
	var samplesA map[string]targetState
	pollUntil(t, 5*time.Second, "A's last sample", func() bool {
		samplesA = modelRouting(t, a.admin, "m1")
		return totalSamples(samplesA) >= 20
	})
	if got := totalSamples(samplesA); got != 20 {
		t.Fatalf("A's samples for m1 after 20 requests = %d, want 20", got)
	}
	learnsFromA(b)
	// A's spans have made the round trip to A too (B got the same
	// batches). To know A has been handed everything sent before now, send
	// the collector a span of another instance that names a target nobody
	// routes to, and wait until A has counted it rejected: then A took
	// none of its own.
	postOTLP(t, httpAddr, "", markerTrace())
	pollUntil(t, 10*time.Second, "A rejecting the marker span the collector sent after A's own", func() bool {
		return scrapeMetric(t, a.admin, "firstbyte_ingest_rejected_total", `reason="unknown_target"`) == 1
	})
	if peer := scrapeMetric(t, a.admin, "firstbyte_spans_consumed_total", `source="peer"`); peer != 0 {
		t.Errorf(`A firstbyte_spans_consumed_total{source="peer"} = %v, want 0 (its own spans are skipped)`, peer)
	}
	if got := modelRouting(t, a.admin, "m1"); got["fast"].samples != samplesA["fast"].samples || got["slow"].samples != samplesA["slow"].samples {
		t.Errorf("A's samples changed from %+v to %+v with no traffic: it learned from its own spans", samplesA, got)
	}

	// B restarts on the same admin address: it starts knowing nothing, then
	// learns again from A's next spans.
	if code := b.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("B exit code = %d, want 0", code)
	}
	b2 := startGatewayProc(t, "gateway-b-restarted", config(adminB), exportEnv...)
	if got := totalSamples(modelRouting(t, b2.admin, "m1")); got != 0 {
		t.Errorf("restarted B has %d samples before any new traffic, want 0", got)
	}
	drive(10)
	// A now has 30 samples; B restarted sees only the last 10 of them.
	want := modelRouting(t, a.admin, "m1")
	var got map[string]targetState
	pollUntil(t, 10*time.Second, "restarted B learning from A's new spans", func() bool {
		got = modelRouting(t, b2.admin, "m1")
		return totalSamples(got) == 10
	})
	if leaderOf(got) != leaderOf(want) || leaderOf(got) != "fast" {
		t.Errorf("restarted B's leader = %q, A's %q, want fast for both (B: %+v)", leaderOf(got), leaderOf(want), got)
	}
	if peer := scrapeMetric(t, b2.admin, "firstbyte_spans_consumed_total", `source="peer"`); peer == 0 {
		t.Errorf(`restarted B firstbyte_spans_consumed_total{source="peer"} = 0, want > 0`)
	}
	if peer := scrapeMetric(t, a.admin, "firstbyte_spans_consumed_total", `source="peer"`); peer != 0 {
		t.Errorf(`A firstbyte_spans_consumed_total{source="peer"} = %v at the end, want 0`, peer)
	}
}

// markerTrace is one attempt span of an instance named "marker" for a
// target no test gateway routes to: a gateway counts it rejected
// (unknown_target) and learns nothing from it.
func markerTrace() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "firstbyte")
	rs.Resource().Attributes().PutStr("service.instance.id", "marker")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{0x4d})
	span.SetSpanID(pcommon.SpanID{0x4d})
	span.SetName("chat nowhere")
	span.SetKind(ptrace.SpanKindClient)
	now := time.Now()
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-50 * time.Millisecond)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	span.Attributes().PutStr("firstbyte.target", "marker-target")
	span.Attributes().PutStr("gen_ai.request.model", "m1")
	span.Attributes().PutInt("http.response.status_code", 200)
	span.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", 0.01)
	return td
}
