package routinge2e

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// The oracles of providers that react: where they queue, the best static
// split; where they cache prompts, the best fixed order knowing every
// provider's cache.

// SplitOracle sends each request first to a target drawn with the shares w
// (fast, mid, slow; summing to 1), the others following in declaration
// order, in X-Firstbyte-Provider-Order: a static split, which knows the
// providers' queues only through the mean they lead to. seed makes the
// draws the same in every run, so splits are compared on the same luck.
// Safe for concurrent use; a fresh one for every run.
func (s Scenario) SplitOracle(w []float64, seed uint64) Orderer {
	names := make([]string, len(s.Targets))
	for i, p := range s.Targets {
		names[i] = p.Name
	}
	return &splitOracle{names: names, w: w, rng: rand.New(rand.NewPCG(seed, 0x5b117))}
}

type splitOracle struct {
	names []string  // immutable
	w     []float64 // immutable

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

func (o *splitOracle) Order(time.Duration, int) string {
	o.mu.Lock()
	u := o.rng.Float64()
	o.mu.Unlock()
	i := 0
	for i < len(o.w)-1 && u >= o.w[i] {
		u -= o.w[i]
		i++
	}
	order := []string{o.names[i]}
	for j, n := range o.names {
		if j != i {
			order = append(order, n)
		}
	}
	return strings.Join(order, ",")
}

func (o *splitOracle) Served(int, string, time.Duration) {}

// SplitMoves are the splits one move of step (a share) from one target to
// another away from w, in a fixed order: the neighbours the oracle's small
// search tries beside w.
func SplitMoves(w []float64, step float64) [][]float64 {
	var out [][]float64
	for from := range w {
		for to := range w {
			if from == to || w[from] < step-1e-9 {
				continue
			}
			m := append([]float64(nil), w...)
			m[from] = math.Round((m[from]-step)*100) / 100
			m[to] = math.Round((m[to]+step)*100) / 100
			out = append(out, m)
		}
	}
	return out
}

// CacheOracle is the cache-aware oracle of one run: for each request, the
// order with the least expected TTFB knowing which providers hold its
// conversation's prefix (they served it within CacheTTL: a cached prefix's
// median is CacheSpeedup of the target's). It learns who served what from
// the run's own answers, which are the only traffic the providers see.
// Safe for concurrent use; a fresh one for every run.
func (s Scenario) CacheOracle() Orderer {
	return &cacheOracle{s: s, served: map[cacheKey]time.Duration{}}
}

type cacheKey struct {
	conv   int
	target string
}

type cacheOracle struct {
	s Scenario // immutable

	mu     sync.Mutex                 // guards served
	served map[cacheKey]time.Duration // when target last answered conv
}

func (o *cacheOracle) Order(t time.Duration, conv int) string {
	o.mu.Lock()
	cached := map[string]bool{}
	for _, p := range o.s.Targets {
		at, ok := o.served[cacheKey{conv, p.Name}]
		cached[p.Name] = conv >= 0 && ok && t-at < CacheTTL
	}
	o.mu.Unlock()
	return strings.Join(o.s.orderCached(t, cached), ",")
}

func (o *cacheOracle) Served(conv int, target string, end time.Duration) {
	if conv < 0 || target == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if end > o.served[cacheKey{conv, target}] {
		o.served[cacheKey{conv, target}] = end
	}
}

// orderCached is the order with the least expected TTFB at t when the
// targets in cached answer in CacheSpeedup of their time; ties keep
// declaration order.
func (s Scenario) orderCached(t time.Duration, cached map[string]bool) []string {
	c := s
	c.Targets = append(c.Targets[:0:0], s.Targets...)
	for i, p := range c.Targets {
		if cached[p.Name] {
			c.Targets[i].TTFB.Median = time.Duration(float64(p.TTFB.Median) * CacheSpeedup)
			c.Targets[i].Phases = nil
		}
	}
	return c.OracleOrder(t)
}
