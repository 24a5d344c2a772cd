package study

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The oracle of providers whose speed depends on the load they are sent
// (OracleSplit): no fixed order is any good there (the fastest first is
// the fastest swamped), so the yardstick is the best static split of the
// load. Each request goes to target i with probability w_i (a seeded draw
// of its own, the same in every run of the search: the splits are
// compared on the same luck), and the weights are searched: every split in
// steps of SplitCoarse, then from the best, moves of SplitFine between two
// targets while one improves the mean. Each split is a whole run of the
// scenario; the best one's run is the oracle's. A split is static: it
// knows the providers' slots only through the mean they lead to, and
// takes no notice of the queues of the moment, as a load-aware mode can.

// Steps of the split search, in units of 1/splitUnits.
const (
	splitUnits  = 20
	splitCoarse = 2 // 0.1
	splitFine   = 1 // 0.05
)

// streamSplit is the split oracle's stream of draws.
const streamSplit = 1 << 33

// splitPlanner sends each request to target i with probability w[i]; the
// other targets follow in declaration order, should it fail.
type splitPlanner struct {
	s        *Scenario
	gateways gateways
	w        []float64
	rng      *rand.Rand
	names    [1]string
}

func (p *splitPlanner) plan(t time.Duration, _, _ int) (*router.Route, string, error) {
	u, i := p.rng.Float64(), 0
	for i < len(p.w)-1 && u >= p.w[i] {
		u -= p.w[i]
		i++
	}
	p.names[0] = p.s.Targets[i].Name
	route, unknown, ok := p.gateways.at(t).Route(ClientModel, router.RouteOptions{Names: p.names[:]})
	if !ok || unknown != "" {
		return nil, "", fmt.Errorf("split oracle: no route through %s at %v", p.names[0], t)
	}
	return route, telemetry.SelectionOrder, nil
}

// runSplit runs s with the static split w (in units of 1/splitUnits).
func runSplit(ctx context.Context, s *Scenario, seed uint64, duration time.Duration, w []int) (*Result, error) {
	r := newRunner(s, Oracle, seed, duration)
	o := *s
	o.Breaker = nil
	gws, err := gatewaysOf(&o, "fallback", router.Options{Now: r.clock.Now})
	if err != nil {
		return nil, err
	}
	p := &splitPlanner{s: s, gateways: gws, rng: rand.New(newSource(seed, streamSplit))}
	for _, x := range w {
		p.w = append(p.w, float64(x)/splitUnits)
	}
	r.usePlanner(p)
	res, err := r.run(ctx)
	if err != nil {
		return nil, err
	}
	res.Split = p.w
	return res, nil
}

// searchSplit is the oracle of s: the run of the best static split found.
func searchSplit(ctx context.Context, s *Scenario, seed uint64, duration time.Duration) (*Result, error) {
	tried := map[string]*Result{}
	var best *Result
	var bestW []int
	try := func(w []int) (bool, error) {
		key := fmt.Sprint(w)
		if _, ok := tried[key]; ok {
			return false, nil
		}
		res, err := runSplit(ctx, s, seed, duration, w)
		if err != nil {
			return false, err
		}
		tried[key] = res
		if best == nil || res.Mean() < best.Mean() {
			best, bestW = res, slices.Clone(w)
			return true, nil
		}
		return false, nil
	}
	for _, w := range splits(len(s.Targets), splitUnits, splitCoarse) {
		if _, err := try(w); err != nil {
			return nil, err
		}
	}
	for improved := true; improved; {
		improved = false
		for _, w := range moves(bestW, splitFine) {
			ok, err := try(w)
			if err != nil {
				return nil, err
			}
			improved = improved || ok
		}
	}
	best.SplitsTried = len(tried)
	return best, nil
}

// splits lists every way to share units among n targets in steps of step,
// in a fixed order.
func splits(n, units, step int) [][]int {
	if n == 1 {
		return [][]int{{units}}
	}
	var out [][]int
	for x := 0; x <= units; x += step {
		for _, rest := range splits(n-1, units-x, step) {
			out = append(out, append([]int{x}, rest...))
		}
	}
	return out
}

// moves lists the splits one move of step from one target to another
// away from w, in a fixed order.
func moves(w []int, step int) [][]int {
	var out [][]int
	for from := range w {
		for to := range w {
			if from == to || w[from] < step {
				continue
			}
			m := slices.Clone(w)
			m[from] -= step
			m[to] += step
			out = append(out, m)
		}
	}
	return out
}

// splitText says what the split w is, target by target.
func splitText(s *Scenario, w []float64) string {
	var parts []string
	for i, x := range w {
		parts = append(parts, fmt.Sprintf("%s %.0f %%", s.Targets[i].Name, 100*x))
	}
	return strings.Join(parts, ", ")
}
