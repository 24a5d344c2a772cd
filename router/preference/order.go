package preference

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
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

// Deps are what applying preferences reads, built with the gateway and
// immutable after.
type Deps struct {
	targets     map[string]bool             // every configured target's name
	percentiles PercentileSource            // nil: see PercentileSource
	completion  mode.CompletionSorter       // nil: sort completion ranks as latency
	stats       mode.StatsSource            // nil: every target unmeasured
	providers   map[string]*config.Provider // for their pricing
}

// NewDeps builds what applying preferences reads: the configured targets,
// the mode's dependencies (their Stats may also be a PercentileSource) and
// the providers as configured, for their pricing.
func NewDeps(targets []config.Target, deps mode.Deps, providers map[string]*config.Provider) *Deps {
	d := &Deps{targets: make(map[string]bool, len(targets)), stats: deps.Stats, providers: providers}
	for _, t := range targets {
		d.targets[t.VirtualKey] = true
	}
	d.percentiles, _ = deps.Stats.(PercentileSource)
	d.completion, _ = mode.NewCompletionSorter(deps)
	return d
}

// UnknownName finds a name that is no configured target: the field that
// names it (provider.order[1]) and the name; "" when every name is known.
func (d *Deps) UnknownName(p *Preference) (field, name string) {
	for _, l := range []struct {
		field string
		names []string
	}{{"order", p.order}, {"only", p.only}, {"ignore", p.ignore}} {
		for i, n := range l.names {
			if !d.targets[n] {
				return "provider." + l.field + "[" + strconv.Itoa(i) + "]", n
			}
		}
	}
	return "", ""
}

// Eligible keeps the candidates the filters allow, in eligible's
// order; when none is left, emptiedBy names the preference that took the
// last ones out (the filters apply in the order of filterFields).
func (d *Deps) Eligible(p *Preference, eligible []*mode.Candidate) (kept []*mode.Candidate, emptiedBy string) {
	kept = make([]*mode.Candidate, 0, len(eligible))
	last := -1
	for _, c := range eligible {
		if by := d.excludedBy(p, c); by < 0 {
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
func (d *Deps) excludedBy(p *Preference, c *mode.Candidate) int {
	switch {
	case len(p.only) > 0 && !slices.Contains(p.only, c.Target):
		return 0
	case slices.Contains(p.ignore, c.Target):
		return 1
	case p.maxPrice && !d.withinPrice(p, c):
		return 2
	case len(p.order) > 0 && p.noFallbacks && !slices.Contains(p.order, c.Target):
		return 3
	}
	return -1
}

// withinPrice says whether c's rate card is within p's max_price; one
// without pricing for its upstream model is not.
func (d *Deps) withinPrice(p *Preference, c *mode.Candidate) bool {
	prov := d.providers[c.Target]
	if prov == nil {
		return false
	}
	price, ok := prov.Pricing[c.Model]
	return ok && (!p.hasPrompt || price.Input <= p.maxPrompt) && (!p.hasOut || price.Output <= p.maxOut)
}

// Arrange finishes the order of the kept candidates, already in a sort's
// order (selection order) or the mode's: the targets missing a preferred
// bound after the others, order's names first (selection manual), and
// only the first without fallbacks. A disabled target's probe the order
// leaves out is given back.
func (d *Deps) Arrange(p *Preference, order []*mode.Candidate, selection string, probe *mode.Candidate, now time.Time) ([]*mode.Candidate, string, *mode.Candidate) {
	if p.maxLatency.set || p.minThroughput.set {
		misses := make([]*mode.Candidate, 0, len(order))
		order = slices.DeleteFunc(order, func(cand *mode.Candidate) bool {
			miss := !d.meets(cand, p, now)
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

// SortBy orders cands by what the sort ranks on, deterministically:
// measured targets first, best first, ties and unmeasured targets in
// cands' order.
// outputLimit is the request's token limit (0: none), for a completion sort.
func (d *Deps) SortBy(dst []*mode.Candidate, sort, model string, outputLimit int, cands []*mode.Candidate, now time.Time) []*mode.Candidate {
	if sort == sortCompletion && d.completion != nil {
		return d.completion.Sort(dst, model, outputLimit, cands)
	}
	type scored struct {
		c        *mode.Candidate
		score    float64
		measured bool
	}
	s := make([]scored, len(cands))
	for i, c := range cands {
		v, ok := d.sortScore(sort, c, now)
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
func (d *Deps) sortScore(sort string, c *mode.Candidate, now time.Time) (float64, bool) {
	switch sort {
	case sortPrice:
		return c.Price, c.Priced
	case sortThroughput:
		if d.percentiles == nil {
			return 0, false
		}
		r, n := d.percentiles.OutputRatePercentile(c.Target, c.Model, 0.5, now)
		return -r, n > 0
	}
	if d.stats == nil {
		return 0, false
	}
	st := d.stats.StatsAt(c.Target, c.Model, now)
	return st.P50.Seconds(), st.Samples > 0
}

// meets reports whether c meets p's preferred bounds; an unmeasured
// percentile meets its bound.
func (d *Deps) meets(c *mode.Candidate, p *Preference, now time.Time) bool {
	for i, q := range boundQuantiles {
		if p.maxLatency.has[i] {
			if d, n := d.ttfbPercentile(c, q.q, now); n > 0 && d.Seconds() > p.maxLatency.v[i] {
				return false
			}
		}
		if p.minThroughput.has[i] && d.percentiles != nil {
			if r, n := d.percentiles.OutputRatePercentile(c.Target, c.Model, q.q, now); n > 0 && r < p.minThroughput.v[i] {
				return false
			}
		}
	}
	return true
}

func (d *Deps) ttfbPercentile(c *mode.Candidate, q float64, now time.Time) (time.Duration, int) {
	if d.percentiles != nil {
		return d.percentiles.TTFBPercentile(c.Target, c.Model, q, now)
	}
	if d.stats == nil {
		return 0, 0
	}
	st := d.stats.StatsAt(c.Target, c.Model, now)
	return st.Quantile(q), st.Samples
}
