package mode

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// exploreEvery is the least-latency exploration rate's denominator: with
// probability 1/exploreEvery a measured runner-up leads instead of the leader,
// so a target that got faster is noticed.
const exploreEvery = 10

// leastLatency orders by the lowest p50 time to first byte: targets with no
// live sample first, shuffled, so new or forgotten targets are measured at
// once; then sampled ones by ascending p50, ties in declaration order; then
// targets whose live outcomes are only faults, or that were tried
// stats.ColdTries times without a sample whatever the outcomes (never
// answering usefully: not unmeasured but the worst known), in declaration
// order. When nothing is
// unmeasured and at least two targets are measured, one request in ten is
// led by a uniformly random non-leader (explore), a target that only
// faulted included, so one unlucky first attempt does not shut it out.
type leastLatency struct {
	// immutable after New
	stats StatsSource
	now   func() time.Time // the clock stats reads
	rand  Rand             // must be goroutine-safe
}

var _ Strategy = (*leastLatency)(nil)

func init() {
	register("least-latency", true, func(d Deps) Strategy {
		return newLeastLatency(d.Stats, d.Now, d.Rand)
	})
}

// newLeastLatency returns the strategy reading src, whose clock is now;
// New fills a nil now or r.
func newLeastLatency(src StatsSource, now func() time.Time, r Rand) *leastLatency {
	return &leastLatency{stats: src, now: now, rand: r}
}

// scores fills one score per eligible candidate (nanoseconds of p50;
// noScore when unmeasured, unscoredLast when it ranks last: stats.Target.RanksLast) and
// returns how many are measured (sampled, or ranked last).
func (l *leastLatency) scores(dst []float64, eligible []*Candidate, now time.Time) ([]float64, int) {
	measured := 0
	for _, c := range eligible {
		st := l.stats.StatsAt(c.Target, c.Model, now)
		switch {
		case st.Samples > 0:
			dst = append(dst, float64(st.P50)*LoadFactor(c, &st))
			measured++
		case st.RanksLast():
			dst = append(dst, unscoredLast)
			measured++
		default:
			dst = append(dst, noScore)
		}
	}
	return dst, measured
}

// Order implements Strategy.
func (l *leastLatency) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	// Stack buffers keep the common case allocation-free.
	var scoreBuf, sortBuf [RankedCap]float64
	scores, scratch := scoreBuf[:0], sortBuf[:0]
	if n > RankedCap {
		scores, scratch = make([]float64, 0, n), make([]float64, 0, n)
	}
	now := l.now()
	scores, measured := l.scores(scores, eligible, now)
	base := len(dst)
	dst, cold := rankByScore(dst, eligible, scores, scratch)
	out := dst[base:]
	if cold > 0 {
		shuffle(out[:cold], l.rand)
		return dst, telemetry.SelectionCold
	}
	if measured >= 2 && l.rand.IntN(exploreEvery) == 0 {
		// A uniformly random non-leader leads; the rest keep order. A target
		// that only faulted is among them: one unlucky first attempt must
		// not shut it out until its faults expire.
		Lead(out, 1+l.rand.IntN(measured-1))
		return dst, telemetry.SelectionExplore
	}
	spreadNearTie(out, scratch[:n], l.stats, now, l.rand)
	return dst, telemetry.SelectionLeader
}

// Rank implements Strategy: by p50 (seconds), unmeasured first.
func (l *leastLatency) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	scores, _ := l.scores(make([]float64, 0, len(eligible)), eligible, l.now())
	return rankedFromScores(dst, eligible, scores, float64(time.Second))
}
