package router

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Applying a request's preferences: the filters (only, ignore, max_price,
// order without fallbacks) take targets out before anything is tried, so
// an excluded target is neither an attempt nor a skip; a sort replaces the
// mode's order with a deterministic one; preferred bounds put the targets
// that miss them after those that meet them; order puts its names first.

// PercentileSource is what preferences read beyond mode.StatsSource: the
// percentiles of a target's live time-to-first-byte and output-rate
// samples, and how many there are (0: unmeasured). The collector's tracker
// satisfies it; a StatsSource without it bounds latency on its own
// quantiles and treats every rate as unmeasured.
type PercentileSource interface {
	TTFBPercentile(target, model string, q float64, now time.Time) (time.Duration, int)
	OutputRatePercentile(target, model string, q float64, now time.Time) (float64, int)
}

// preferenceDeps are what applying preferences reads, built with the
// gateway and immutable after.
type preferenceDeps struct {
	targets     map[string]bool       // every configured target's name
	percentiles PercentileSource      // nil: see PercentileSource
	completion  mode.CompletionSorter // nil: sort completion ranks as latency
}

// preferred reads the request's preferences (the header over the body) and,
// when there are any, routes c by them. false: the preferences were wrong,
// or left no target, and the answer has been written.
func (g *Gateway) preferred(c *call, eligible []*mode.Candidate, s *routeSpec) bool {
	p, bad := preferenceOf(c)
	if bad == nil && p != nil {
		bad = g.checkNames(p)
	}
	if bad != nil {
		c.status = http.StatusBadRequest
		writeErrorParam(c.w, c.ep.shape, http.StatusBadRequest, errTypeInvalidRequest, "invalid_provider_preference", bad.field, bad.field+": "+bad.msg, nil)
		return false
	}
	if p == nil {
		return true
	}
	c.pref = p
	kept, emptiedBy := g.eligibleUnder(p, eligible)
	if len(kept) == 0 {
		c.status = http.StatusNotFound
		writeErrorParam(c.w, c.ep.shape, http.StatusNotFound, errTypeNotFound, "no_eligible_target", emptiedBy,
			"no target serving model "+quoteForMessage(c.fields.Model)+" is left by "+emptiedBy, nil)
		return false
	}
	order, selection, probe := g.preferenceOrder(c, p, kept)
	s.preset = &presetOrder{order: order, selection: selection, probe: probe}
	return true
}

// preferenceOf is the request's preferences: the header's when it has
// one, else the body's provider object; nil when neither.
func preferenceOf(c *call) (*preference, *preferenceError) {
	if vs, ok := c.r.Header[HeaderProvider]; ok {
		v := []byte(strings.Join(vs, ","))
		if obj, valid := jsonscan.Valid(v); valid {
			return parsePreference(obj, HeaderProvider)
		}
		return nil, &preferenceError{HeaderProvider, "must be a JSON object"}
	}
	if c.fields.provider == nil {
		return nil, nil
	}
	return parsePreference(c.fields.provider, "provider")
}

// checkNames refuses a name that is no configured target.
func (g *Gateway) checkNames(p *preference) *preferenceError {
	for _, l := range []struct {
		field string
		names []string
	}{{"order", p.order}, {"only", p.only}, {"ignore", p.ignore}} {
		for i, n := range l.names {
			if !g.pref.targets[n] {
				return &preferenceError{"provider." + l.field + "[" + strconv.Itoa(i) + "]", quoteForMessage(n) + " is no configured target"}
			}
		}
	}
	return nil
}

// eligibleUnder keeps the candidates the filters allow, in eligible's
// order; when none is left, emptiedBy names the preference that took the
// last ones out (the filters apply in the order of filterFields).
func (g *Gateway) eligibleUnder(p *preference, eligible []*mode.Candidate) (kept []*mode.Candidate, emptiedBy string) {
	kept = make([]*mode.Candidate, 0, len(eligible))
	last := -1
	for _, c := range eligible {
		if by := g.excludedBy(p, c); by < 0 {
			kept = append(kept, c)
		} else {
			last = max(last, by)
		}
	}
	if len(kept) == 0 && last >= 0 {
		return nil, filterFields[last]
	}
	return kept, ""
}

// filterFields are the preferences that take targets out, in the order
// they apply.
var filterFields = [...]string{"provider.only", "provider.ignore", "provider.max_price", "provider.order"}

// excludedBy is the index in filterFields of the first preference that
// takes c out, or -1.
func (g *Gateway) excludedBy(p *preference, c *mode.Candidate) int {
	switch {
	case len(p.only) > 0 && !slices.Contains(p.only, c.Target):
		return 0
	case slices.Contains(p.ignore, c.Target):
		return 1
	case p.maxPrice && !g.withinPrice(p, c):
		return 2
	case len(p.order) > 0 && p.noFallbacks && !slices.Contains(p.order, c.Target):
		return 3
	}
	return -1
}

// withinPrice says whether c's rate card is within p's max_price; one
// without pricing for its upstream model is not.
func (g *Gateway) withinPrice(p *preference, c *mode.Candidate) bool {
	prov := g.providers[c.Target]
	if prov == nil {
		return false
	}
	price, ok := prov.Pricing[c.Model]
	return ok && (!p.hasPrompt || price.Input <= p.maxPrompt) && (!p.hasOut || price.Output <= p.maxOut)
}

// preferenceOrder orders the kept candidates: a sort's order (selection
// order) or the mode's, the targets missing a preferred bound after the
// others, order's names first (selection manual), and only the first
// without fallbacks.
func (g *Gateway) preferenceOrder(c *call, p *preference, kept []*mode.Candidate) (order []*mode.Candidate, selection string, probe *mode.Candidate) {
	now := g.now()
	model := c.fields.Model
	if p.sort != "" {
		order, selection = g.sortBy(c.orderBuf[:0], p.sort, model, &c.fields, kept, now), telemetry.SelectionOrder
	} else {
		order, selection, probe = g.order(c.orderBuf[:0], model, outputLimit(&c.fields), kept)
	}
	if p.maxLatency.set || p.minThroughput.set {
		misses := make([]*mode.Candidate, 0, len(order))
		order = slices.DeleteFunc(order, func(cand *mode.Candidate) bool {
			miss := !g.meets(cand, p, now)
			if miss {
				misses = append(misses, cand)
			}
			return miss
		})
		order = append(order, misses...)
	}
	if len(p.order) > 0 {
		var named []*mode.Candidate
		for _, n := range p.order {
			for _, cand := range order {
				if cand.Target == n && !slices.Contains(named, cand) {
					named = append(named, cand)
				}
			}
		}
		if len(named) > 0 {
			rest := slices.DeleteFunc(order, func(cand *mode.Candidate) bool { return slices.Contains(named, cand) })
			order, selection = append(named, rest...), telemetry.SelectionManual
		}
	} else if p.noFallbacks && len(order) > 1 {
		order = order[:1]
	}
	if probe != nil && !slices.Contains(order, probe) {
		probe.Guard.DisabledProbeDone() // claimed by the mode's order, then left out
		probe = nil
	}
	return order, selection, probe
}

// sortBy orders cands by what the sort ranks on, deterministically:
// measured targets first, best first, ties and unmeasured targets in
// cands' order.
func (g *Gateway) sortBy(dst []*mode.Candidate, sort, model string, f *requestFields, cands []*mode.Candidate, now time.Time) []*mode.Candidate {
	if sort == SortCompletion && g.pref.completion != nil {
		return g.pref.completion.Sort(dst, model, outputLimit(f), cands)
	}
	type scored struct {
		c        *mode.Candidate
		score    float64
		measured bool
	}
	s := make([]scored, len(cands))
	for i, c := range cands {
		v, ok := g.sortScore(sort, c, now)
		s[i] = scored{c, v, ok}
	}
	slices.SortStableFunc(s, func(a, b scored) int {
		switch {
		case a.measured != b.measured:
			if a.measured {
				return -1
			}
			return 1
		case !a.measured:
			return 0
		}
		return cmp.Compare(a.score, b.score)
	})
	for _, x := range s {
		dst = append(dst, x.c)
	}
	return dst
}

// sortScore is what sort ranks c on, smaller first; ok false: unmeasured.
// A completion sort without its sorter ranks as latency.
func (g *Gateway) sortScore(sort string, c *mode.Candidate, now time.Time) (float64, bool) {
	switch sort {
	case SortPrice:
		return c.Price, c.Priced
	case SortThroughput:
		if g.pref.percentiles == nil {
			return 0, false
		}
		r, n := g.pref.percentiles.OutputRatePercentile(c.Target, c.Model, 0.5, now)
		return -r, n > 0
	}
	if g.stats == nil {
		return 0, false
	}
	st := g.stats.StatsAt(c.Target, c.Model, now)
	return st.P50.Seconds(), st.Samples > 0
}

// meets reports whether c meets p's preferred bounds; an unmeasured
// percentile meets its bound.
func (g *Gateway) meets(c *mode.Candidate, p *preference, now time.Time) bool {
	for i, q := range boundQuantiles {
		if p.maxLatency.has[i] {
			if d, n := g.ttfbPercentile(c, q.q, now); n > 0 && d.Seconds() > p.maxLatency.v[i] {
				return false
			}
		}
		if p.minThroughput.has[i] && g.pref.percentiles != nil {
			if r, n := g.pref.percentiles.OutputRatePercentile(c.Target, c.Model, q.q, now); n > 0 && r < p.minThroughput.v[i] {
				return false
			}
		}
	}
	return true
}

func (g *Gateway) ttfbPercentile(c *mode.Candidate, q float64, now time.Time) (time.Duration, int) {
	if g.pref.percentiles != nil {
		return g.pref.percentiles.TTFBPercentile(c.Target, c.Model, q, now)
	}
	if g.stats == nil {
		return 0, 0
	}
	st := g.stats.StatsAt(c.Target, c.Model, now)
	return st.Quantile(q), st.Samples
}
