package config

import "maps"

// Routes are the client models t serves through its provider p, each
// with the upstream model it is sent as: p's models under their own name,
// and t's model_map, which wins for a model in both. p is
// Providers[t.VirtualKey]; nil serves the model_map only.
func (t Target) Routes(p *Provider) map[string]string {
	routes := make(map[string]string, len(t.ModelMap))
	if p != nil {
		for _, m := range p.Models {
			routes[m] = m
		}
	}
	maps.Copy(routes, t.ModelMap)
	return routes
}

// ServesResponses reports whether the provider serves the Responses API
// itself (Responses, with its default applied).
func (p *Provider) ServesResponses() bool {
	if p.Responses == nil {
		return p.Kind == KindOpenAI
	}
	return *p.Responses
}

// EffectiveWeight is the target's weight with its default applied.
func (t Target) EffectiveWeight() float64 {
	if t.Weight == nil {
		return DefaultTargetWeight
	}
	return *t.Weight
}
