package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// The providers and targets sections: what each provider needs to be
// reached, and that every target names a provider and a model it serves.

func (v *validation) providers() {
	c := v.c
	if len(c.Providers) == 0 && !c.brokenUnder("providers.") {
		v.add("providers", "at least one provider is required")
	}
	upstream := c.upstreamModels()
	// When a target or a provider's models could not be decoded, which
	// upstream models exist is not known: say nothing about prices then.
	upstreamKnown := true
	for i := range c.Targets {
		p := fmt.Sprintf("targets[%d]", i)
		upstreamKnown = upstreamKnown && !c.broken(p+".virtual_key") && !c.broken(p+".model_map")
	}
	for name := range c.Providers {
		upstreamKnown = upstreamKnown && !c.broken("providers."+name+".models")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		path := "providers." + name
		if p == nil {
			v.add(path, "must be a mapping with kind and base_url")
			continue
		}
		if !slices.Contains(kinds, p.Kind) {
			v.add(path+".kind", "%s", unknownValue("kind", p.Kind, kinds))
		}
		v.host(name, p)
		if p.BaseURL == "" {
			if !slices.Contains([]string{KindBedrock, KindVertex}, p.Kind) {
				v.add(path+".base_url", "required")
			}
		} else if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.add(path+".base_url", "invalid URL %s (want http(s)://host/path)", quoteName(p.BaseURL))
		}
		for i, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				v.add(fmt.Sprintf("%s.models[%d]", path, i), "must not be empty")
			}
		}
		if p.Timeout.FirstByte < 0 {
			v.add(path+".timeout.first_byte", "must be positive")
		}
		if p.Timeout.Total < 0 {
			v.add(path+".timeout.total", "must be positive")
		}
		if p.Timeout.Idle < 0 {
			v.add(path+".timeout.idle", "must not be negative")
		}
		if p.Timeout.Idle > 0 && p.Timeout.Total > 0 && p.Timeout.Idle > p.Timeout.Total {
			v.add(path+".timeout.idle", "%s exceeds timeout.total %s", FormatDuration(p.Timeout.Idle), FormatDuration(p.Timeout.Total))
		}
		if p.RateLimit.MaxCooldown < 0 {
			v.add(path+".rate_limit.max_cooldown", "must not be negative")
		}
		if p.Kind == KindAnthropic && p.Responses != nil && *p.Responses {
			v.add(path+".responses", "only an openai provider serves the Responses API; /v1/responses requests to an anthropic provider are translated to Messages (leave it out)")
		}
		if p.Timeout.FirstByte > 0 && p.Timeout.Total > 0 && p.Timeout.FirstByte > p.Timeout.Total {
			v.add(path+".timeout.first_byte", "%s exceeds timeout.total %s", FormatDuration(p.Timeout.FirstByte), FormatDuration(p.Timeout.Total))
		}
		if p.MaxConcurrency < 0 {
			v.add(path+".max_concurrency", "must be 0 (unlimited) or positive")
		}
		if p.Queue < 0 {
			v.add(path+".queue", "must be 0 or positive")
		}
		if p.CircuitBreaker.Failures < 0 {
			v.add(path+".circuit_breaker.failures", "must be positive")
		}
		if p.CircuitBreaker.Cooldown < 0 {
			v.add(path+".circuit_breaker.cooldown", "must be positive")
		}
		served := slices.Sorted(maps.Keys(upstream[name]))
		// A target whose virtual_key is a near miss of this provider's name
		// (grok for groq) was likely meant for it: a price its upstream
		// model would have read is not news, only the typo is.
		typo, hint := c.typoFor(name), ""
		if typo != "" {
			hint = fmt.Sprintf(" (%s names no provider: was it meant to be %q?)", typo, name)
		}
		for _, model := range slices.Sorted(maps.Keys(p.Pricing)) {
			pp := path + ".pricing." + model
			price := p.Pricing[model]
			if price.Input < 0 {
				v.add(pp+".input", "must be 0 or positive, got %g", price.Input)
			}
			if price.Output < 0 {
				v.add(pp+".output", "must be 0 or positive, got %g", price.Output)
			}
			switch {
			case upstream[name][model] || !upstreamKnown:
			case len(served) == 0:
				v.addAfter(typo, pp, "no target uses provider %q, so this price is never read%s", name, hint)
			default:
				v.addAfter(typo, pp, "no target sends model %q to %s%s; pricing is by upstream model (the model_map value), and %s's are: %s%s",
					model, name, didYouMean(model, served), name, strings.Join(served, ", "), hint)
			}
		}
	}
}

// typoFor is the virtual_key path of the first target whose virtual_key
// names no provider but is a near miss of provider (the one "did you
// mean" would suggest), or "".
func (c *Config) typoFor(provider string) string {
	names := slices.Sorted(maps.Keys(c.Providers))
	for i, t := range c.Targets {
		path := fmt.Sprintf("targets[%d].virtual_key", i)
		if _, ok := c.Providers[t.VirtualKey]; ok || t.VirtualKey == "" || c.broken(path) {
			continue
		}
		if suggest(t.VirtualKey, names) == provider {
			return path
		}
	}
	return ""
}

// upstreamModels are, per provider, the models its targets send upstream:
// their model_map values, and the provider's own models that a target does
// not map.
func (c *Config) upstreamModels() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, t := range c.Targets {
		p := c.Providers[t.VirtualKey]
		if p == nil {
			continue
		}
		set := out[t.VirtualKey]
		if set == nil {
			set = map[string]bool{}
			out[t.VirtualKey] = set
		}
		for client, up := range t.Routes(p) {
			if up == "" { // "empty upstream model", reported apart: count the client name
				up = client
			}
			set[up] = true
		}
	}
	return out
}

func (v *validation) targets() {
	c := v.c
	if len(c.Targets) == 0 {
		v.add("targets", "at least one target is required")
	}
	providerNames := slices.Sorted(maps.Keys(c.Providers))
	// servedBy is, per provider and client model, the first target
	// serving it, to catch the same target twice.
	servedBy := map[[2]string]int{}
	for i, t := range c.Targets {
		path := fmt.Sprintf("targets[%d]", i)
		p, ok := c.Providers[t.VirtualKey]
		switch {
		case t.VirtualKey == "":
			v.add(path+".virtual_key", "required: the name of a provider (not a client key; those are auth.keys)")
		case !ok && !c.broken("providers."+t.VirtualKey):
			v.add(path+".virtual_key", "%s", unknownValue("provider", t.VirtualKey, providerNames))
		}
		if t.Retry.Attempts < 0 {
			v.add(path+".retry.attempts", "must be 0 or positive, got %d", t.Retry.Attempts)
		}
		if w := t.EffectiveWeight(); w < 0 {
			v.add(path+".weight", "must be 0 or positive, got %g", w)
		}
		for _, k := range slices.Sorted(maps.Keys(t.ModelMap)) {
			if strings.TrimSpace(k) == "" {
				v.add(path+".model_map", "empty client model name")
			} else if strings.TrimSpace(t.ModelMap[k]) == "" {
				v.add(path+".model_map."+k, "empty upstream model")
			}
		}
		if !ok || p == nil {
			continue
		}
		if len(t.ModelMap) == 0 && len(p.Models) == 0 && !c.broken(path+".model_map") && !c.broken("providers."+t.VirtualKey+".models") {
			v.add(path, "serves no model: give it a model_map or list models on provider %q", t.VirtualKey)
		}
		dups := map[int][]string{} // earlier target → the models both serve
		for _, m := range slices.Sorted(maps.Keys(t.Routes(p))) {
			k := [2]string{t.VirtualKey, m}
			if j, seen := servedBy[k]; seen {
				dups[j] = append(dups[j], m)
			} else {
				servedBy[k] = i
			}
		}
		for _, j := range slices.Sorted(maps.Keys(dups)) {
			v.add(path, "the same target as targets[%d]: both serve %s through provider %q; list it once (for more tries use retry.attempts)",
				j, strings.Join(dups[j], ", "), t.VirtualKey)
		}
	}
}
