package config

import (
	"maps"
	"slices"
	"strings"
)

// Route gives the client models it matches their own way of being routed:
// a mode (with its own state: what one route's mode learns or rotates
// never moves another's), a hedge policy and, optionally, the targets that
// serve them.
type Route struct {
	// Models are client model names or globs ("claude-*": '*' matches any
	// run of characters, '/' included) after aliases resolve. Required.
	Models []string `yaml:"models"`
	// Mode is one of Modes. Zero: strategy.mode.
	Mode string `yaml:"mode"`
	// Hedge is the route's hedge policy; its zero fields take the hedge
	// defaults. Nil: strategy.hedge.
	Hedge *Hedge `yaml:"hedge"`
	// Targets, when set, are the only virtual keys that serve the route's
	// models, in this order for the order-based modes (fallback). Empty:
	// every target serving the model, in declaration order.
	Targets []string `yaml:"targets"`
}

// routeDefaults fills each route's zero fields from the strategy (which
// has its own defaults already).
func (c *Config) routeDefaults() {
	for i := range c.Routes {
		r := &c.Routes[i]
		setDefault(&r.Mode, c.Strategy.Mode)
		if r.Hedge == nil {
			h := c.Strategy.Hedge
			r.Hedge = &h
			continue
		}
		setDefault(&r.Hedge.After, DefaultHedgeAfter)
		setDefault(&r.Hedge.Budget, DefaultHedgeBudget)
		setDefault(&r.Hedge.Max, DefaultHedgeMax)
	}
}

// MatchModel reports whether the client model name matches pattern: a
// name, or a glob whose '*' matches any run of characters.
func MatchModel(pattern, name string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return pattern == name
	}
	if !strings.HasPrefix(name, pattern[:star]) {
		return false
	}
	name, pattern = name[star:], pattern[star+1:]
	for {
		next := strings.IndexByte(pattern, '*')
		if next < 0 {
			return strings.HasSuffix(name, pattern) // the last literal ends the name
		}
		lit := pattern[:next]
		at := strings.Index(name, lit)
		if at < 0 {
			return false
		}
		name, pattern = name[at+len(lit):], pattern[next+1:]
	}
}

// RouteFor is the index of the first route matching the client model
// (after aliases resolve), or -1: the strategy serves it.
func (c *Config) RouteFor(model string) int {
	for i, r := range c.Routes {
		for _, p := range r.Models {
			if MatchModel(p, model) {
				return i
			}
		}
	}
	return -1
}

// ServedModels are the client model names some target serves (aliases
// aside), sorted.
func (c *Config) ServedModels() []string {
	set := map[string]bool{}
	for _, t := range c.Targets {
		for m := range t.Routes(c.Providers[t.VirtualKey]) {
			set[m] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
