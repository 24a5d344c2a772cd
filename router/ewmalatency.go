package router

import "time"

// ewmaAt is what ewma-latency reads: an exponentially weighted moving
// average (alpha 0.3) of the same live samples the p50 is taken over. The
// collector's tracker satisfies it.
type ewmaAt interface {
	EWMAAt(target, model string, now time.Time) (ewma time.Duration, samples int, ok bool)
}

// ewma-latency (SPEC section 5) ranks like least-latency, unmeasured targets
// first, but on the EWMA, which follows a change in a few samples where the
// p50 of 100 needs half of them; there is no exploration. With a latency
// source that has no EWMA it ranks on the p50.
func init() {
	registerStrategy("ewma-latency", func(d StrategyDeps) Strategy {
		l := NewLeastLatency(d.Latency, d.Rand)
		l.now, l.explore = d.Now, false
		l.ewma, _ = d.Latency.(ewmaAt)
		return l
	})
}
