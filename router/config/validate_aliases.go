package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// aliasesAndRoutes checks that each alias names a served model and is no
// model itself, and that each route's patterns match a served model not
// already claimed by an earlier route, and its targets serve its models.
func (v *validation) aliasesAndRoutes() {
	c := v.c
	served := c.ServedModels()
	for _, a := range slices.Sorted(maps.Keys(c.Aliases)) {
		path, m := "aliases."+a, c.Aliases[a]
		switch {
		case strings.TrimSpace(a) == "":
			v.add("aliases", "empty alias name")
		case slices.Contains(served, a):
			v.add(path, "%q is a model a target serves: an alias must be a name of its own", a)
		case !slices.Contains(served, m):
			v.add(path, "%s", unknownValue("model", m, served))
		}
	}
	for i, r := range c.Routes {
		v.route(i, r, served)
	}
}

// route checks routes[i].
func (v *validation) route(i int, r Route, served []string) {
	c := v.c
	path := fmt.Sprintf("routes[%d]", i)
	if len(r.Models) == 0 {
		v.add(path+".models", "required: the client models (names or globs) this route serves")
	}
	var matched []string // the served models this route is the first to match
	for j, p := range r.Models {
		pp := fmt.Sprintf("%s.models[%d]", path, j)
		if by := shadowedBy(c.Routes[:i], r.Models[:j], p); by != "" {
			v.add(pp, "%q never matches: %s matches every model it would", p, by)
			continue
		}
		n := 0
		for _, m := range served {
			if MatchModel(p, m) {
				n++
				if c.RouteFor(m) == i && !slices.Contains(matched, m) {
					matched = append(matched, m)
				}
			}
		}
		if n == 0 {
			v.add(pp, "%q matches no model a target serves (%s)", p, strings.Join(served, ", "))
		}
	}
	if !slices.Contains(Modes, r.Mode) {
		v.add(path+".mode", "%s", unknownValue("mode", r.Mode, Modes))
	}
	if r.Hedge != nil {
		v.hedge(path+".hedge", *r.Hedge)
	}
	keys := slices.Sorted(maps.Keys(c.Providers))
	for j, t := range r.Targets {
		tp := fmt.Sprintf("%s.targets[%d]", path, j)
		switch {
		case !c.declaresTarget(t):
			v.add(tp, "%s", unknownValue("target", t, keys))
		case slices.Index(r.Targets, t) < j:
			v.add(tp, "%q is listed twice", t)
		case len(matched) > 0 && !c.targetServesAny(t, matched):
			v.add(tp, "%q serves none of the route's models (%s)", t, strings.Join(matched, ", "))
		}
	}
}

// shadowedBy names the earlier pattern (of an earlier route, or earlier in
// the same route) that matches every model p would, or "".
func shadowedBy(earlier []Route, same []string, p string) string {
	for i, r := range earlier {
		for j, q := range r.Models {
			if MatchModel(q, p) {
				return fmt.Sprintf("routes[%d].models[%d] (%q)", i, j, q)
			}
		}
	}
	for _, q := range same {
		if MatchModel(q, p) {
			return fmt.Sprintf("%q before it", q)
		}
	}
	return ""
}

// declaresTarget reports whether some target uses the virtual key name.
func (c *Config) declaresTarget(name string) bool {
	return slices.ContainsFunc(c.Targets, func(t Target) bool { return t.VirtualKey == name })
}

// targetServesAny reports whether a target of virtual key name serves one
// of models.
func (c *Config) targetServesAny(name string, models []string) bool {
	for _, t := range c.Targets {
		if t.VirtualKey != name {
			continue
		}
		routes := t.Routes(c.Providers[name])
		for _, m := range models {
			if _, ok := routes[m]; ok {
				return true
			}
		}
	}
	return false
}
