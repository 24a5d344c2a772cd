package study

import (
	"math"
	"slices"
	"time"
)

// The oracle is the yardstick every mode is compared with: for each
// request, the fixed order of the targets that minimizes the expected time
// to a first byte, computed from every target's true behaviour at the
// request's start (which no mode can know). Trying targets in order, each
// attempt costs its expected duration and succeeds with probability q, so
// an order's expected time is
//
//	E[d1] + (1−q1)·E[d2] + (1−q1)(1−q2)·E[d3] + ...
//
// with, for a target whose successes are log-normal (median m, sigma s)
// under a first-byte timeout T, faulting with probability F after f:
//
//	q    = (1−F)·Φ(z)                       z = ln(T/m)/s
//	E[d] = (1−F)·(m·e^(s²/2)·Φ(z−s) + T·(1−Φ(z))) + F·min(f, T)
//
// (a hung target: q = 0, E[d] = T). Swapping two neighbours i, j changes
// the sum by q_j·E[d_i] − q_i·E[d_j], so the best order sorts the targets by
// E[d]/q ascending (a target that never succeeds last), ties in declaration
// order; the tests check it against every permutation. The oracle has no
// circuit breaker: it never needs one, since it knows which target fails.

// attemptCost is a target's success probability and expected attempt
// duration (seconds) under b with first-byte timeout firstByte.
func attemptCost(b Behaviour, firstByte time.Duration) (q, seconds float64) {
	T := firstByte.Seconds()
	if b.Hang {
		return 0, T
	}
	if b.Status != 0 {
		return 0, QuickFault.Seconds()
	}
	m := b.Median.Seconds()
	sg := b.sigma()
	z := math.Log(T/m) / sg
	inTime := phi(z)
	successPart := m*math.Exp(sg*sg/2)*phi(z-sg) + T*(1-inTime)
	if b.SpikeRate > 0 { // the mean of a spiked answer, ignoring the timeout (far beyond)
		successPart *= 1 + b.SpikeRate*(b.SpikeFactor-1)
	}
	q = (1 - b.FaultRate) * inTime
	seconds = (1-b.FaultRate)*successPart + b.FaultRate*min(b.FaultAfter.Seconds(), T)
	return q, seconds
}

// phi is the standard normal distribution function.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// orderCost is the expected time (seconds) until a first byte, or until
// every target failed, when the targets are tried in order.
func orderCost(order []int, q, cost []float64) float64 {
	total, reach := 0.0, 1.0
	for _, i := range order {
		total += reach * cost[i]
		reach *= 1 - q[i]
	}
	return total
}

// knowledge is what the oracle knows of the providers' state beyond their
// behaviour: which rate-limited targets take an attempt at t (room), and
// which hold a conversation's prompt prefix (cached). A nil func knows
// nothing: room always, cached never.
type knowledge struct {
	room   func(i int, t time.Duration) bool
	cached func(i, conv int, t time.Duration) bool
}

// request is knowledge for one request, of conversation conv (-1: none).
type request struct {
	knowledge
	conv   int
	tokens int // its answer's length (0: not simulated)
}

// at is k for a request of conversation conv (-1: none).
func (k knowledge) at(conv int) request { return request{k, conv, 0} }

// oracleOrder appends to dst the order of the targets in the config at t
// with the least expected time to a first byte, and returns that time in
// seconds.
func oracleOrder(dst []int, s *Scenario, t time.Duration) ([]int, float64) {
	return oracleOrderAt(dst, s, t, request{conv: -1})
}

// oracleOrderAt is oracleOrder knowing, through k, which rate-limited
// targets take an attempt at t (one that would refuse it goes last, as if
// it failed) and which providers hold the request's prompt prefix (a
// cached prefix's time is CacheSpeedup of a cold one's).
func oracleOrderAt(dst []int, s *Scenario, t time.Duration, k request) ([]int, float64) {
	q := make([]float64, len(s.Targets))
	cost := make([]float64, len(s.Targets))
	base := len(dst)
	for i := range s.Targets {
		if s.active(i, t) {
			dst = append(dst, i)
			b := s.Behave(i, t)
			if k.conv >= 0 && k.cached != nil && k.cached(i, k.conv, t) {
				b.Median = time.Duration(float64(b.Median) * CacheSpeedup)
			}
			q[i], cost[i] = attemptCost(b, s.FirstByte)
			cost[i] += q[i] * generation(b, k.tokens).Seconds() // a success streams its answer
			if b.Limit > 0 && k.room != nil && !k.room(i, t) {
				q[i] = 0
			}
		}
	}
	order := dst[base:]
	// Stable, so ties keep declaration order. E[d]/q compared as
	// E[d_i]·q_j < E[d_j]·q_i, which also puts q = 0 last.
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := cost[i]*q[j], cost[j]*q[i]
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	return dst, orderCost(order, q, cost)
}
