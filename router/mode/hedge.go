package mode

import (
	"math"
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
// duration, never less than config.HedgeFloor, or, adaptive, chosen per
// request (see adaptiveDelay). The budget bounds hedges to a share of a
// model's requests over a sliding window of hedgeWindowSlots seconds, so a
// slow provider never doubles the load.

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
	adaptive bool          // after: adaptive (q and fixed are 0)
	q        float64       // the quantile of the target's samples; 0: fixed
	fixed    time.Duration // when q is 0
	budget   float64
	max      int
	stats    StatsSource
	budgets  map[string]*hedgeBudget // by client model
}

// NewHedging is the policy of cfg for the client models named, nil when
// hedging is off.
func NewHedging(cfg config.Hedge, stats StatsSource, models []string) *Hedging {
	if !cfg.Enabled {
		return nil
	}
	q, d, err := config.ParseHedgeAfter(cfg.After)
	adaptive := cfg.After == config.HedgeAdaptive
	if err != nil || (q > 0 || adaptive) && stats == nil {
		return nil // validated already; without samples a quantile says nothing
	}
	h := &Hedging{adaptive: adaptive, q: q, fixed: d, budget: cfg.Budget, max: cfg.Max, stats: stats, budgets: map[string]*hedgeBudget{}}
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

// Delay is how long an attempt at cand, for a request of model, may go
// without a first byte at now before a hedge starts beside it, at next
// (nil: none known yet): after the configured quantile (or duration, or
// the adaptive delay) when a hedge there could answer before the late
// attempt itself is expected to (see worth), else only after the target's
// p99, beyond anything it has shown. ok is false when no hedge may: a
// quantile of too few samples.
func (h *Hedging) Delay(model string, cand, next *Candidate, now time.Time) (time.Duration, bool) {
	if h.q == 0 && !h.adaptive && h.stats == nil {
		return h.fixed, true
	}
	st := h.stats.StatsAt(cand.Target, cand.Model, now)
	var nx stats.Target
	if next != nil {
		nx = h.stats.StatsAt(next.Target, next.Model, now)
	}
	d := h.fixed
	switch {
	case h.adaptive:
		if st.Samples < hedgeMinSamples {
			return 0, false
		}
		d = h.adaptiveDelay(model, &st, next != nil, &nx, now)
	case h.q > 0:
		if st.Samples < hedgeMinSamples {
			return 0, false
		}
		d = max(st.Quantile(h.q), config.HedgeFloor)
	}
	if next != nil && !h.worth(&st, nx, d) && !(h.adaptive && worthByResidual(&st, &nx, d)) {
		// Not worth it at d: only an attempt later than anything the
		// target has shown (its p99) is hedged, a hang or a fault the
		// samples do not foresee.
		return max(d, st.P99), true
	}
	return d, true
}

// worth reports whether a hedge started after d at a target whose typical
// time to first byte is its p50 can answer before an attempt that is late
// at d is expected to: by its target's p99 (of its answers and of the
// attempts hedges cancelled, stats.Target.CensoredP99: what a won hedge
// cancels never becomes an answer, so its answers alone would forget the
// slow moments hedging hides), or, when its target has been failing, by
// what its faults took (a hang that ends in a timeout, a 503 after
// 300 ms). A hedge that cannot win spends budget and tokens for nothing: a
// late attempt at a steady fast target is seldom much later. An unmeasured
// next target is given the benefit of the doubt. (Before the censored p99,
// any live late, stats.Target.Late, made every hedge worth it: one
// cancelled attempt latched a steady target into hedging from the
// quantile on for the five minutes a late lives.)
func (h *Hedging) worth(first *stats.Target, next stats.Target, d time.Duration) bool {
	if next.Samples == 0 || first.Samples == 0 {
		return true
	}
	late := max(first.P99, first.CensoredP99)
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

// aim is the share r of requests whose attempts the adaptive delay aims
// to find late, at now, for a budget: hedgeAim of the budget, scaled by
// the square of how far the window's hedges fell short of that (or went
// beyond it), within [budget/10, budget] and at most 1; hedgeAim of
// the budget while the window is empty. The square is a strong pull: the
// quantiles the delay reads are biased low whenever hedges win (a won
// hedge's cancelled loser gives no sample, and it was a slow one), so
// aiming at r finds more than r late, and the window says by how much.
func (b *hedgeBudget) aim(now time.Time, budget float64) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var requests, hedges int64
	from := now.Unix() - hedgeWindowSlots
	for i := range b.slots {
		if s := &b.slots[i]; s.sec > from {
			requests, hedges = requests+s.requests, hedges+s.hedges
		}
	}
	aim := budget * hedgeAim
	if requests == 0 {
		return aim
	}
	spent := max(float64(hedges)/float64(requests), aim/8)
	r := aim * (aim / spent) * (aim / spent)
	return min(max(r, budget/10), budget, 1)
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

// The adaptive delay (after: adaptive). A fixed quantile spends the budget
// badly both ways: p95 hedges one late attempt in twenty whatever the
// budget allows, and hedges an attempt that went to a slow target (an
// exploration, a spread, the prompt cache's choice) only when it is late
// by that slow target's own measure, long after the fast one would have
// answered. So each request's delay is:
//
//   - the quantile 1 - r of the late target's own distribution, where r
//     is the share of requests the budget has left to hedge (see aim): so
//     about r of its attempts are late enough to be hedged, and the budget
//     goes to the latest ones;
//   - or sooner, when the runner-up is the faster target (its p50 below
//     the late one's) and the tails are heavy (the spread of log time,
//     from p50 and p95, at least heavyTail for either target: the late
//     one's own samples read narrower than its tail is, the more so the
//     more it is hedged, because a hedge that wins cancels a slow attempt
//     before it becomes a sample; in the study's (tail), t80's sigma of
//     0.9 read 0.47-0.62, and the rule flipped on and off with it): the same
//     quantile of the runner-up's distribution, the time by which the
//     runner-up would have answered but for the same bad luck. A narrow
//     target's attempt is not late at that time, only slower by design
//     (the mode chose it to measure it, or to spread load): hedging it
//     would cancel the very sample an exploration went for;
//
// never less than config.HedgeFloor. Quantiles between the tracker's
// (p50 ... p99) are read off the line through them in the normal scale of
// log time (exact for a log-normal target), beyond them along its last
// segment. A hedge is worth it (see worth) also when the runner-up's p50
// beats what the late attempt is expected to take still, E[T - d | T > d]
// of the log-normal through the target's p50 and p95: on a heavy tail, the
// later an attempt already is, the longer it is likely to take yet.

// heavyTail is the spread (sigma of log time) from which a target's tail
// is heavy: 0.5 puts its p95 at 2.3 times its p50 (the study's stable
// targets have 0.25, its heavy-tailed ones 0.9).
const heavyTail = 0.5

// hedgeAim is the share of the budget the adaptive delay aims to spend:
// the rest is headroom, so that a burst of late attempts is not refused
// by a budget already spent on less late ones (in the study's (tail) the
// p99 was 10-25 % lower aiming at 0.7 of the budget than at all of it).
const hedgeAim = 0.7

// adaptiveDelay is the adaptive delay of an attempt at a target of
// statistics st, for a request of model at now, with nx the runner-up's
// (when hasNext).
func (h *Hedging) adaptiveDelay(model string, st *stats.Target, hasNext bool, nx *stats.Target, now time.Time) time.Duration {
	r := h.budget * hedgeAim
	if b := h.budgets[model]; b != nil {
		r = b.aim(now, h.budget)
	}
	d := quantileAt(st, 1-r)
	if hasNext && nx.Samples >= hedgeMinSamples && nx.P50 < st.P50 && max(spread(st), spread(nx)) >= heavyTail {
		d = min(d, quantileAt(nx, 1-r))
	}
	return max(d, config.HedgeFloor)
}

// quantileZ are the normal scores of the tracker's quantiles
// (stats.Quantiles: p50, p75, p90, p95, p99).
var quantileZ = [...]float64{0, 0.6744897501960817, 1.2815515655446004, 1.6448536269514722, 2.3263478740408408}

// normalScore is the standard normal's quantile at q in (0, 1).
func normalScore(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// quantileAt is st's quantile q in (0, 1), read off the piecewise line
// through its p50 ... p99 in log time against normal score; 0 when st has
// no positive quantile.
func quantileAt(st *stats.Target, q float64) time.Duration {
	var zs, ls [len(quantileZ)]float64
	n, only := 0, time.Duration(0)
	for i, p := range stats.Quantiles {
		if d := st.Quantile(p); d > 0 && (n == 0 || math.Log(float64(d)) >= ls[n-1]) {
			zs[n], ls[n], only = quantileZ[i], math.Log(float64(d)), d
			n++
		}
	}
	if n < 2 {
		return only // 0 with none
	}
	z := normalScore(min(max(q, 0.001), 0.999))
	i := 1 // the segment [i-1, i] that holds z, or the nearest one
	for i < n-1 && z > zs[i] {
		i++
	}
	l := ls[i-1] + (ls[i]-ls[i-1])*(z-zs[i-1])/(zs[i]-zs[i-1])
	return time.Duration(math.Exp(l))
}

// worthByResidual reports whether a runner-up of statistics nx, started
// at d, is expected to answer before an attempt at a target of statistics
// st that is still waiting at d: nx's p50 below E[T - d | T > d] of the
// log-normal through st's p50 and p95.
func worthByResidual(st, nx *stats.Target, d time.Duration) bool {
	if nx.Samples == 0 || st.P50 <= 0 || st.P95 <= st.P50 || d <= 0 {
		return false
	}
	mu, s := math.Log(float64(st.P50)), spread(st)
	z := (math.Log(float64(d)) - mu) / s
	tail := normalTail(z)
	if tail < 1e-12 {
		return true // later than the fit has any mass: a hang, not bad luck
	}
	rest := math.Exp(mu+s*s/2)*normalTail(z-s)/tail - float64(d)
	return float64(nx.P50) < rest
}

// normalTail is P(Z > z) for a standard normal Z.
func normalTail(z float64) float64 { return math.Erfc(z/math.Sqrt2) / 2 }

// spread is sigma of the log-normal through st's p50 and p95; 0 when
// they say none.
func spread(st *stats.Target) float64 {
	if st.P50 <= 0 || st.P95 <= st.P50 {
		return 0
	}
	return math.Log(float64(st.P95)/float64(st.P50)) / quantileZ[3]
}
