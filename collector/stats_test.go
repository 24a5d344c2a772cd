package collector

import (
	"math"
	"testing"
)

// The tests' oracle for decayingSums: the weighted moments computed afresh
// in one pass over the entries.

// weightedMoments accumulates a weighted mean and variance in one pass:
// weighted sums of deviations from shift, a value near the others (the
// first), which keeps the sum-of-squares formula accurate where raw sums
// would cancel. With every weight 1 it is the ordinary sample mean and
// (n-1)-denominator standard deviation.
type weightedMoments struct {
	shift        float64
	v1, v2       float64 // sum of weights, of squared weights
	sum, sumSq   float64 // weighted sums of x - shift, (x - shift)^2
	initialShift bool
}

func (m *weightedMoments) add(x, w float64) {
	if !m.initialShift {
		m.shift, m.initialShift = x, true
	}
	d := x - m.shift
	m.v1 += w
	m.v2 += w * w
	m.sum += w * d
	m.sumSq += w * d * d
}

// mean is the weighted mean; 0 with no weight.
func (m *weightedMoments) mean() float64 {
	if m.v1 <= 0 {
		return 0
	}
	return m.shift + m.sum/m.v1
}

// std is the weighted standard deviation with the reliability-weights
// correction (V1 - V2/V1 in the denominator), which for unit weights is the
// (n-1) sample standard deviation; 0 when there is not enough spread of
// weight to say (fewer than two values).
func (m *weightedMoments) std() float64 {
	den := m.v1 - m.v2/m.v1
	if m.v1 <= 0 || den <= 1e-12 {
		return 0
	}
	return math.Sqrt(max(0, (m.sumSq-m.sum*m.sum/m.v1)/den))
}

func TestQuantileIndex(t *testing.T) {
	for _, tc := range []struct {
		n    int
		q    float64
		want int
	}{{1, 0.95, 0}, {10, 0.5, 5}, {10, 0.9, 9}, {10, 0.95, 9}, {20, 0.95, 19}, {100, 0.95, 95}, {100, 0.99, 99}, {101, 0.75, 75}} {
		if got := quantileIndex(tc.n, tc.q); got != tc.want {
			t.Errorf("quantileIndex(%d, %g) = %d, want %d", tc.n, tc.q, got, tc.want)
		}
	}
}
