// Package stats holds what the spans have taught about one target: the
// figures every routing mode ranks on. The collector's tracker computes
// them; the router reads them through an interface of its own. It lives
// apart from both so neither imports the other, and it computes nothing.
package stats

import "time"

// Target is what the spans have taught about one (target, upstream
// model) as of an instant: the figures every routing mode ranks on. The
// collector's tracker computes it; the router reads it through an interface
// of its own. It lives here, in the vocabulary both share, so the tracker
// satisfies the router's interface without either importing the other.
//
// Everything is over the live data: the last 100 latency samples and the
// last 100 attempt outcomes of the last 5 minutes.
type Target struct {
	// Samples is how many live latency samples there are (successful
	// attempts); P50 is element ⌊n/2⌋ of them sorted ascending.
	Samples int
	P50     time.Duration
	// P75, P90, P95 and P99 are elements ⌊q·n⌋ of the same sorted samples
	// (Quantile reads them by q): how late is late for this target, the
	// hedge's trigger.
	P75, P90, P95, P99 time.Duration
	// CensoredP99 is the p99 of the samples and the censored observations
	// together (hedges' cancelled losers, each at the time such an attempt
	// is expected to take): how late the target can be, the slow attempts
	// hedges cancelled included. P99 when there are none.
	CensoredP99 time.Duration
	// EWMA is the exponentially weighted moving average (alpha 0.3) of the
	// samples in the order they were taken, with every timed-out attempt
	// counted as a sample of the time it cost.
	EWMA time.Duration
	// LogMean and LogStd are the recency-weighted mean and standard
	// deviation of ln(sample in seconds), each sample weighing
	// 2^(-age/RecencyHalfLife) relative to the newest; LogWeight is the sum
	// of those weights (1 for the newest sample alone).
	LogMean, LogStd, LogWeight float64
	// Newest and Oldest are when the newest and oldest live samples were
	// taken (zero with none).
	Newest, Oldest time.Time

	// Outcomes is how many live attempt outcomes there are (successes and
	// faults; ends that say nothing of the provider are not outcomes).
	// Faults is the sum of their Fault weights, FaultRate Faults/Outcomes.
	Outcomes  int
	Faults    float64
	FaultRate float64
	// WeightedOutcomes and WeightedFaults are the same counts with each
	// outcome weighing 2^(-age/RecencyHalfLife) relative to the newest.
	WeightedOutcomes, WeightedFaults float64
	// FaultSeconds is the mean duration of the live faults: what a fault of
	// this target costs a request before it can fail over.
	FaultSeconds float64
	// LastOutcome is when the newest live outcome was taken (zero with none).
	LastOutcome time.Time
	// Unsampled is how many live attempts gave no latency sample (a fault,
	// an answer handed to the client as its own error, a cancel, a cache
	// hit, a lost hedge: whatever the outcome), counted up to ColdTries.
	Unsampled int

	// Late is how many live censored observations there are: attempts
	// cancelled without a first byte because another attempt of their
	// request answered first (hedge_lost). They are not outcomes (the
	// failure model says nothing of them): each says only that the target
	// was slower than it had waited, LateSeconds on average.
	// WeightedLate is their count, each weighing 2^(-age/RecencyHalfLife)
	// relative to the newest, taken at LastLate (zero with none).
	Late                      int
	WeightedLate, LateSeconds float64
	LastLate                  time.Time

	// Where the live samples came from: this instance's own attempts, peer
	// gateways' spans, and foreign (application) spans.
	SelfSamples, PeerSamples, ForeignSamples int

	// Load is the target's load curve: Load[k-1] is the recent mean
	// relative time to first byte of samples that started with k attempts
	// in flight at the target (all instances'; the last level holds
	// k >= LoadLevels), each sample's time over the curve's lowest level's
	// when it was taken; 0 where there is none (LoadFactor reads it).
	// Relative, so a target that got slower or faster at every load keeps
	// its curve: only how it fares under load is in it.
	// PeerInflight is how many attempts peer gateways have in flight
	// there now, as their latest spans said.
	Load         [LoadLevels]float64
	PeerInflight int
}

// RecencyHalfLife is the half-life of the recency weights in Target:
// a sample this old weighs half as much as one taken now. reliable-latency
// ranks on recency-weighted figures so its estimate follows a provider that
// changed within seconds, and its posterior widens as the data ages.
const RecencyHalfLife = time.Second

// OnlyFaults reports whether the target has failed but never answered in
// the live window: not unmeasured, the worst known.
func (s *Target) OnlyFaults() bool { return s.Samples == 0 && s.Faults > 0 }

// ColdTries is how many attempts without a sample end a target's claim
// to be unmeasured: after them it ranks after every sampled target, so a
// target whose every answer teaches nothing (a wrong endpoint relayed as
// the client's 404, a client that always leaves) cannot lead forever.
const ColdTries = 3

// RanksLast reports whether the target, though it has no live sample, is
// not unmeasured but the worst known: it only faulted, or it was tried
// ColdTries times without a sample, whatever the outcomes.
func (s *Target) RanksLast() bool {
	return s.Samples == 0 && (s.Faults > 0 || s.Unsampled >= ColdTries)
}

// LastSeen is when anything was last learned about the target: its newest
// sample or outcome (zero when nothing is live).
func (s *Target) LastSeen() time.Time {
	if s.LastOutcome.After(s.Newest) {
		return s.LastOutcome
	}
	return s.Newest
}

// Quantiles are the quantiles Target carries, and Quantile reads.
var Quantiles = []float64{0.5, 0.75, 0.9, 0.95, 0.99}

// Quantile is the live samples' quantile q, one of Quantiles (0 for any
// other q, or with no sample).
func (s *Target) Quantile(q float64) time.Duration {
	switch q {
	case 0.5:
		return s.P50
	case 0.75:
		return s.P75
	case 0.9:
		return s.P90
	case 0.95:
		return s.P95
	case 0.99:
		return s.P99
	}
	return 0
}

// LoadLevels is how many in-flight levels a target's load curve keeps: the
// last holds every level from it up.
const LoadLevels = 16

// LoadFactor is how much slower than when it is idle the load curve says
// the target answers a request that finds k attempts in flight there
// (itself included): curve(k)/curve(1), at least 1. The curve (Load) holds
// the recent mean relative time to first byte by the load each sample
// started at; a level without data is read from the nearest level below
// it that has some: optimistic, so load goes where it has not been tried until the
// curve shows a queue there. With no data at level 1, the lowest level
// that has data stands for it; with none at all, 1.
func (s *Target) LoadFactor(k int) float64 {
	base := 0
	for i, d := range s.Load {
		if d > 0 {
			base = i + 1
			break
		}
	}
	if base == 0 || k <= base {
		return 1
	}
	k = min(k, LoadLevels)
	j := k
	for j > base && s.Load[j-1] == 0 {
		j--
	}
	return max(s.Load[j-1]/s.Load[base-1], 1)
}
