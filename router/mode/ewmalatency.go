package mode

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// ewmaProbeEvery is how stale ewma-latency lets a runner-up's estimate get
// before one request re-measures it.
const ewmaProbeEvery = 500 * time.Millisecond

// ewmaLatency ranks like least-latency, unmeasured targets first (shuffled)
// and targets that only faulted (or were tried stats.ColdTries times
// without a sample) last, but on an exponentially weighted moving average
// (alpha 0.3) of the same samples, in which a timed-out attempt counts as
// a sample of the time it cost: it
// follows a change within a few samples where a p50 of 100 needs half of
// them. It has no random exploration; instead a runner-up whose newest data
// is older than ewmaProbeEvery leads one request (explore), so a target that
// recovered, or whose estimate one slow answer spoiled, is measured again.
type ewmaLatency struct {
	// immutable after New
	stats StatsSource
	now   func() time.Time
	rand  Rand // shuffles the unmeasured; must be goroutine-safe
	every time.Duration
}

var _ Strategy = (*ewmaLatency)(nil)

func init() {
	register("ewma-latency", true, func(d Deps) Strategy {
		return &ewmaLatency{stats: d.Stats, now: d.Now, rand: d.Rand, every: ewmaProbeEvery}
	})
}

// scores fills one score per eligible candidate (nanoseconds of EWMA;
// noScore unmeasured; unscoredLast only faults, none of them timeouts, or tried without a sample) and
// when each last taught anything.
func (e *ewmaLatency) scores(dst []float64, seen []time.Time, eligible []*Candidate, now time.Time) ([]float64, []time.Time) {
	for _, c := range eligible {
		st := e.stats.StatsAt(c.Target, c.Model, now)
		seen = append(seen, st.LastSeen())
		switch {
		case st.Samples > 0 || st.EWMA > 0:
			dst = append(dst, float64(st.EWMA)*LoadFactor(c, &st))
		case st.RanksLast():
			dst = append(dst, unscoredLast)
		default:
			dst = append(dst, noScore)
		}
	}
	return dst, seen
}

// Order implements Strategy.
func (e *ewmaLatency) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	var buf probeScratch
	scores, scratch, seen, _, _ := buf.slices(n)
	now := e.now()
	scores, seen = e.scores(scores, seen, eligible, now)
	dst, selection := orderByScoreProbing(dst, eligible, scores, scratch, seen, now, e.rand, &buf, func(int) time.Duration { return e.every })
	if selection == "" {
		spreadNearTie(dst[len(dst)-n:], scratch[:n], e.stats, now, e.rand)
		selection = telemetry.SelectionLeader
	}
	return dst, selection
}

// Rank implements Strategy: by EWMA (seconds), unmeasured first.
func (e *ewmaLatency) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	scores, _ := e.scores(make([]float64, 0, len(eligible)), make([]time.Time, 0, len(eligible)), eligible, e.now())
	return rankedFromScores(dst, eligible, scores, float64(time.Second))
}
