package router

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// ExploreEvery is the least-latency exploration rate's denominator: with
// probability 1/ExploreEvery a sampled runner-up leads instead of the leader,
// so a target that got faster is noticed.
const ExploreEvery = 10

// LeastLatency orders by the lowest p50 time to first byte (SPEC section 5):
// targets without a live sample first, shuffled, so new or forgotten targets
// are measured at once; then sampled ones by ascending p50, ties in
// declaration order. Once every eligible target is sampled and there are at
// least two, one request in ten is led by a uniformly random non-leader.
type LeastLatency struct {
	// immutable after New
	latency LatencySource
	at      latencyAt        // latency, when it can answer as of an instant
	ewma    ewmaAt           // set: rank on the EWMA instead of the p50 (ewma-latency)
	now     func() time.Time // the clock latency reads
	rand    Rand             // must be goroutine-safe
	explore bool             // one request in ExploreEvery led by a runner-up
}

var _ Strategy = (*LeastLatency)(nil)

func init() {
	registerStrategy("least-latency", func(d StrategyDeps) Strategy {
		l := NewLeastLatency(d.Latency, d.Rand)
		l.now = d.Now
		return l
	})
}

// NewLeastLatency returns the strategy reading latency from src, whose
// clock is time.Now.
func NewLeastLatency(src LatencySource, r Rand) *LeastLatency {
	if r == nil {
		r = DefaultRand
	}
	at, _ := src.(latencyAt)
	return &LeastLatency{latency: src, at: at, now: time.Now, rand: r, explore: true}
}

// score is the figure a candidate ranks on, as of now; ok is false when it
// has no live sample.
func (l *LeastLatency) score(c *Candidate, now time.Time) (time.Duration, bool) {
	var (
		v  time.Duration
		ok bool
	)
	switch {
	case l.ewma != nil:
		v, _, ok = l.ewma.EWMAAt(c.Target, c.Model, now)
	case l.at != nil:
		v, _, ok = l.at.P50At(c.Target, c.Model, now)
	case l.latency != nil:
		v, _, ok = l.latency.P50(c.Target, c.Model)
	}
	return v, ok
}

// rankedCap is how many candidates Order ranks without allocating.
const rankedCap = 16

// Order implements Strategy.
func (l *LeastLatency) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	// p50 per eligible candidate (-1: no live sample), then the sampled
	// part's p50s aligned with its place in out. Stack buffers keep the
	// common case allocation-free.
	var p50Buf, latBuf [rankedCap]time.Duration
	p50s, lat := p50Buf[:0], latBuf[:0]
	if n > rankedCap {
		p50s, lat = make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	}
	var now time.Time
	if l.at != nil || l.ewma != nil {
		now = l.now()
	}
	for _, c := range eligible {
		p := time.Duration(-1)
		if v, ok := l.score(c, now); ok {
			p = v
		}
		p50s = append(p50s, p)
	}

	base := len(dst)
	dst, cold := rankByScore(dst, eligible, p50s, lat)
	out := dst[base:]
	if cold > 0 {
		shuffle(out[:cold], l.rand)
		return dst, telemetry.SelectionCold
	}
	if l.explore && n >= 2 && l.rand.IntN(ExploreEvery) == 0 {
		// A uniformly random non-leader leads; the rest keep p50 order.
		k := 1 + l.rand.IntN(n-1)
		pick := out[k]
		copy(out[1:k+1], out[:k])
		out[0] = pick
		return dst, telemetry.SelectionExplore
	}
	return dst, telemetry.SelectionLeader
}

// shuffle is Fisher-Yates with the injected source.
func shuffle(cs []*Candidate, r Rand) {
	for i := len(cs) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		cs[i], cs[j] = cs[j], cs[i]
	}
}
