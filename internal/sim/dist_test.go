package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestLognormalBoundaries(t *testing.T) {
	const m = 150 * time.Millisecond
	tests := []struct {
		name   string
		median time.Duration
		spread float64
		z      float64
		want   time.Duration
	}{
		{"spread 0 is exact for any draw", m, 0, 2.5, m},
		{"spread 0 is exact for a negative draw", m, 0, -3, m},
		{"z 0 is the median", m, 0.8, 0, m},
		{"median 0 is no delay", 0, 1, 2, 0},
		{"one sigma up", time.Second, 0.5, 1, time.Duration(float64(time.Second) * math.Exp(0.5))},
		{"one sigma down", time.Second, 0.5, -1, time.Duration(float64(time.Second) * math.Exp(-0.5))},
		{"huge draws saturate", time.Hour, 3, 40, maxDelay},
	}
	for _, tt := range tests {
		if got := lognormal(tt.median, tt.spread, tt.z); got != tt.want {
			t.Errorf("%s: lognormal(%v, %v, %v) = %v, want %v", tt.name, tt.median, tt.spread, tt.z, got, tt.want)
		}
	}
}

// Over many draws the sample median is the configured median, and about 84% of
// draws fall below median·e^spread (one sigma), whatever the spread.
func TestLognormalSampleMedian(t *testing.T) {
	const n = 20001
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []float64{0.1, 0.25, 1} {
		const median = 200 * time.Millisecond
		draws := make([]time.Duration, n)
		for i := range draws {
			draws[i] = lognormal(median, spread, rng.NormFloat64())
		}
		slices.Sort(draws)
		got := draws[n/2]
		if rel := math.Abs(float64(got-median)) / float64(median); rel > 0.03*math.Max(spread, 0.25)/0.25 {
			t.Errorf("spread %v: sample median = %v, want %v ± a few %%", spread, got, median)
		}
		oneSigma := time.Duration(float64(median) * math.Exp(spread))
		below, _ := slices.BinarySearch(draws, oneSigma)
		if frac := float64(below) / n; math.Abs(frac-0.8413) > 0.02 {
			t.Errorf("spread %v: %.3f of draws below median·e^spread, want 0.841", spread, frac)
		}
	}
}
