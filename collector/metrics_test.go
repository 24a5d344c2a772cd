package collector

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// attemptSpan builds one successful attempt span as the router ends it.
func attemptSpan(end time.Time, ttfb float64, sampled bool) ptrace.Span {
	s := ptrace.NewSpan()
	s.SetKind(ptrace.SpanKindClient)
	s.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	if sampled {
		s.SetFlags(1)
	}
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	a := s.Attributes()
	a.PutStr("firstbyte.target", "groq")
	a.PutStr("firstbyte.requested_model", "llama")
	a.PutStr("firstbyte.outcome", "success")
	a.PutStr("firstbyte.selection", "leader")
	a.PutInt("firstbyte.attempt", 1)
	a.PutDouble("gen_ai.response.time_to_first_chunk", ttfb)
	return s
}

func countExemplars(t *testing.T, reg *prometheus.Registry) (observations uint64, exemplars int) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "firstbyte_ttfb_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			observations += m.GetHistogram().GetSampleCount()
			for _, b := range m.GetHistogram().GetBucket() {
				if b.GetExemplar() != nil {
					exemplars++
				}
			}
		}
	}
	return observations, exemplars
}

// TestTTFBExemplars: every successful attempt is observed; exemplars come
// only from exported (sampled) spans, at most one a second per series.
func TestTTFBExemplars(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	t0 := time.Unix(1_800_000_000, 0)
	res := pcommon.NewResource()
	m.ObserveSpan(res, attemptSpan(t0, 0.05, false))                         // not exported: no exemplar
	m.ObserveSpan(res, attemptSpan(t0.Add(10*time.Millisecond), 0.05, true)) // first exemplar
	m.ObserveSpan(res, attemptSpan(t0.Add(500*time.Millisecond), 0.5, true)) // too soon after it
	if obs, ex := countExemplars(t, reg); obs != 3 || ex != 1 {
		t.Errorf("observations %d, exemplars %d; want 3 and 1", obs, ex)
	}
	m.ObserveSpan(res, attemptSpan(t0.Add(2*time.Second), 5, true)) // a second later: another
	if obs, ex := countExemplars(t, reg); obs != 4 || ex != 2 {
		t.Errorf("observations %d, exemplars %d; want 4 and 2", obs, ex)
	}
}

// counterValue is the value of one series of a counter family.
func counterValue(t *testing.T, reg *prometheus.Registry, family string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestTokensAndCost: the usage an attempt span reports becomes
// firstbyte_tokens_total, and by the target's rate card for its upstream
// model, firstbyte_cost_usd_total; an unpriced target counts tokens, no cost.
//
//	groq/llama-3.3-70b-versatile: 1,000 in at $0.59/M + 500 out at $0.79/M = $0.000985
func TestTokensAndCost(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.SetPrices([]Target{{Name: "groq", Model: "llama-3.3-70b-versatile", Priced: true, Price: TokenPrice{Input: 0.59, Output: 0.79}}})
	span := attemptSpan(time.Unix(1_800_000_000, 0), 0.05, false)
	span.Attributes().PutStr("gen_ai.request.model", "llama-3.3-70b-versatile")
	span.Attributes().PutInt("gen_ai.usage.input_tokens", 1000)
	span.Attributes().PutInt("gen_ai.usage.output_tokens", 500)
	m.ObserveSpan(pcommon.NewResource(), span)
	if in := counterValue(t, reg, "firstbyte_tokens_total", map[string]string{"target": "groq", "model": "llama", "type": "input"}); in != 1000 {
		t.Errorf("input tokens %v, want 1000", in)
	}
	if out := counterValue(t, reg, "firstbyte_tokens_total", map[string]string{"target": "groq", "model": "llama", "type": "output"}); out != 500 {
		t.Errorf("output tokens %v, want 500", out)
	}
	if cost := counterValue(t, reg, "firstbyte_cost_usd_total", map[string]string{"target": "groq", "model": "llama"}); cost < 0.000984 || cost > 0.000986 {
		t.Errorf("cost %v USD, want 0.000985", cost)
	}
	unpriced := attemptSpan(time.Unix(1_800_000_000, 0), 0.05, false)
	unpriced.Attributes().PutStr("firstbyte.target", "local")
	unpriced.Attributes().PutInt("gen_ai.usage.output_tokens", 7)
	m.ObserveSpan(pcommon.NewResource(), unpriced)
	if out := counterValue(t, reg, "firstbyte_tokens_total", map[string]string{"target": "local", "type": "output"}); out != 7 {
		t.Errorf("unpriced target's tokens %v, want 7", out)
	}
	if cost := counterValue(t, reg, "firstbyte_cost_usd_total", map[string]string{"target": "local"}); cost != 0 {
		t.Errorf("unpriced target cost %v, want none", cost)
	}
}

// TestLocalSpansCountEveryEndedSpan: firstbyte_spans_consumed_total
// {source="local"} counts every span that ended here once: those whose
// metrics were derived, and those the asynchronous side had to drop (the
// tracker had them all the same).
func TestLocalSpansCountEveryEndedSpan(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	attemptSpan(time.Unix(1_800_000_000, 0), 0.05, false).CopyTo(spans.AppendEmpty())
	spans.AppendEmpty().SetKind(ptrace.SpanKindServer)
	if err := m.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	m.SpansDropped(3)
	m.SpanConsumed(SourcePeer)
	m.SpanConsumed(SourceForeign)
	for source, want := range map[string]float64{SourceLocal: 5, SourcePeer: 1, SourceForeign: 1} {
		if got := counterValue(t, reg, "firstbyte_spans_consumed_total", map[string]string{"source": source}); got != want {
			t.Errorf("consumed{source=%q} = %v, want %v", source, got, want)
		}
	}
	if got := counterValue(t, reg, "firstbyte_spans_dropped_total", nil); got != 3 {
		t.Errorf("dropped = %v, want 3", got)
	}
}
