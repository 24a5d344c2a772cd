package mode

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Tuning of reliable-latency.
const (
	// maxErrorPenalty caps the factor a fault rate multiplies a latency by:
	// even a target failing every attempt stays comparable with one ten
	// times slower, so it is retried now and then and its recovery is seen.
	maxErrorPenalty = 10.0
	// minLogStd floors the spread of the log latencies the posterior is
	// drawn with: one sample (spread 0), or several identical ones, must
	// not be taken for certainty.
	minLogStd = 0.1
	// maxLogSpread caps the posterior's spread of the log latency once its
	// evidence has aged away: wide enough to re-try anything, finite.
	maxLogSpread = 3.0
	// The Beta prior of a fault rate: what half an attempt's worth of fault
	// and two of success say before any data (mean 0.2). A handful of
	// unlucky attempts moves it, never settles it.
	faultPriorFaults    = 0.5
	faultPriorSuccesses = 2.0
	// reliableProbeEvery is the safety net for targets the posterior alone
	// does not bring back: a runner-up whose newest data is this old leads
	// one request.
	reliableProbeEvery = 5 * time.Second
	// onlyFaultsProbeEvery is how soon a target whose live outcomes are only
	// faults is tried again: it has no latency to draw, so its posterior
	// cannot bring it back, and one unlucky first attempt must not shut a
	// good target out.
	onlyFaultsProbeEvery = time.Second
)

// reliableLatency is Thompson sampling over latency and reliability. Per
// request it draws, for each measured target, a typical latency L from a
// LogNormal posterior of its samples and a fault rate f from a Beta
// posterior of its outcomes, and ranks by the expected time to a first
// byte when trying it: L/(1-f) (the penalty capped at maxErrorPenalty) plus
// the faults expected first, f/(1-f), times what a fault of this target
// costs (the mean duration of its live faults). A target failing fast
// costs little; one failing after 300 ms costs a lot. Every figure is
// recency-weighted (half-life stats.RecencyHalfLife) and the evidence
// decays with the age of the newest data, so a posterior widens while a
// target gets no traffic and it is re-tried; a handful of unlucky attempts
// never shuts a target out.
//
// Targets without live data lead (cold, shuffled); targets that only
// faulted rank last. Selection is leader when the draw puts first the
// target with the best current estimate (the same formula on the
// posteriors' means), explore otherwise: the posteriors' spread is the
// exploration, so there is no fixed exploration rate.
type reliableLatency struct {
	// immutable after New
	stats StatsSource
	now   func() time.Time
	rand  Rand // must be goroutine-safe
	every time.Duration
}

var _ Strategy = (*reliableLatency)(nil)

func init() {
	register("reliable-latency", true, func(d Deps) Strategy {
		return newReliableLatency(d.Stats, d.Now, d.Rand)
	})
}

// newReliableLatency returns the strategy reading src, whose clock is now;
// New fills a nil now or r.
func newReliableLatency(src StatsSource, now func() time.Time, r Rand) *reliableLatency {
	return &reliableLatency{stats: src, now: now, rand: r, every: reliableProbeEvery}
}

// posterior is one target's evidence as of now.
type posterior struct {
	logMean, logSpread float64 // of the typical latency's log (seconds)
	faultA, faultB     float64 // Beta parameters of the fault rate
	faultSeconds       float64
}

// posteriorOf turns a target's statistics into its posterior as of now.
func posteriorOf(st *stats.Target, now time.Time) posterior {
	p := posterior{logMean: st.LogMean, faultSeconds: st.FaultSeconds}
	n := st.LogWeight * decay(now.Sub(st.Newest))
	p.logSpread = min(max(st.LogStd, minLogStd)/math.Sqrt(max(n, 1e-9)), maxLogSpread)
	d := decay(now.Sub(st.LastOutcome))
	// An attempt cancelled because a hedge answered first (censored: it
	// had waited that long without a first byte) counts as a fault of what
	// it had waited, what trying this target cost that request, when the
	// lates waited on average at least the target's p99: later than what
	// its answers show, a hang or a fault the samples do not foresee.
	// Lates within its p99 are its tail's ordinary bad luck, which its
	// samples already describe: counted as faults, they made a target
	// whose slow moments hedges rescue look worse than a slower one and
	// sent it fewer first picks (in the study's (tail), 84 % of the first
	// picks went to the fastest target with hedging against 93 % without;
	// 86-88 % counting only the lates beyond its p99).
	late := st.Late > 0 && st.LateSeconds >= st.P99.Seconds()
	p.faultA = faultPriorFaults + st.WeightedFaults*d
	if late {
		p.faultA += st.WeightedLate * decay(now.Sub(st.LastLate))
	}
	p.faultB = faultPriorSuccesses + max(0, st.WeightedOutcomes-st.WeightedFaults)*d
	if n := st.Faults + float64(st.Late); late {
		p.faultSeconds = (st.FaultSeconds*st.Faults + st.LateSeconds*float64(st.Late)) / n
	}
	return p
}

// decay is how much evidence of this age still counts: 2^(-age/half-life).
func decay(age time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(stats.RecencyHalfLife))
}

// expectedCost is the score: the expected time to a first byte when trying
// a target whose typical latency is latency seconds, whose fault rate is f
// and whose faults take faultSeconds: latency/(1-f), the factor capped at
// maxErrorPenalty, plus f/(1-f) faults (capped likewise) of faultSeconds.
func expectedCost(latency, f, faultSeconds float64) float64 {
	penalty := errorPenalty(f)
	return latency*penalty + (penalty-1)*faultSeconds
}

// errorPenalty is 1/(1 − f), capped at maxErrorPenalty (which a rate of 1,
// or more, or NaN, gets). A rate of 0 or below is no penalty.
func errorPenalty(f float64) float64 {
	if f <= 0 {
		return 1
	}
	if !(f < 1) { // also NaN
		return maxErrorPenalty
	}
	return min(1/(1-f), maxErrorPenalty)
}

// scores fills the drawn score of every eligible candidate (noScore cold,
// unscoredLast only faults or tried without a sample), when each last taught anything, and the index
// in eligible of the best current estimate (-1: none measured).
func (s *reliableLatency) scores(dst []float64, seen []time.Time, eligible []*Candidate, now time.Time, draw bool) ([]float64, []time.Time, int) {
	best, bestEst := -1, math.Inf(1)
	for i, c := range eligible {
		st := s.stats.StatsAt(c.Target, c.Model, now)
		seen = append(seen, st.LastSeen())
		switch {
		case st.RanksLast():
			dst = append(dst, unscoredLast)
			continue
		case st.Samples == 0:
			dst = append(dst, noScore)
			continue
		}
		p := posteriorOf(&st, now)
		load := LoadFactor(c, &st)
		est := expectedCost(math.Exp(p.logMean)*load, p.faultA/(p.faultA+p.faultB), p.faultSeconds)
		if est < bestEst { // ties: the first declared
			best, bestEst = i, est
		}
		if !draw {
			dst = append(dst, est)
			continue
		}
		mu := p.logMean + p.logSpread*standardNormal(s.rand.Float64(), s.rand.Float64())
		f := betaDraw(p.faultA, p.faultB, s.rand)
		dst = append(dst, expectedCost(math.Exp(mu)*load, f, p.faultSeconds))
	}
	return dst, seen, best
}

// Order implements Strategy.
func (s *reliableLatency) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	var buf probeScratch
	scores, scratch, seen, _, _ := buf.slices(n)
	now := s.now()
	scores, seen, best := s.scores(scores, seen, eligible, now, true)
	base := len(dst)
	dst, selection := orderByScoreProbing(dst, eligible, scores, scratch, seen, now, s.rand, &buf, func(i int) time.Duration {
		if scores[i] == unscoredLast {
			return onlyFaultsProbeEvery
		}
		return s.every
	})
	if selection != "" {
		return dst, selection
	}
	spreadNearTie(dst[base:], scratch[:n], s.stats, now, s.rand)
	switch {
	case best >= 0 && dst[base] == eligible[best]:
		return dst, telemetry.SelectionLeader
	}
	return dst, telemetry.SelectionExplore
}

// Rank implements Strategy: by the current estimate (seconds: the
// expected time to a first byte), unmeasured first.
func (s *reliableLatency) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	scores, _, _ := s.scores(make([]float64, 0, len(eligible)), make([]time.Time, 0, len(eligible)), eligible, s.now(), false)
	return rankedFromScores(dst, eligible, scores, 1)
}

// standardNormal turns two uniform draws in [0, 1) into one standard normal
// one (Box–Muller). It takes the logarithm of 1 − u1, not of u1, so that 0,
// which Float64 can return, gives a finite value: the largest magnitude it
// gives is about 8.57, for u1 just below 1.
func standardNormal(u1, u2 float64) float64 {
	return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
}

// maxGammaTries bounds the rejection loop of gammaDraw; past it the draw
// is the mean (a probability far below 1e-30 with the Marsaglia–Tsang
// acceptance rate above 0.95).
const maxGammaTries = 32

// gammaDraw draws from Gamma(shape, 1), shape > 0, by Marsaglia and Tsang's
// method (with the shape+1 boost below 1).
func gammaDraw(shape float64, r Rand) float64 {
	if !(shape > 0) {
		return 0
	}
	boost := 1.0
	if shape < 1 {
		// Gamma(a) = Gamma(a+1) * U^(1/a)
		boost = math.Pow(1-r.Float64(), 1/shape)
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for range maxGammaTries {
		x := standardNormal(r.Float64(), r.Float64())
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64() // (0, 1]
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v * boost
		}
	}
	return shape * boost
}

// betaDraw draws from Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b).
func betaDraw(a, b float64, r Rand) float64 {
	x, y := gammaDraw(a, r), gammaDraw(b, r)
	if x+y <= 0 {
		return a / (a + b)
	}
	return x / (x + y)
}
