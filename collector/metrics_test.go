package collector

import (
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
