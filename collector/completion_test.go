package collector

import (
	"context"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name   string
		sorted []float64
		q      float64
		want   float64
	}{
		{"none", nil, 0.5, 0},
		{"one", []float64{7}, 0.5, 7},
		{"nine: the largest", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.5, 9},
		{"nine, p99: the largest", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.99, 9},
		{"ten, p50: element 5", ten, 0.5, 6},
		{"ten, p75: element 7", ten, 0.75, 8},
		{"ten, p90: element 9", ten, 0.9, 10},
		{"ten, p99: the last", ten, 0.99, 10},
	}
	for _, tt := range tests {
		if got := Percentile(tt.sorted, tt.q); got != tt.want {
			t.Errorf("%s: Percentile(%v, %v) = %v, want %v", tt.name, tt.sorted, tt.q, got, tt.want)
		}
	}
}

func TestTokenBucket(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ max, want int }{{0, 0}, {-3, 0}, {1, 1}, {2, 2}, {3, 2}, {20, 5}, {31, 5}, {32, 6}, {600, 10}, {4096, 13}} {
		if got := TokenBucket(tt.max); got != tt.want {
			t.Errorf("TokenBucket(%d) = %d, want %d", tt.max, got, tt.want)
		}
	}
}

func TestTrackerRatePercentilesAndExpiry(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	for i := 1; i <= 12; i++ {
		tr.RecordRate("t2", "m", float64(10*i), t0.Add(-time.Duration(13-i)*time.Second))
	}
	tr.RecordRate("t2", "m", 0, t0)  // no rate: dropped
	tr.RecordRate("t2", "m", -1, t0) // dropped
	got := tr.RateAt("t2", "m", t0)
	want := stats.Rate{Samples: 12, P50: 70, P75: 100, P90: 110, P99: 120}
	if got != want {
		t.Errorf("RateAt = %+v, want %+v", got, want)
	}
	// 4 minutes 55 s later the three oldest (taken 12, 11, 10 s before t0)
	// have expired: 9 left, so every percentile is the largest.
	later := t0.Add(DefaultMaxAge - 10*time.Second)
	got = tr.RateAt("t2", "m", later)
	if want := (stats.Rate{Samples: 9, P50: 120, P75: 120, P90: 120, P99: 120}); got != want {
		t.Errorf("RateAt(later) = %+v, want %+v", got, want)
	}
	if got := tr.RateAt("t1", "m", t0); got != (stats.Rate{}) {
		t.Errorf("RateAt(unknown) = %+v, want zero", got)
	}
	tr.Retain(func(target, _ string) bool { return target != "t2" })
	if got := tr.RateAt("t2", "m", t0); got != (stats.Rate{}) {
		t.Errorf("RateAt after Retain dropped it = %+v, want zero", got)
	}
}

func TestTrackerOutputTokensByBucket(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(newFakeClock(t0))
	for i := 0; i < 10; i++ {
		tr.RecordOutputLength("m", 600, 600, t0)
		tr.RecordOutputLength("m", 2, 2, t0)
	}
	for i := 0; i < 3; i++ {
		tr.RecordOutputLength("m", 20, 20, t0) // 3 only: too few for its bucket
	}
	tests := []struct {
		name      string
		maxTokens int
		want      stats.OutputTokens
	}{
		{"600: its bucket (512-1023)", 700, stats.OutputTokens{Median: 600, Samples: 10, Bucketed: true}},
		{"2: its bucket (2-3)", 3, stats.OutputTokens{Median: 2, Samples: 10, Bucketed: true}},
		// 23 answers sorted: 10 × 2, 3 × 20, 10 × 600; element 11 is 20.
		{"20: too few in its bucket, all answers", 20, stats.OutputTokens{Median: 20, Samples: 23}},
		{"no limit: no bucket has answers, all answers", 0, stats.OutputTokens{Median: 20, Samples: 23}},
	}
	for _, tt := range tests {
		if got := tr.OutputTokensAt("m", tt.maxTokens, t0); got != tt.want {
			t.Errorf("%s: OutputTokensAt(m, %d) = %+v, want %+v", tt.name, tt.maxTokens, got, tt.want)
		}
	}
	if got := tr.OutputTokensAt("other", 0, t0); got != (stats.OutputTokens{}) {
		t.Errorf("OutputTokensAt(other) = %+v, want zero", got)
	}
}

func TestAggregatorLearnsRateAndLength(t *testing.T) {
	t.Parallel()
	end := t0.Add(-time.Second)
	good := attemptFixture("inst-a", "groq", "llama", 250*time.Millisecond, end)
	stream := good.with(map[string]any{
		string(telemetry.KeyOutputRate):       42.5,
		string(telemetry.KeyOutputTokens):     int64(600),
		string(telemetry.KeyRequestMaxTokens): int64(600),
	})
	unary := good.with(map[string]any{string(telemetry.KeyOutputTokens): int64(20)})
	failed := stream.with(map[string]any{string(telemetry.KeyHTTPStatus): int64(503)})
	tr := newTestTracker(newFakeClock(t0))
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	if err := agg.ConsumeTraces(context.Background(), buildTraces(t, stream, unary, failed)); err != nil {
		t.Fatal(err)
	}
	// The unary answer gives a length but no rate; the failed one neither.
	if got := tr.RateAt("groq", "llama", t0); got.Samples != 1 || got.P50 != 42.5 {
		t.Errorf("RateAt = %+v, want one sample of 42.5", got)
	}
	// Lengths are the client model's (firstbyte.requested_model).
	if got := tr.OutputTokensAt("llama-3.3-70b", 600, t0); got.Samples != 2 || got.Median != 600 {
		t.Errorf("OutputTokensAt = %+v, want 2 answers, median 600", got)
	}
}
