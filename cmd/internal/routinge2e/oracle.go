package routinge2e

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The oracle is the best fixed order knowing every target's distribution:
// at each moment, the order of the targets that minimizes the expected time
// to a first byte, failed attempts included. A run of the oracle sends it in
// X-Firstbyte-Provider-Order, switching at each phase change.

// behaviour is what a target does at one moment: its phase's TTFB and
// errors, or, when its rate limit has no room left (full), a refusal after
// refusal.
type behaviour struct {
	ttfb    sim.Dist
	spikes  sim.Spikes
	errors  sim.ErrorRate
	full    bool
	refusal time.Duration
}

// behaviourAt resolves p's phases at t (time since the clients started).
func behaviourAt(p sim.Provider, t time.Duration) behaviour {
	b := behaviour{ttfb: p.TTFB, errors: p.Errors, spikes: p.Spikes}
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
	if b.full {
		return min(b.refusal.Seconds(), timeout), 1
	}
	m, s := b.ttfb.Median.Seconds(), b.ttfb.Spread
	answer := expectedMin(m, s, timeout) // a success's or a TTFB-timed error's wait
	if sp := b.spikes; sp.Rate > 0 {     // a spiked answer's mean, the timeout ignored (as the study's)
		answer *= 1 + sp.Rate*(sp.Factor-1)
	}
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
// that every attempt before it failed over. Rate limits have room.
func (s Scenario) ExpectedTTFB(order []string, t time.Duration) float64 {
	return s.ExpectedTTFBFull(order, t, nil)
}

// ExpectedTTFBFull is ExpectedTTFB when the rate limits of the targets in
// full have no room left: an attempt on one of them is refused.
func (s Scenario) ExpectedTTFBFull(order []string, t time.Duration, full []string) float64 {
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
			b := behaviourAt(p, t)
			if slices.Contains(full, name) && p.RateLimit != nil {
				b.full, b.refusal = true, p.RateLimit.After
			}
			secs, fail := b.attemptCost(timeout)
			total += reach * secs
			reach *= fail
		}
	}
	return total
}

// OracleOrder is the order of the targets with the least expected TTFB at
// t, rate limits having room; ties keep declaration order.
func (s Scenario) OracleOrder(t time.Duration) []string { return s.OracleOrderFull(t, nil) }

// OracleOrderFull is OracleOrder when the rate limits of the targets in
// full have no room left.
func (s Scenario) OracleOrderFull(t time.Duration, full []string) []string {
	names := make([]string, len(s.Targets))
	for i, p := range s.Targets {
		names[i] = p.Name
	}
	var best []string
	bestCost := math.Inf(1)
	permute(names, 0, func(order []string) {
		if c := s.ExpectedTTFBFull(order, t, full); c < bestCost-1e-12 {
			best, bestCost = append(best[:0], order...), c
		}
	})
	return best
}

// Limited names the targets with a request limit, in declaration order.
func (s Scenario) Limited() []string {
	var names []string
	for _, p := range s.Targets {
		if p.RateLimit != nil && p.RateLimit.Requests > 0 {
			names = append(names, p.Name)
		}
	}
	return names
}

// Oracle returns the oracle of one run: the X-Firstbyte-Provider-Order of
// a request sent at t. It knows the rate limits: a limited target leads
// while it has room in the current window, the oracle counting the requests
// it sent it first as the provider counts them (whole windows of the
// clock); past its limit the target goes where a refusal puts it. Token
// limits are not counted. Safe for concurrent use; a fresh one for every
// run.
func (s Scenario) Oracle() func(t time.Duration) string {
	o := &oracle{s: s, windows: map[string]time.Time{}, sent: map[string]int{}}
	return o.header
}

type oracle struct {
	s Scenario // immutable

	mu      sync.Mutex           // guards the fields below
	windows map[string]time.Time // limited target -> the window its count is for
	sent    map[string]int       // limited target -> requests it led in that window
}

func (o *oracle) header(t time.Duration) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var full []string
	for _, p := range o.s.Targets {
		l := p.RateLimit
		if l == nil || l.Requests == 0 {
			continue
		}
		window := l.Window
		if window == 0 {
			window = sim.DefaultRateWindow
		}
		if w := clockBase.Add(t).Truncate(window); !w.Equal(o.windows[p.Name]) {
			o.windows[p.Name], o.sent[p.Name] = w, 0
		}
		if o.sent[p.Name] >= l.Requests {
			full = append(full, p.Name)
		}
	}
	order := o.s.OracleOrderFull(t, full)
	if _, limited := o.windows[order[0]]; limited {
		o.sent[order[0]]++
	}
	return strings.Join(order, ",")
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
