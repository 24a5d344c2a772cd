package stats

import (
	"testing"
	"time"
)

func TestLoadFactor(t *testing.T) {
	ms := time.Millisecond
	curve := func(levels map[int]time.Duration) Target {
		var s Target
		for k, d := range levels {
			s.Load[k-1] = d
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		levels map[int]time.Duration
		k      int
		want   float64
	}{
		{"no curve", nil, 8, 1},
		{"flat", map[int]time.Duration{1: 20 * ms, 2: 20 * ms, 4: 21 * ms}, 4, 1.05},
		{"a queue past 4", map[int]time.Duration{1: 20 * ms, 4: 20 * ms, 5: 40 * ms, 8: 40 * ms}, 6, 2},
		{"unseen level: the nearest below", map[int]time.Duration{1: 20 * ms, 3: 30 * ms}, 9, 1.5},
		{"idle level unseen: the lowest stands for it", map[int]time.Duration{3: 20 * ms, 6: 60 * ms}, 7, 3},
		{"at or below the base", map[int]time.Duration{3: 20 * ms, 6: 60 * ms}, 2, 1},
		{"faster under load is not a discount", map[int]time.Duration{1: 30 * ms, 2: 20 * ms}, 2, 1},
		{"beyond the last level", map[int]time.Duration{1: 10 * ms, LoadLevels: 50 * ms}, 100, 5},
	} {
		s := curve(tc.levels)
		if got := s.LoadFactor(tc.k); got != tc.want {
			t.Errorf("%s: LoadFactor(%d) = %v, want %v", tc.name, tc.k, got, tc.want)
		}
	}
}

func TestQuantileReadsTheCarriedOnes(t *testing.T) {
	s := Target{P50: 1, P75: 2, P90: 3, P95: 4, P99: 5}
	for i, q := range Quantiles {
		if got := s.Quantile(q); got != time.Duration(i+1) {
			t.Errorf("Quantile(%g) = %v, want %v", q, got, i+1)
		}
	}
	if s.Quantile(0.42) != 0 {
		t.Error("a quantile not carried is not 0")
	}
}
