package collector

import (
	"testing"
	"time"
)

// TestPercentiles: fewer than 10 samples give the largest; from 10 on,
// quantile q is element ⌊q·n⌋ of the sorted samples; rates expire with the
// latency samples' max age; the rates are least-completion's (RecordRate).
func TestPercentiles(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	clock := now
	tr := NewTracker(TrackerOptions{Now: func() time.Time { return clock }, MaxAge: time.Minute})
	if _, n := tr.OutputRatePercentile("a", "m", 0.5, now); n != 0 {
		t.Fatalf("a rate before any was recorded (%d)", n)
	}
	for i := 1; i <= 9; i++ {
		tr.RecordSample("a", "m", time.Duration(i)*10*time.Millisecond, now, OriginSelf)
		tr.RecordRate("a", "m", float64(i*10), now)
	}
	for _, q := range []float64{0.5, 0.75, 0.9, 0.99} {
		if d, n := tr.TTFBPercentile("a", "m", q, now); d != 90*time.Millisecond || n != 9 {
			t.Errorf("TTFBPercentile(%g) of 9 = %v (%d), want the largest, 90ms", q, d, n)
		}
		if r, n := tr.OutputRatePercentile("a", "m", q, now); r != 90 || n != 9 {
			t.Errorf("OutputRatePercentile(%g) of 9 = %v (%d), want the largest, 90", q, r, n)
		}
	}
	later := now.Add(30 * time.Second)
	clock = later
	for i := 10; i <= 20; i++ {
		tr.RecordSample("a", "m", time.Duration(i)*10*time.Millisecond, later, OriginSelf)
		tr.RecordRate("a", "m", float64(i*10), later)
	}
	for _, tt := range []struct {
		q    float64
		want float64
	}{{0.5, 110}, {0.75, 160}, {0.9, 190}, {0.99, 200}} { // 20 samples: 10..200
		if r, n := tr.OutputRatePercentile("a", "m", tt.q, later); r != tt.want || n != 20 {
			t.Errorf("OutputRatePercentile(%g) = %v (%d), want %v of 20", tt.q, r, n, tt.want)
		}
		if d, _ := tr.TTFBPercentile("a", "m", tt.q, later); d != time.Duration(tt.want)*time.Millisecond {
			t.Errorf("TTFBPercentile(%g) = %v, want %vms", tt.q, d, tt.want)
		}
	}
	// The first nine expire at now+1m: eleven left, 100..200.
	if r, n := tr.OutputRatePercentile("a", "m", 0.5, now.Add(time.Minute)); r != 150 || n != 11 {
		t.Errorf("after expiry: p50 = %v (%d), want 150 of 11", r, n)
	}
}
