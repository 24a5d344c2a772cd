package collector

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// plausibleTargets: groq's llama with a 30 s first-byte timeout; openai's
// gpt-4o-mini (what appSpan calls) with a 10 s one; fireworks with none
// known (an hour at most).
var plausibleTargets = []Target{
	{Name: "groq", Model: "llama", Host: "api.groq.com", Port: 443, Kind: "openai", LongestSample: 30 * time.Second},
	{Name: "openai", Model: "gpt-4o-mini", Host: "api.openai.com", Port: 443, Kind: "openai", LongestSample: 10 * time.Second},
	{Name: "fireworks", Model: "llama", Host: "api.fireworks.ai", Port: 443, Kind: "openai"},
}

// plausibleRun consumes spans on one path into a fresh tracker and
// aggregator over plausibleTargets, foreign ingest on, and reports what
// was consumed and rejected.
type plausibleRun struct {
	tr       *Tracker
	consumed map[string]int // OnSpan, by source
	rejected map[string]int // OnReject, by reason
}

func consumePlausible(t *testing.T, local bool, spans ...spanFixture) plausibleRun {
	t.Helper()
	r := plausibleRun{tr: newTestTracker(newFakeClock(t0)), consumed: map[string]int{}, rejected: map[string]int{}}
	agg := NewAggregator(r.tr, AggregatorOptions{
		InstanceID: "gw-self",
		OnSpan:     func(src string) { r.consumed[src]++ },
		OnReject:   func(reason string, n int) { r.rejected[reason] += n },
	})
	agg.SetTargets(plausibleTargets)
	agg.SetForeign(ForeignOptions{Enabled: true})
	td := buildTraces(t, spans...)
	consume := agg.ConsumePeerTraces
	if local {
		consume = agg.ConsumeTraces
	}
	if err := consume(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestImplausibleTimeToFirstChunk: a time to first chunk that is not above
// zero, not finite, or longer than the target's first-byte timeout teaches
// nothing (no sample, no success outcome) and is counted as rejected
// (implausible), not as consumed: from peers and applications alike.
// This process's own spans are held to the value checks and an hour, not
// to the timeout. A failed attempt's time to first chunk is no sample, so
// it is not judged: its fault counts.
func TestImplausibleTimeToFirstChunk(t *testing.T) {
	const (
		want      = "sample"
		rejected  = "implausible"
		noneOwned = "nothing" // taught nothing, rejected nothing
	)
	end := t0.Add(-time.Second)
	peer := func(target string, ttfb any) spanFixture {
		return attemptFixture("gw-peer", target, "llama", 0, end).with(map[string]any{string(telemetry.KeyTimeToFirstByte): ttfb})
	}
	local := func(target string, ttfb any) spanFixture {
		return attemptFixture("gw-self", target, "llama", 0, end).with(map[string]any{string(telemetry.KeyTimeToFirstByte): ttfb})
	}
	app := func(attrs map[string]any) spanFixture { return appSpan("app", attrs) }
	appUnary := func(d time.Duration) spanFixture { f := app(nil); f.dur = d; return f }
	failed := func(f spanFixture) spanFixture {
		return f.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(503)})
	}
	for _, tc := range []struct {
		name     string
		local    bool // consumed as this process's own spans
		span     spanFixture
		target   string
		model    string
		verdict  string // want | rejected | noneOwned | "fault"
		wantTTFB time.Duration
	}{
		// Peers: the target's first-byte timeout is 30 s.
		{"peer 250ms", false, peer("groq", 0.25), "groq", "llama", want, 250 * time.Millisecond},
		{"peer at the timeout", false, peer("groq", 30.0), "groq", "llama", want, 30 * time.Second},
		{"peer 1ns", false, peer("groq", 1e-9), "groq", "llama", want, time.Nanosecond},
		{"peer just over the timeout", false, peer("groq", 30.001), "groq", "llama", rejected, 0},
		{"peer 1000s", false, peer("groq", 1000.0), "groq", "llama", rejected, 0},
		{"peer milliseconds sent as seconds", false, peer("groq", int64(250)), "groq", "llama", rejected, 0},
		{"peer zero", false, peer("groq", 0.0), "groq", "llama", rejected, 0},
		{"peer zero as an int", false, peer("groq", int64(0)), "groq", "llama", rejected, 0},
		{"peer rounds to zero", false, peer("groq", 1e-10), "groq", "llama", rejected, 0},
		{"peer negative", false, peer("groq", -0.1), "groq", "llama", rejected, 0},
		{"peer NaN", false, peer("groq", math.NaN()), "groq", "llama", rejected, 0},
		{"peer +Inf", false, peer("groq", math.Inf(1)), "groq", "llama", rejected, 0},
		{"peer -Inf", false, peer("groq", math.Inf(-1)), "groq", "llama", rejected, 0},
		{"peer, no timeout known: 1000s", false, peer("fireworks", 1000.0), "fireworks", "llama", want, 1000 * time.Second},
		{"peer, no timeout known: over an hour", false, peer("fireworks", 3600.5), "fireworks", "llama", rejected, 0},
		{"peer failure with a NaN chunk time: its fault", false, failed(peer("groq", math.NaN())), "groq", "llama", "fault", 0},

		// Applications (foreign): openai's gpt-4o-mini times out at 10 s.
		{"app 250ms", false, app(map[string]any{"gen_ai.response.time_to_first_chunk": 0.25}), "openai", "gpt-4o-mini", want, 250 * time.Millisecond},
		{"app over the timeout", false, app(map[string]any{"gen_ai.response.time_to_first_chunk": 10.5}), "openai", "gpt-4o-mini", rejected, 0},
		{"app zero", false, app(map[string]any{"gen_ai.response.time_to_first_chunk": 0.0}), "openai", "gpt-4o-mini", rejected, 0},
		{"app NaN", false, app(map[string]any{"gen_ai.response.time_to_first_chunk": math.NaN()}), "openai", "gpt-4o-mini", rejected, 0},
		{"app negative", false, app(map[string]any{"gen_ai.response.time_to_first_chunk": -1.0}), "openai", "gpt-4o-mini", rejected, 0},
		{"app unary 300ms", false, appUnary(300 * time.Millisecond), "openai", "gpt-4o-mini", want, 300 * time.Millisecond},
		{"app unary over the timeout", false, appUnary(11 * time.Second), "openai", "gpt-4o-mini", rejected, 0},
		{"app unary without timestamps", false, func() spanFixture { f := app(nil); f.end = time.Time{}; return f }(), "openai", "gpt-4o-mini", rejected, 0},
		{"app stream without a chunk time: no sample, not judged", false,
			app(map[string]any{"gen_ai.request.stream": true}), "openai", "gpt-4o-mini", noneOwned, 0},

		// Our own spans: value checks and an hour, not the timeout.
		{"own 250ms", true, local("groq", 0.25), "groq", "llama", want, 250 * time.Millisecond},
		{"own over the timeout (a reload shortened it)", true, local("groq", 45.0), "groq", "llama", want, 45 * time.Second},
		{"own zero", true, local("groq", 0.0), "groq", "llama", rejected, 0},
		{"own NaN", true, local("groq", math.NaN()), "groq", "llama", rejected, 0},
		{"own +Inf", true, local("groq", math.Inf(1)), "groq", "llama", rejected, 0},
		{"own negative", true, local("groq", -0.1), "groq", "llama", rejected, 0},
		{"own over an hour", true, local("groq", 3600.5), "groq", "llama", rejected, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := consumePlausible(t, tc.local, tc.span)
			st := r.tr.StatsAt(tc.target, tc.model, t0)
			p50, n, ok := r.tr.P50(tc.target, tc.model)
			consumed := 0
			for _, c := range r.consumed {
				consumed += c
			}
			switch tc.verdict {
			case want:
				if !ok || n != 1 || p50 != tc.wantTTFB || st.Outcomes != 1 || st.Faults != 0 {
					t.Errorf("P50 = %v, %d, %v; outcomes %d faults %v; want one sample of %v", p50, n, ok, st.Outcomes, st.Faults, tc.wantTTFB)
				}
				if len(r.rejected) != 0 {
					t.Errorf("rejected %v, want nothing", r.rejected)
				}
				if !tc.local && consumed != 1 {
					t.Errorf("consumed %v, want the one span", r.consumed)
				}
			case rejected:
				if ok || st.Outcomes != 0 || len(r.tr.All()) != 0 {
					t.Errorf("P50 = %v, %d, %v; outcomes %d; All() = %v; want nothing learned", p50, n, ok, st.Outcomes, r.tr.All())
				}
				if r.rejected[RejectImplausible] != 1 || len(r.rejected) != 1 {
					t.Errorf("rejected %v, want implausible: 1", r.rejected)
				}
				if consumed != 0 {
					t.Errorf("consumed %v, want none: a rejected span is not consumed", r.consumed)
				}
			case noneOwned:
				if ok || st.Outcomes != 0 || len(r.rejected) != 0 || consumed != 0 {
					t.Errorf("P50 ok %v, outcomes %d, rejected %v, consumed %v; want nothing at all", ok, st.Outcomes, r.rejected, r.consumed)
				}
			case "fault":
				if ok || st.Outcomes != 1 || st.Faults != 1 || len(r.rejected) != 0 {
					t.Errorf("P50 ok %v, outcomes %d faults %v, rejected %v; want the fault alone", ok, st.Outcomes, st.Faults, r.rejected)
				}
			}
		})
	}
}

// TestImplausiblePeersCannotMoveTheRanking is the attack as it was seen:
// 100 peer spans claiming a 1000 s first chunk for the fastest target, and
// spans claiming 0 for the slowest, in one export. The fastest keeps its
// own samples' p50, the slowest learns nothing, and all 200 are counted.
func TestImplausiblePeersCannotMoveTheRanking(t *testing.T) {
	end := t0.Add(-time.Second)
	var own, forged []spanFixture
	for range 20 {
		own = append(own, attemptFixture("gw-self", "groq", "llama", 20*time.Millisecond, end))
	}
	for range 100 {
		forged = append(forged,
			attemptFixture("gw-peer", "groq", "llama", 1000*time.Second, end),
			attemptFixture("gw-peer", "fireworks", "llama", 0, end))
	}
	tr := newTestTracker(newFakeClock(t0))
	rejected := map[string]int{}
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "gw-self", OnReject: func(r string, n int) { rejected[r] += n }})
	agg.SetTargets(plausibleTargets)
	if err := agg.ConsumeTraces(context.Background(), buildTraces(t, own...)); err != nil {
		t.Fatal(err)
	}
	if err := agg.ConsumePeerTraces(context.Background(), buildTraces(t, forged...)); err != nil {
		t.Fatal(err)
	}
	if p50, n, _ := tr.P50("groq", "llama"); p50 != 20*time.Millisecond || n != 20 {
		t.Errorf("groq P50 = %v over %d samples, want 20ms over its own 20", p50, n)
	}
	if _, n, ok := tr.P50("fireworks", "llama"); ok {
		t.Errorf("fireworks learned %d samples from spans claiming 0", n)
	}
	if rejected[RejectImplausible] != 200 {
		t.Errorf("rejected %v, want implausible: 200", rejected)
	}
}

// TestIngestCountsImplausibleSpans: through the real OTLP/HTTP handler, in
// protobuf and JSON (where NaN and the infinities travel as strings), with
// the real metrics wired as the binary wires them: implausible peer spans
// are answered 200 like the rest (an exporter must not retry them), teach
// nothing, and are counted in firstbyte_ingest_rejected_total{reason=
// "implausible"}; the plausible one beside them is consumed.
func TestIngestCountsImplausibleSpans(t *testing.T) {
	for _, contentType := range []string{contentProtobuf, contentJSON} {
		t.Run(contentType, func(t *testing.T) {
			reg := NewRegistry()
			m := NewMetrics(reg)
			tr := newTestTracker(newFakeClock(t0))
			agg := NewAggregator(tr, AggregatorOptions{InstanceID: "gw-self", OnSpan: m.SpanConsumed, OnReject: m.IngestRejected})
			agg.SetTargets(plausibleTargets)
			srv := httptest.NewServer(NewIngestHandler(agg, IngestOptions{OnReject: m.IngestRejected}))
			defer srv.Close()

			end := t0.Add(-time.Second)
			spans := []spanFixture{attemptFixture("gw-peer", "groq", "llama", 400*time.Millisecond, end)}
			for _, v := range []any{1000.0, 0.0, -1.0, math.NaN(), math.Inf(1), math.Inf(-1), int64(250)} {
				spans = append(spans, attemptFixture("gw-peer", "groq", "llama", 0, end).with(map[string]any{string(telemetry.KeyTimeToFirstByte): v}))
			}
			req := ptraceotlp.NewExportRequestFromTraces(buildTraces(t, spans...))
			var b []byte
			var err error
			if contentType == contentJSON {
				b, err = req.MarshalJSON()
			} else {
				b, err = req.MarshalProto()
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp, body := post(t, srv, ingestRequest{contentType: contentType, body: bytes.NewReader(b)}); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d (%s)", resp.StatusCode, body)
			}
			if got := counterValue(t, reg, "firstbyte_ingest_rejected_total", map[string]string{"reason": RejectImplausible}); got != 7 {
				t.Errorf("firstbyte_ingest_rejected_total{reason=implausible} = %v, want 7", got)
			}
			if got := counterValue(t, reg, "firstbyte_spans_consumed_total", map[string]string{"source": SourcePeer}); got != 1 {
				t.Errorf("firstbyte_spans_consumed_total{source=peer} = %v, want 1", got)
			}
			if p50, n, _ := tr.P50("groq", "llama"); p50 != 400*time.Millisecond || n != 1 {
				t.Errorf("groq P50 = %v over %d, want the one plausible 400ms", p50, n)
			}
		})
	}
}
