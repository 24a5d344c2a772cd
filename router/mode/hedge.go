package mode

import (
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// Hedging (strategy.hedge): when a request's attempt has produced no first
// byte after a while, the next candidate in the mode's order starts beside
// it, and whichever produces a valid first byte first serves the request
// (the router's race.go is the race). This file is the policy: how long is
// a while, and whether the budget allows one more.
//
// A while is a quantile of the late attempt's own target's live samples
// (no hedge on a target with fewer than hedgeMinSamples), or a fixed
// duration, never less than config.HedgeFloor. The budget bounds hedges
// to a share of a model's requests over a sliding window of
// hedgeWindowSlots seconds, so a slow provider never doubles the load.

const (
	// hedgeMinSamples is how many live samples a target needs before a
	// quantile of them says how late is late.
	hedgeMinSamples = 10
	// hedgeWindowSlots is the budget's sliding window, in one-second slots.
	hedgeWindowSlots = 10
)

// Hedging is strategy.hedge at run time, safe for concurrent use; nil when
// it is off.
type Hedging struct {
	// immutable after NewHedging
	q       float64       // the quantile of the target's samples; 0: fixed
	fixed   time.Duration // when q is 0
	budget  float64
	max     int
	stats   StatsSource
	budgets map[string]*hedgeBudget // by client model
}

// NewHedging is the policy of cfg for the client models named, nil when
// hedging is off.
func NewHedging(cfg config.Hedge, stats StatsSource, models []string) *Hedging {
	if !cfg.Enabled {
		return nil
	}
	q, d, err := config.ParseHedgeAfter(cfg.After)
	if err != nil || q > 0 && stats == nil {
		return nil // validated already; without samples a quantile says nothing
	}
	h := &Hedging{q: q, fixed: d, budget: cfg.Budget, max: cfg.Max, stats: stats, budgets: map[string]*hedgeBudget{}}
	for _, m := range models {
		h.budgets[m] = &hedgeBudget{}
	}
	return h
}

// Max is how many hedges may run beside one attempt (strategy.hedge.max).
func (h *Hedging) Max() int { return h.max }

// Request counts a request for model at now in its budget.
func (h *Hedging) Request(model string, now time.Time) {
	if b := h.budgets[model]; b != nil {
		b.request(now)
	}
}

// Take counts a hedge for model at now if its budget allows one; false
// when it does not.
func (h *Hedging) Take(model string, now time.Time) bool {
	b := h.budgets[model]
	return b != nil && b.take(now, h.budget)
}

// Delay is how long an attempt at cand may go without a first byte at now
// before a hedge starts beside it, at next (nil: none known yet): after
// the configured quantile (or duration) when a hedge there could answer
// before the late attempt itself is expected to (see worth), else only
// after the target's p99, beyond anything it has shown. ok is false when
// no hedge may: a quantile of too few samples.
func (h *Hedging) Delay(cand, next *Candidate, now time.Time) (time.Duration, bool) {
	if h.q == 0 && h.stats == nil {
		return h.fixed, true
	}
	st := h.stats.StatsAt(cand.Target, cand.Model, now)
	d := h.fixed
	if h.q > 0 {
		if st.Samples < hedgeMinSamples {
			return 0, false
		}
		d = max(st.Quantile(h.q), config.HedgeFloor)
	}
	if next != nil && !h.worth(&st, h.stats.StatsAt(next.Target, next.Model, now), d) {
		// Not worth it at d: only an attempt later than anything the
		// target has shown (its p99) is hedged, a hang or a fault the
		// samples do not foresee.
		return max(d, st.P99), true
	}
	return d, true
}

// worth reports whether a hedge started after d at a target whose typical
// time to first byte is its p50 can answer before an attempt that is late
// at d is expected to: by its target's p99, or, when its target has been
// failing, by what its faults took (a hang that ends in a timeout, a 503
// after 300 ms). A hedge that cannot win spends budget and tokens for
// nothing: a late attempt at a steady fast target is seldom much later.
// An unmeasured next target is given the benefit of the doubt, and so is a
// first target whose attempts hedges have lately beaten (stats.Target.Late:
// what a won hedge cancels never becomes a sample, so its samples alone
// would forget the slow moments hedging hides).
func (h *Hedging) worth(first *stats.Target, next stats.Target, d time.Duration) bool {
	if next.Samples == 0 || first.Samples == 0 || first.Late > 0 {
		return true
	}
	late := first.P99
	if cost := time.Duration(first.FaultSeconds * float64(time.Second)); first.Faults > 0 && cost > late {
		late = cost
	}
	return d+next.P50 < late
}

// hedgeBudget counts a model's requests and hedges in one-second slots of
// a sliding window.
type hedgeBudget struct {
	mu    sync.Mutex // guards slots
	slots [hedgeWindowSlots]struct{ sec, requests, hedges int64 }
}

// slot is now's slot, emptied if it held an older second. Called with mu
// held.
func (b *hedgeBudget) slot(now time.Time) *struct{ sec, requests, hedges int64 } {
	sec := now.Unix()
	s := &b.slots[uint64(sec)%hedgeWindowSlots]
	if s.sec != sec {
		s.sec, s.requests, s.hedges = sec, 0, 0
	}
	return s
}

// request counts a request at now.
func (b *hedgeBudget) request(now time.Time) {
	b.mu.Lock()
	b.slot(now).requests++
	b.mu.Unlock()
}

// take counts a hedge at now if the window's hedges stay within budget
// times its requests; false when they would not.
func (b *hedgeBudget) take(now time.Time, budget float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.slot(now)
	var requests, hedges int64
	from := now.Unix() - hedgeWindowSlots
	for i := range b.slots {
		if s := &b.slots[i]; s.sec > from {
			requests, hedges = requests+s.requests, hedges+s.hedges
		}
	}
	if float64(hedges+1) > budget*float64(requests) {
		return false
	}
	cur.hedges++
	return true
}
