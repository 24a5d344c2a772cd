package routinge2e

import (
	"math"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The oracle is the best fixed order knowing every target's distribution:
// at each moment, the order of the targets that minimizes the expected time
// to a first byte, failed attempts included. A run of the oracle sends it in
// X-Firstbyte-Provider-Order, switching at each phase change.

// behaviour is what a target does at one moment: its phase's TTFB and
// errors.
type behaviour struct {
	ttfb   sim.Dist
	errors sim.ErrorRate
}

// behaviourAt resolves p's phases at t (time since the clients started).
func behaviourAt(p sim.Provider, t time.Duration) behaviour {
	b := behaviour{ttfb: p.TTFB, errors: p.Errors}
	for _, ph := range p.Phases {
		if t < ph.After {
			break
		}
		if ph.TTFB != nil {
			b.ttfb = *ph.TTFB
		}
		if ph.Errors != nil {
			b.errors = *ph.Errors
		}
	}
	return b
}

// attemptCost is one attempt's expected duration (seconds) and the
// probability that it fails over, given the first-byte timeout (seconds;
// +Inf for none).
func (b behaviour) attemptCost(timeout float64) (seconds, fail float64) {
	m, s := b.ttfb.Median.Seconds(), b.ttfb.Spread
	answer := expectedMin(m, s, timeout) // a success's or a TTFB-timed error's wait
	inTime := probBelow(m, s, timeout)
	errWait := answer
	if b.errors.After > 0 {
		errWait = min(b.errors.After.Seconds(), timeout)
	}
	pe := b.errors.Rate
	return (1-pe)*answer + pe*errWait, 1 - (1-pe)*inTime
}

// expectedMin is E[min(X, T)] for X log-normal with median m and sigma s.
func expectedMin(m, s, T float64) float64 {
	if m <= 0 {
		return 0
	}
	if s == 0 {
		return min(m, T)
	}
	if math.IsInf(T, 1) {
		return m * math.Exp(s*s/2)
	}
	z := math.Log(T/m) / s
	return m*math.Exp(s*s/2)*phi(z-s) + T*(1-phi(z))
}

// probBelow is P(X < T) for X log-normal with median m and sigma s.
func probBelow(m, s, T float64) float64 {
	switch {
	case math.IsInf(T, 1), m <= 0:
		return 1
	case s == 0:
		if m < T {
			return 1
		}
		return 0
	}
	return phi(math.Log(T/m) / s)
}

// phi is the standard normal CDF.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// ExpectedTTFB is the expected time to a first byte (seconds) of trying
// order at t: each attempt's expected duration, weighted by the chance
// that every attempt before it failed over.
func (s Scenario) ExpectedTTFB(order []string, t time.Duration) float64 {
	timeout := math.Inf(1)
	if s.FirstByte > 0 {
		timeout = s.FirstByte.Seconds()
	}
	total, reach := 0.0, 1.0
	for _, name := range order {
		for _, p := range s.Targets {
			if p.Name != name {
				continue
			}
			secs, fail := behaviourAt(p, t).attemptCost(timeout)
			total += reach * secs
			reach *= fail
		}
	}
	return total
}

// OracleOrder is the order of the targets with the least expected TTFB at
// t; ties keep declaration order.
func (s Scenario) OracleOrder(t time.Duration) []string {
	names := make([]string, len(s.Targets))
	for i, p := range s.Targets {
		names[i] = p.Name
	}
	var best []string
	bestCost := math.Inf(1)
	permute(names, 0, func(order []string) {
		if c := s.ExpectedTTFB(order, t); c < bestCost-1e-12 {
			best, bestCost = append(best[:0], order...), c
		}
	})
	return best
}

// OracleHeader is the X-Firstbyte-Provider-Order value of the oracle at t.
func (s Scenario) OracleHeader(t time.Duration) string {
	return strings.Join(s.OracleOrder(t), ",")
}

// permute calls f with every ordering of xs[k:] (xs[:k] fixed); the first
// is xs as given, so declaration order wins ties.
func permute(xs []string, k int, f func([]string)) {
	if k == len(xs) {
		f(xs)
		return
	}
	for i := k; i < len(xs); i++ {
		xs[k], xs[i] = xs[i], xs[k]
		permute(xs, k+1, f)
		xs[k], xs[i] = xs[i], xs[k]
	}
}
