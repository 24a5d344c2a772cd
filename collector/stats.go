package collector

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
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

// quantileIndex is the index of quantile q among n sorted samples:
// element ⌊q·n⌋, the last one at most.
func quantileIndex(n int, q float64) int {
	return min(n-1, int(q*float64(n)))
}

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
// 2^(-age/stats.RecencyHalfLife), 1 for the newest.
func recencyWeight(age int64) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(stats.RecencyHalfLife))
}

// faultRate is Faults/Outcomes clamped to [0, 1]; 0 with none.
func faultRate(faults float64, outcomes int) float64 {
	if outcomes <= 0 {
		return 0
	}
	return min(1, max(0, faults/float64(outcomes)))
}

// decayingSums keeps the recency-weighted sums of a set of entries, each
// weighing 2^(-(ref - taken)/RecencyHalfLife) where ref is when the newest
// was taken: Σw, Σw², and Σw·d, Σw·d² of its values (d = value - shift, a
// value near the others, for accuracy). Adding or removing an entry costs
// O(1), not a pass over the window: a new newest entry rescales the sums
// once. Every rebuildEvery changes the owner recomputes them from scratch
// (rebuild), so rounding cannot accumulate.
type decayingSums struct {
	ref            int64 // unix ns the weights are relative to
	shift          float64
	v1, v2, s1, s2 float64
	n              int
	changes        int // since the last rebuild
}

// rebuildEvery bounds how many incremental changes decayingSums takes
// before its owner recomputes it.
const rebuildEvery = 1024

func (d *decayingSums) reset() { *d = decayingSums{} }

// add puts a value taken at t in the sums.
func (d *decayingSums) add(x float64, t int64) {
	if d.n == 0 {
		d.reset()
		d.ref, d.shift = t, x
	}
	if t > d.ref {
		f := recencyWeight(t - d.ref)
		d.v1, d.v2, d.s1, d.s2 = d.v1*f, d.v2*f*f, d.s1*f, d.s2*f
		d.ref = t
	}
	w := recencyWeight(d.ref - t)
	dx := x - d.shift
	d.v1 += w
	d.v2 += w * w
	d.s1 += w * dx
	d.s2 += w * dx * dx
	d.n++
	d.changes++
}

// remove takes a value taken at t out of the sums.
func (d *decayingSums) remove(x float64, t int64) {
	if d.n <= 1 {
		d.reset()
		return
	}
	w := recencyWeight(d.ref - t)
	dx := x - d.shift
	d.v1 = max(0, d.v1-w)
	d.v2 = max(0, d.v2-w*w)
	d.s1 -= w * dx
	d.s2 = max(0, d.s2-w*dx*dx)
	d.n--
	d.changes++
}

// weight is Σw.
func (d *decayingSums) weight() float64 { return d.v1 }

// weightedSum is Σw·value.
func (d *decayingSums) weightedSum() float64 { return d.s1 + d.shift*d.v1 }

// mean is the weighted mean; 0 with no weight.
func (d *decayingSums) mean() float64 {
	if d.v1 <= 0 {
		return 0
	}
	return d.shift + d.s1/d.v1
}

// std is the weighted standard deviation with the reliability-weights
// correction (V1 - V2/V1 in the denominator), which for unit weights is the
// (n-1) sample standard deviation; 0 when there is not enough spread of
// weight to say (fewer than two values). The tests hold it to a one-pass
// oracle (weightedMoments, stats_test.go).
func (d *decayingSums) std() float64 {
	den := d.v1 - d.v2/d.v1
	if d.v1 <= 0 || den <= 1e-12 {
		return 0
	}
	return math.Sqrt(max(0, (d.s2-d.s1*d.s1/d.v1)/den))
}

// costSum is an exact sum of non-negative durations in nanoseconds. It is
// 128 bits wide: a window of costs from spans with absurd timestamps (an
// end centuries after the start) must not wrap around.
type costSum struct{ hi, lo uint64 }

// add puts d (clamped to 0 if negative) in the sum.
func (c *costSum) add(d time.Duration) {
	var carry uint64
	c.lo, carry = bits.Add64(c.lo, uint64(max(0, d)), 0)
	c.hi += carry
}

// sub takes out a d that add put in.
func (c *costSum) sub(d time.Duration) {
	var borrow uint64
	c.lo, borrow = bits.Sub64(c.lo, uint64(max(0, d)), 0)
	c.hi -= borrow
}

// meanSeconds is the sum over n, in seconds; 0 for n <= 0. Its only
// rounding is the sum's conversion to float64 (exact below 2^53 ns, 104
// days) and the one division.
func (c costSum) meanSeconds(n int) float64 {
	if n <= 0 {
		return 0
	}
	return (float64(c.hi)*0x1p64 + float64(c.lo)) / (float64(n) * float64(time.Second))
}

// runningEWMA keeps a series' EWMA, the fold of its samples and timeouts in
// takenAt order (series.refoldEWMA), up to date as entries come and go: an
// entry taken after every one folded costs one ewmaStep, and any other
// change O(1) bookkeeping. It tells when its figure might differ, once
// rounded to the nanosecond, from the fold of the live entries from scratch,
// and the series then refolds.
//
// avg is the float fold of a sequence P, the entries folded since the last
// refold; the live entries form a sequence Q. A new entry after P's last is
// appended to both (append). Any other change reaches Q only (edit): an
// entry leaving (evicted by a full window or expired), or one arriving out of
// order. bound bounds how far the two have drifted apart.
//
// Why Round(avg) is the from-scratch figure whenever rounded says so. Let
// X(S) be the fold of S in exact arithmetic with the float constants a and c
// (EWMAAlpha, 1-EWMAAlpha as float64): A₁ = s₁, Aₖ = a·sₖ + c·Aₖ₋₁. Every
// value lies in [0, M] (durations, clamped at 0), and a + c < 1, so every
// Aₖ does too.
//
//  1. Appending e to both: X(P+e) − X(Q+e) = c·(X(P) − X(Q)), exactly. So
//     append multiplies bound by a factor above c.
//  2. Editing Q by one entry x with j entries after it: where x is, the two
//     folds differ by a·x − (1−c)·A when x has a predecessor (A the fold up
//     to it), at most 0.3·M; when x comes first, after the next entry q they
//     differ by c·(x−q) + (a+c−1)·q, at most M. Every later entry multiplies
//     the difference by c, so it is at most M·c^(j−1). Any lower bound on j
//     gives a bound, which editBound rounds up; for j = 0, 2M. By the
//     triangle inequality over every edit since the refold, decayed by the
//     appends after it, |X(P) − X(Q)| ≤ bound.
//  3. A float fold over values in [0, M] is within 2u·M/(1−c) < 7u·M of the
//     exact fold (u = 2⁻⁵³): each step rounds at most three times, adding at
//     most (a+c)·M·(2u+u²), and the error already made shrinks by c. Fewer
//     roundings (a fused multiply-add) only lower that. So avg, the fold of
//     P, and R, the from-scratch float fold of Q, are within
//     bound + 14u·M of each other; rounded takes B = bound + M·2⁻⁴⁸ (32u·M,
//     with room for the rounding of avg±B itself).
//  4. math.Round is monotone: if Round(avg−B) = Round(avg+B), then Round(R)
//     is that value too, which is Round(avg).
//
// With a full window of n every record evicts the oldest sample, an edit
// with n−1 entries after it: about M·2⁻⁵⁰ for n = 100, which the appends
// decay to a sum near M·2⁻⁴⁸. So a refold is needed when avg comes within
// about M·2⁻⁴⁷ of a half nanosecond (three in a hundred thousand records
// for TTFBs up to 2 s), when an entry leaves or arrives with few entries
// after it, or when M is so large that the fold's own rounding nears half a
// nanosecond (beyond 2⁴⁷ ns, 39 hours).
type runningEWMA struct {
	avg     float64 // the fold of P
	started bool    // P and Q are not empty
	bound   float64 // ≥ |X(P) − X(Q)|
	max     float64 // M: ≥ every value in P and Q
	// Where P ends: the takenAt of its last entry, and whether that is a
	// timeout (on a tie a sample is folded before a timeout).
	lastAt      int64
	lastTimeout bool
}

// ewmaDecay is c rounded up, with room for the rounding of the product.
const ewmaDecay = 0.7001

func (e *runningEWMA) reset() { *e = runningEWMA{} }

// follows reports whether an entry taken at at (a timeout or a sample) is
// folded after every entry in P, and so can be appended.
func (e *runningEWMA) follows(at int64, timeout bool) bool {
	return !e.started || at > e.lastAt || (at == e.lastAt && (timeout || !e.lastTimeout))
}

// append folds value v, taken at at, into P and Q. It must follow P.
func (e *runningEWMA) append(v float64, at int64, timeout bool) {
	if !e.started {
		*e = runningEWMA{avg: v, started: true, max: v}
	} else {
		e.avg = ewmaStep(e.avg, v)
		e.bound *= ewmaDecay
		e.max = max(e.max, v)
	}
	e.lastAt, e.lastTimeout = at, timeout
}

// edit records that an entry of value v left Q or joined it out of order,
// with at least after entries of Q behind it. Q must not be empty after it
// (it is reset then).
func (e *runningEWMA) edit(v float64, after int) {
	e.max = max(e.max, v)
	e.bound += editBound(e.max, after)
}

// editBound is M·c^(after−1) rounded up: c < 2^-0.514573, so c^k ≤
// 2^-⌊0.514573·k⌋; a thousandth more for the rounding of the sum. For after
// = 0, 2M ≥ M/c. The power of two is built from its bits (math.Ldexp costs
// more than the rest of a record's EWMA); past 2^-1000 it stays there,
// still a bound.
func editBound(m float64, after int) float64 {
	if after <= 0 {
		return 2 * m
	}
	e := min((after-1)*514573/1000000, 1000)
	return m * 1.001 * math.Float64frombits(uint64(1023-e)<<52)
}

// rounded is the EWMA to the nanosecond, and whether it is the fold of Q
// from scratch rounded (0 and true for no entries).
func (e *runningEWMA) rounded() (time.Duration, bool) {
	if !e.started {
		return 0, true
	}
	b := e.bound + e.max*0x1p-48
	return time.Duration(math.Round(e.avg)), math.Round(e.avg-b) == math.Round(e.avg+b)
}

// targetStats is the published figures as the router reads them.
func (st *seriesStats) targetStats() stats.Target {
	ts := stats.Target{
		Samples:          st.samples,
		P50:              st.p50,
		P75:              st.p75,
		P90:              st.p90,
		P95:              st.p95,
		P99:              st.p99,
		CensoredP99:      st.p99c,
		EWMA:             st.ewma,
		LogMean:          st.logMean,
		LogStd:           st.logStd,
		LogWeight:        st.logWeight,
		Outcomes:         st.outcomes,
		Faults:           st.faults,
		FaultRate:        st.faultRate,
		WeightedOutcomes: st.weightedOutcomes,
		WeightedFaults:   st.weightedFaults,
		FaultSeconds:     st.faultSeconds,
		Load:             st.load,
		PeerInflight:     st.peerInflight,
		Unsampled:        st.unsampled,
		Late:             st.late,
		WeightedLate:     st.weightedLate,
		LateSeconds:      st.lateSeconds,
		LastLate:         unixOrZero(st.lastLate),
		SelfSamples:      st.byOrigin[OriginSelf],
		PeerSamples:      st.byOrigin[OriginPeer],
		ForeignSamples:   st.byOrigin[OriginForeign],
	}
	if st.newest != 0 {
		ts.Newest, ts.Oldest = time.Unix(0, st.newest), time.Unix(0, st.oldest)
	}
	if st.lastOutcome != 0 {
		ts.LastOutcome = time.Unix(0, st.lastOutcome)
	}
	return ts
}

// unixOrZero is ns as a time, zero for 0.
func unixOrZero(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
