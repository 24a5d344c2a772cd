package router

import (
	"math/rand/v2"
	"sort"
	"time"
)

// Candidate is one eligible way to serve a client model: a target (virtual
// key) and the upstream model it is asked for. Candidates are built once
// from the config and never change; requests share them.
type Candidate struct {
	Target string  // virtual key
	Model  string  // upstream model
	Index  int     // declaration order among the targets
	Weight float64 // loadbalance weight
	Tries  int     // 1 + retry.attempts

	upstream    *upstream         // runtime state of the provider (breaker, limiter)
	clientModel string            // the client-facing model this candidate serves
	spanNames   map[string]string // attempt span name by operation: "{operation} {upstream model}"
}

// spanName names an attempt span of operation, built once per candidate.
func (c *Candidate) spanName(operation string) string {
	if n, ok := c.spanNames[operation]; ok {
		return n
	}
	return operation + " " + c.Model
}

// Strategy orders the eligible candidates for one request. Order appends
// the order to dst (which the caller may pass with spare capacity so the
// hot path does not allocate) and says why the first one leads, as
// X-Firstbyte-Selection does. It must not block and must be safe for
// concurrent use.
type Strategy interface {
	Order(dst []*Candidate, model string, eligible []*Candidate) ([]*Candidate, string)
}

// LatencySource is how the router reads measured time to first byte. The
// collector's tracker satisfies it; cmd/firstbyte wires the two.
type LatencySource interface {
	// P50 returns the median TTFB of the live samples for (target, upstream
	// model) and how many there are; ok is false when there is none.
	P50(target, model string) (p50 time.Duration, samples int, ok bool)
}

// latencyAt is optionally implemented by a LatencySource that answers as of
// a given instant, so a strategy reads the clock once per request rather
// than once per candidate. now must come from the source's own clock
// (StrategyDeps.Now).
type latencyAt interface {
	P50At(target, model string, now time.Time) (p50 time.Duration, samples int, ok bool)
}

// Rand is the randomness a strategy draws from. Tests inject a seeded one;
// the default is the goroutine-safe runtime source.
type Rand interface {
	IntN(n int) int
	Float64() float64
}

type runtimeRand struct{}

func (runtimeRand) IntN(n int) int   { return rand.IntN(n) }
func (runtimeRand) Float64() float64 { return rand.Float64() }

// DefaultRand draws from math/rand/v2's goroutine-safe global source.
var DefaultRand Rand = runtimeRand{}

// StrategyDeps are what a strategy may need; each takes what it uses.
type StrategyDeps struct {
	Latency LatencySource
	Rand    Rand
	Now     func() time.Time // the clock the latency source also reads
}

type strategyFactory func(StrategyDeps) Strategy

// strategies are the modes by name; each strategy file registers itself.
var strategies = map[string]strategyFactory{}

func registerStrategy(mode string, f strategyFactory) { strategies[mode] = f }

// StrategyNames lists the registered modes, sorted.
func StrategyNames() []string {
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewStrategy builds the strategy registered under mode.
func NewStrategy(mode string, deps StrategyDeps) (Strategy, bool) {
	f, ok := strategies[mode]
	if !ok {
		return nil, false
	}
	if deps.Rand == nil {
		deps.Rand = DefaultRand
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return f(deps), true
}

// rankByScore appends eligible to dst ordered for a latency mode: the
// candidates without a score (scores[i] < 0) first, in declaration order,
// then the scored ones by ascending score, ties in declaration order. It
// returns the extended dst and how many unscored candidates lead it.
// scratch (len 0, enough capacity) holds the scored part's scores while they
// are sorted, so the caller decides whether that allocates.
func rankByScore[S ~int64 | ~float64](dst, eligible []*Candidate, scores, scratch []S) ([]*Candidate, int) {
	base := len(dst)
	dst = append(dst, eligible...)
	out := dst[base:]
	w := 0
	for i, c := range eligible {
		if scores[i] < 0 {
			out[w] = c
			w++
		}
	}
	unscored := w
	for i, c := range eligible {
		if scores[i] >= 0 {
			out[w] = c
			scratch = append(scratch, scores[i])
			w++
		}
	}
	scored := out[unscored:]
	for i := 1; i < len(scored); i++ { // insertion sort: stable, tiny n
		for j := i; j > 0 && scratch[j] < scratch[j-1]; j-- {
			scored[j], scored[j-1] = scored[j-1], scored[j]
			scratch[j], scratch[j-1] = scratch[j-1], scratch[j]
		}
	}
	return dst, unscored
}
