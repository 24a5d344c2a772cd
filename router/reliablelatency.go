package router

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// reliabilityAt is what reliable-latency reads: per (target, upstream
// model), the mean and standard deviation of the logarithms of the live
// TTFB samples (in seconds), how many there are, and the weighted error rate
// of the recent attempts, as of now (from StrategyDeps.Now); ok is false
// with no live sample. The collector's tracker satisfies it.
type reliabilityAt interface {
	ReliabilityAt(target, model string, now time.Time) (logMean, logStd float64, samples int, errRate float64, ok bool)
}

// Tuning of reliable-latency.
const (
	// MaxErrorPenalty caps the factor an error rate multiplies a latency by
	// (SPEC section 5): even a target failing every attempt stays
	// comparable with one ten times slower, so it is retried now and then
	// and its recovery is seen.
	MaxErrorPenalty = 10.0
	// minLogStd floors the spread of the log latencies the posterior is
	// drawn with: one sample (spread 0), or several identical ones, must
	// not be taken for certainty.
	minLogStd = 0.1
)

// ReliableLatency is Thompson sampling over latency and reliability (SPEC
// section 5). Per request it draws each sampled target's typical latency
// from a LogNormal posterior (median exp(mu), mu ~ Normal(logMean,
// logStd/sqrt(n))), multiplies it by the error penalty 1/(1 − error rate),
// capped at MaxErrorPenalty, and orders by the result, lowest first. Targets
// without a live sample come first, shuffled (cold). Selection is leader when
// the draw puts first the target with the best current estimate (exp(logMean)
// times the penalty), explore otherwise: the posterior's spread is the
// exploration, so there is no separate exploration rate.
type ReliableLatency struct {
	// immutable after New
	src  reliabilityAt
	now  func() time.Time // the clock src reads
	rand Rand             // must be goroutine-safe
}

var _ Strategy = (*ReliableLatency)(nil)

func init() {
	registerStrategy("reliable-latency", func(d StrategyDeps) Strategy {
		src, ok := d.Latency.(reliabilityAt)
		if !ok {
			// A source with only a p50 (or none): rank as least-latency.
			l := NewLeastLatency(d.Latency, d.Rand)
			l.now = d.Now
			return l
		}
		r := NewReliableLatency(src, d.Rand)
		r.now = d.Now
		return r
	})
}

// NewReliableLatency returns the strategy reading src, whose clock is
// time.Now. A nil r means DefaultRand.
func NewReliableLatency(src reliabilityAt, r Rand) *ReliableLatency {
	if r == nil {
		r = DefaultRand
	}
	return &ReliableLatency{src: src, now: time.Now, rand: r}
}

// Order implements Strategy.
func (s *ReliableLatency) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	// Per eligible candidate: the drawn score (-1: no live sample) and the
	// current estimate; then the sampled part's scores aligned with its
	// place in out. Stack buffers keep the common case allocation-free.
	var drawBuf, estBuf, rankBuf [rankedCap]float64
	draws, ests, rank := drawBuf[:0], estBuf[:0], rankBuf[:0]
	if n > rankedCap {
		draws, ests, rank = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	}
	now := s.now()
	best, bestEst := -1, math.Inf(1)
	for i, c := range eligible {
		logMean, logStd, samples, errRate, ok := s.src.ReliabilityAt(c.Target, c.Model, now)
		if !ok && errRate > 0 {
			// Failing, never answering: not "unmeasured" but the worst known.
			// It ranks last, after every target with a latency.
			draws, ests = append(draws, math.MaxFloat64), append(ests, math.MaxFloat64)
			if best < 0 {
				best = i
			}
			continue
		}
		if !ok {
			draws, ests = append(draws, -1), append(ests, -1)
			continue
		}
		penalty := errorPenalty(errRate)
		mu := posteriorDraw(logMean, logStd, samples, s.rand.Float64(), s.rand.Float64())
		est := math.Exp(logMean) * penalty
		draws, ests = append(draws, math.Exp(mu)*penalty), append(ests, est)
		if est < bestEst { // ties: the first declared
			best, bestEst = i, est
		}
	}

	base := len(dst)
	dst, cold := rankByScore(dst, eligible, draws, rank)
	out := dst[base:]
	sampled := out[cold:]
	if cold > 0 {
		shuffle(out[:cold], s.rand)
		return dst, telemetry.SelectionCold
	}
	if sampled[0] == eligible[best] {
		return dst, telemetry.SelectionLeader
	}
	return dst, telemetry.SelectionExplore
}

// errorPenalty is the factor a weighted error rate multiplies a latency by:
// 1/(1 − errRate), capped at MaxErrorPenalty (which an error rate of 1, or
// more, or NaN, gets). A rate of 0 or below is no penalty.
func errorPenalty(errRate float64) float64 {
	if errRate <= 0 {
		return 1
	}
	if !(errRate < 1) { // also NaN
		return MaxErrorPenalty
	}
	return min(1/(1-errRate), MaxErrorPenalty)
}

// posteriorDraw draws the log of a target's typical latency from the
// posterior of the mean of its n log samples, Normal(logMean,
// max(logStd, minLogStd)/sqrt(n)), from two uniform draws in [0, 1).
func posteriorDraw(logMean, logStd float64, n int, u1, u2 float64) float64 {
	sd := max(logStd, minLogStd) / math.Sqrt(float64(max(n, 1)))
	return logMean + sd*standardNormal(u1, u2)
}

// standardNormal turns two uniform draws in [0, 1) into one standard normal
// one (Box–Muller). It takes the logarithm of 1 − u1, not of u1, so that 0,
// which Float64 can return, gives a finite value: the largest magnitude it
// gives is about 8.57, for u1 just below 1.
func standardNormal(u1, u2 float64) float64 {
	return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
}
