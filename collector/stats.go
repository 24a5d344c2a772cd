package collector

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The statistics a series publishes, as pure functions over its samples
// and outcomes, each with boundary tests.

// EWMAAlpha is the weight of the newest sample in the ewma-latency mode's
// moving average.
const EWMAAlpha = 0.3

// ewmaStep folds sample x into the average avg.
func ewmaStep(avg, x float64) float64 { return EWMAAlpha*x + (1-EWMAAlpha)*avg }

// expired reports whether a sample taken at takenAt has expired by now: it
// lives for maxAge, so at takenAt+maxAge exactly it no longer counts.
func expired(takenAt, now, maxAge int64) bool {
	return now-takenAt >= maxAge
}

// medianIndex is the index of the p50 among n samples sorted ascending:
// ⌊n/2⌋, so for an even n it is the upper middle one.
func medianIndex(n int) int {
	return n / 2
}

// insertSorted inserts v into the ascending slice sorted, after any equal
// values, and returns the extended slice. It does not allocate while
// cap(sorted) > len(sorted).
func insertSorted(sorted []time.Duration, v time.Duration) []time.Duration {
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })
	sorted = append(sorted, 0)
	copy(sorted[i+1:], sorted[i:])
	sorted[i] = v
	return sorted
}

// removeSorted removes one occurrence of v from the ascending slice sorted,
// if there is one, and returns the shortened slice.
func removeSorted(sorted []time.Duration, v time.Duration) []time.Duration {
	i, found := slices.BinarySearch(sorted, v)
	if !found {
		return sorted
	}
	return slices.Delete(sorted, i, i+1)
}

// minTTFBForLog bounds a TTFB's logarithm from below: a sample of 0 (a clock's
// resolution) counts as one microsecond rather than as ln 0 = -Inf.
const minTTFBForLog = time.Microsecond

// logSeconds is ln of ttfb in seconds, ttfb taken as at least
// minTTFBForLog.
func logSeconds(ttfb time.Duration) float64 {
	return math.Log(max(ttfb, minTTFBForLog).Seconds())
}

// recencyWeight is the weight of an entry taken age before the newest one:
// 2^(-age/telemetry.RecencyHalfLife), 1 for the newest.
func recencyWeight(age int64) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(telemetry.RecencyHalfLife))
}

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

// faultRate is Faults/Outcomes clamped to [0, 1]; 0 with none.
func faultRate(faults float64, outcomes int) float64 {
	if outcomes <= 0 {
		return 0
	}
	return min(1, max(0, faults/float64(outcomes)))
}
