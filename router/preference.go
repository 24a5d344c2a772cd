package router

import (
	"net/http"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/preference"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A request's provider preferences (package preference reads and applies
// them): the filters take targets out before anything is tried, a sort
// replaces the mode's order, the rest rearranges it.

// preferred routes c by its preferences p (preference.Of: the header's
// over the body's), or answers bad. false: the preferences were wrong, or
// left no target, and the answer has been written.
func (g *Gateway) preferred(c *call, p *preference.Preference, bad *preference.Error, eligible []*mode.Candidate, s *routeSpec) bool {
	if bad == nil && p != nil {
		if field, name := g.pref.UnknownName(p); field != "" {
			bad = &preference.Error{Field: field, Msg: reqbody.Quote(name) + " is no configured target"}
		}
	}
	if bad != nil {
		c.status = http.StatusBadRequest
		apierror.WriteParam(c.w, c.ep.shape, http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_provider_preference", bad.Field, bad.Field+": "+bad.Msg, nil)
		return false
	}
	c.pref = p
	kept, emptiedBy := g.pref.Eligible(p, eligible)
	if len(kept) == 0 {
		c.status = http.StatusNotFound
		apierror.WriteParam(c.w, c.ep.shape, http.StatusNotFound, apierror.TypeNotFound, "no_eligible_target", emptiedBy,
			"no target serving model "+reqbody.Quote(c.fields.Model)+" is left by "+emptiedBy, nil)
		return false
	}
	order, selection, probe := g.preferenceOrder(c, p, kept)
	s.preset = &presetOrder{order: order, selection: selection, probe: probe}
	return true
}

// preferenceOrder orders the kept candidates: a sort's order (selection
// order) or the mode's, then as the preferences rearrange it.
func (g *Gateway) preferenceOrder(c *call, p *preference.Preference, kept []*mode.Candidate) (order []*mode.Candidate, selection string, probe *mode.Candidate) {
	now := g.now()
	if sort := p.Sort(); sort != "" {
		order, selection = g.pref.SortBy(c.orderBuf[:0], sort, c.fields.Model, reqbody.OutputLimit(&c.fields), kept, now), telemetry.SelectionOrder
	} else {
		order, selection, probe = g.order(c.orderBuf[:0], g.policyFor(c.fields.Model).strategy, c.fields.Model, reqbody.OutputLimit(&c.fields), kept)
	}
	return g.pref.Arrange(p, order, selection, probe, now)
}
