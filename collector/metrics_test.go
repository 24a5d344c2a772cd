package collector

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
	t.Parallel()
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

// counterValue is the value of one series of a counter family (0 when it
// has none).
func counterValue(t *testing.T, reg *prometheus.Registry, family string, labels map[string]string) float64 {
	t.Helper()
	return metricSeries(t, reg, family, labels).GetCounter().GetValue()
}

// metricSeries is the first series of family whose labels include labels, or
// nil.
func metricSeries(t *testing.T, reg *prometheus.Registry, family string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// TestTokensAndCost: the usage an attempt span reports becomes
// firstbyte_tokens_total, and by the target's rate card for its upstream
// model, firstbyte_cost_usd_total; an unpriced target counts tokens, no cost.
//
//	groq/llama-3.3-70b-versatile: 1,000 in at $0.59/M + 500 out at $0.79/M = $0.000985
func TestTokensAndCost(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// BenchmarkMetricsObserveSpan: what the metrics cost per span on the
// asynchronous side, for a request's two spans: its attempt (with usage,
// priced) and its server span (with a skip event).
func BenchmarkMetricsObserveSpan(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	m.SetPrices([]Target{{Name: "groq", Model: "llama-3.3-70b-versatile", Priced: true, Price: TokenPrice{Input: 0.59, Output: 0.79}}})
	attempt := attemptSpan(time.Unix(1_800_000_000, 0), 0.05, false)
	a := attempt.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "llama-3.3-70b-versatile")
	a.PutStr("server.address", "api.groq.com")
	a.PutInt("server.port", 443)
	a.PutInt("http.response.status_code", 200)
	a.PutStr("firstbyte.fault", "none")
	a.PutInt("gen_ai.usage.input_tokens", 1000)
	a.PutInt("gen_ai.usage.output_tokens", 500)
	server := ptrace.NewSpan()
	server.SetKind(ptrace.SpanKindServer)
	server.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_000, 0)))
	server.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_001, 0)))
	s := server.Attributes()
	s.PutStr("http.request.method", "POST")
	s.PutStr("http.route", "/v1/chat/completions")
	s.PutInt("http.response.status_code", 200)
	s.PutDouble("firstbyte.upstream_wait", 0.9)
	s.PutStr("firstbyte.requested_model", "llama")
	s.PutStr("firstbyte.selection", "leader")
	s.PutStr("firstbyte.target", "groq")
	s.PutInt("firstbyte.attempt", 1)
	skip := server.Events().AppendEmpty()
	skip.SetName("firstbyte.skip")
	skip.Attributes().PutStr("firstbyte.target", "down")
	skip.Attributes().PutStr("firstbyte.skip_reason", "circuit_open")
	res := pcommon.NewResource()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveSpan(res, attempt)
		m.ObserveSpan(res, server)
	}
}

// histogram is the sample count and sum of one series of a histogram
// family (0, 0 when it has none).
func histogram(t *testing.T, reg *prometheus.Registry, family string, labels map[string]string) (uint64, float64) {
	t.Helper()
	h := metricSeries(t, reg, family, labels).GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

// TestMetricsOfOneRequest: every series a request's two spans give, with
// its value.
//
//	[server: model m, 200, 0.2 s, 0.15 s upstream wait, skip t2 circuit_open]
//	  └─ [attempt 1 on t (upstream up, $1/M in, $2/M out), leader, success,
//	      TTFB 0.05 s, 100 in, 20 out]
//	[attempt 2 on t3: failover, no TTFB]
func TestMetricsOfOneRequest(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.SetPrices([]Target{{Name: "t", Model: "up", Priced: true, Price: TokenPrice{Input: 1, Output: 2}}})
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	server := spans.AppendEmpty()
	server.SetKind(ptrace.SpanKindServer)
	server.SetStartTimestamp(1_000_000_000)
	server.SetEndTimestamp(1_200_000_000)
	server.Attributes().PutStr("firstbyte.requested_model", "m")
	server.Attributes().PutInt("http.response.status_code", 200)
	server.Attributes().PutDouble("firstbyte.upstream_wait", 0.15)
	server.Attributes().PutStr("firstbyte.hedge", "won")
	server.Attributes().PutStr("firstbyte.affinity", "hit")
	skip := server.Events().AppendEmpty()
	skip.SetName("firstbyte.skip")
	skip.Attributes().PutStr("firstbyte.target", "t2")
	skip.Attributes().PutStr("firstbyte.skip_reason", "circuit_open")
	attempt := spans.AppendEmpty()
	attempt.SetKind(ptrace.SpanKindClient)
	for k, v := range map[string]any{
		"firstbyte.target": "t", "firstbyte.requested_model": "m", "firstbyte.outcome": "success",
		"firstbyte.attempt": int64(1), "firstbyte.selection": "leader", "gen_ai.response.time_to_first_chunk": 0.05,
		"gen_ai.request.model": "up", "gen_ai.usage.input_tokens": int64(100), "gen_ai.usage.output_tokens": 20.0,
		"firstbyte.output_tokens_per_second": 80.0,
	} {
		if err := attempt.Attributes().PutEmpty(k).FromRaw(v); err != nil {
			t.Fatal(err)
		}
	}
	failover := spans.AppendEmpty()
	failover.SetKind(ptrace.SpanKindClient)
	failover.Attributes().PutStr("firstbyte.target", "t3")
	failover.Attributes().PutStr("firstbyte.requested_model", "m")
	failover.Attributes().PutStr("firstbyte.outcome", "failover")
	failover.Attributes().PutInt("firstbyte.attempt", 2)
	failover.Attributes().PutStr("firstbyte.selection", "failover")
	if err := m.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"firstbyte_requests_total", map[string]string{"model": "m", "code": "200"}, 1},
		{"firstbyte_skips_total", map[string]string{"target": "t2", "reason": "circuit_open"}, 1},
		{"firstbyte_attempts_total", map[string]string{"target": "t", "model": "m", "outcome": "success"}, 1},
		{"firstbyte_attempts_total", map[string]string{"target": "t3", "model": "m", "outcome": "failover"}, 1},
		{"firstbyte_selections_total", map[string]string{"model": "m", "target": "t", "reason": "leader"}, 1},
		{"firstbyte_selections_total", map[string]string{"target": "t3"}, 0}, // not a first attempt
		{"firstbyte_tokens_total", map[string]string{"target": "t", "model": "m", "type": "input"}, 100},
		{"firstbyte_tokens_total", map[string]string{"target": "t", "model": "m", "type": "output"}, 20},
		{"firstbyte_cost_usd_total", map[string]string{"target": "t", "model": "m"}, (100*1 + 20*2) / 1e6},
		{"firstbyte_spans_consumed_total", map[string]string{"source": "local"}, 3},
		{"firstbyte_hedges_total", map[string]string{"model": "m", "result": "won"}, 1},
		{"firstbyte_affinity_total", map[string]string{"model": "m", "result": "hit"}, 1},
	} {
		if got := counterValue(t, reg, c.family, c.labels); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s%v = %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	for _, c := range []struct {
		family string
		labels map[string]string
		n      uint64
		sum    float64
	}{
		{"firstbyte_request_duration_seconds", map[string]string{"model": "m"}, 1, 0.2},
		{"firstbyte_overhead_seconds", map[string]string{"model": "m"}, 1, 0.05},
		{"firstbyte_ttfb_seconds", map[string]string{"target": "t", "model": "m"}, 1, 0.05},
		{"firstbyte_ttfb_seconds", map[string]string{"target": "t3"}, 0, 0},
		{"firstbyte_output_tokens_per_second", map[string]string{"target": "t", "model": "m"}, 1, 80},
		{"firstbyte_output_tokens_per_second", map[string]string{"target": "t3"}, 0, 0},
	} {
		if n, sum := histogram(t, reg, c.family, c.labels); n != c.n || math.Abs(sum-c.sum) > 1e-9 {
			t.Errorf("%s%v: %d observations summing to %v, want %d, %v", c.family, c.labels, n, sum, c.n, c.sum)
		}
	}
}
