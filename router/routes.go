package router

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/preference"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// Routes and aliases: a model a route matches is ordered by the route's
// own mode (its own state) and hedged by the route's own policy, among the
// route's targets only; an alias resolves to its model before anything
// else.

// policy is how the models of one route, or of the strategy, are ordered
// and hedged. Immutable once built.
type policy struct {
	route    string // "routes[0]"; "" for the strategy
	mode     string
	strategy mode.Strategy
	hedge    *mode.Hedging // nil: no hedging
}

// buildPolicies gives each route its own mode and hedge over the models it
// is the first to match, and keeps only the route's targets, in its order,
// among those models' candidates. The strategy's policy serves the rest.
func (g *Gateway) buildPolicies(cfg *config.Config, deps mode.Deps) error {
	g.fallbackPolicy = &policy{mode: g.mode, strategy: g.strategy, hedge: g.hedge}
	g.pref = preference.NewDeps(cfg.Targets, deps, g.providers)
	g.aliases = maps.Clone(cfg.Aliases)
	g.listed = slices.Sorted(slices.Values(append(slices.Clone(g.models), slices.Collect(maps.Keys(cfg.Aliases))...)))
	if len(cfg.Routes) == 0 {
		return nil
	}
	byRoute := make([][]string, len(cfg.Routes))
	for _, m := range g.models {
		if i := cfg.RouteFor(m); i >= 0 {
			byRoute[i] = append(byRoute[i], m)
		}
	}
	g.policies = map[string]*policy{}
	for i, r := range cfg.Routes {
		s, err := mode.New(r.Mode, deps)
		if err != nil {
			return fmt.Errorf("routes[%d].%w", i, err)
		}
		p := &policy{route: fmt.Sprintf("routes[%d]", i), mode: r.Mode, strategy: s, hedge: mode.NewHedging(*r.Hedge, deps.Stats, byRoute[i])}
		for _, m := range byRoute[i] {
			g.policies[m] = p
			if len(r.Targets) > 0 {
				for fam, byModel := range g.routes {
					g.routes[fam][m] = onlyTargets(byModel[m], r.Targets)
				}
			}
		}
	}
	return nil
}

// onlyTargets keeps the candidates of the named targets, in names' order
// (a target declared twice keeps its declaration order within its name).
func onlyTargets(cands []*mode.Candidate, names []string) []*mode.Candidate {
	out := make([]*mode.Candidate, 0, len(cands))
	for _, n := range names {
		for _, c := range cands {
			if c.Target == n {
				out = append(out, c)
			}
		}
	}
	return out
}

// Routing reads the current state of every model, sorted by model, as chat
// requests (chat completions and messages alike) are routed: every target
// serves them. The other endpoints route over the subset of the same
// candidates of the provider kind that speaks them, in the same order. It
// reads the statistics source and each model's mode, so it is exactly what
// the next request would be ordered by.
func (g *Gateway) Routing() []routingview.Model {
	var out []routingview.Model
	chat := g.routes[familyChat]
	for _, m := range slices.Sorted(maps.Keys(chat)) {
		p := g.policyFor(m)
		out = append(out, routingview.Of(routingview.Policy{Mode: p.mode, Route: p.route, Strategy: p.strategy}, familyChat, m, chat[m], g.stats, g.now))
	}
	return out
}

// RoutingHandler serves GET /debug/routing (routingview.Handler).
func (g *Gateway) RoutingHandler() http.Handler {
	return routingview.Handler(g.mode, g.Routing, g.debugExtra)
}

// ranksOnLatency reports whether the strategy or a route ranks on measured
// latency (then prompt-cache affinity is kept).
func (g *Gateway) ranksOnLatency() bool {
	if mode.RanksOnLatency(g.mode) {
		return true
	}
	for _, p := range g.policies {
		if mode.RanksOnLatency(p.mode) {
			return true
		}
	}
	return false
}
