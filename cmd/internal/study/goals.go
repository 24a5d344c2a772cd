package study

import (
	"fmt"
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The routing-quality goals every latency mode is held to, each measured
// by one figure of the study.

// Goal is one goal and what the study measured for it.
type Goal struct {
	Scenario string // where it is measured ("" for every scenario)
	Mode     string
	Text     string  // the goal, in words
	Figure   string  // what was measured, in words
	Value    float64 // the figure as a number (seconds for times; -1: never)
	Met      bool
}

// Thresholds of the goals.
const (
	LeaderShare      = 0.90
	LeaderShareSlack = 0.03
	StableRatio      = 1.10
	AdaptWithin      = 3 * time.Second
	RecoverWithin    = 8 * time.Second
	QuickFaultRatio  = 1.10
	SlowFaultShare   = 0.2 // of least-latency's failed attempts
	SlowFaultRatio   = 1.20
	HangRatio        = 2.0
	BreakerSkips     = 0.05
	MinServedShare   = 0.999
	// (h): failed attempts per request, and the mean against the oracle's.
	RateLimitFaults = 0.02
	RateLimitRatio  = 1.15
	// (i): the first request served after every target's outage ends.
	OutageRecovery = time.Second
	// (capacity), (fleet) and (cache): the mean against the best static
	// split's (the cache-aware oracle's in (cache)), and the leadership
	// changes a minute (per replica in (fleet)).
	CapacityRatio    = 1.15
	FleetRatio       = 1.20
	CacheRatio       = 1.15
	MaxLeaderChanges = 6.0
)

// Goals evaluates every goal whose scenario and modes were run.
func (st *Study) Goals() []Goal {
	var out []Goal
	add := func(g Goal) { out = append(out, g) }
	ratioGoal := func(scenario, mode string, limit float64, what string) {
		if g, ok := st.ratioGoal(scenario, mode, limit, what); ok {
			add(g)
		}
	}

	if r := st.Result("a", "least-latency"); r != nil {
		x := r.SelectionShare(telemetry.SelectionLeader)
		add(Goal{Scenario: "a", Mode: r.Mode, Value: x, Met: math.Abs(x-LeaderShare) <= LeaderShareSlack+1e-9,
			Text:   fmt.Sprintf("(a) least-latency: leader share %.2f ± %.2f", LeaderShare, LeaderShareSlack),
			Figure: fmt.Sprintf("%.3f", x)})
	}
	ratioGoal("a", "ewma-latency", StableRatio, "")
	ratioGoal("a", "reliable-latency", StableRatio, "")
	for k, within := range []time.Duration{AdaptWithin, RecoverWithin} {
		for _, m := range LatencyModes {
			r := st.Result("b", m)
			if r == nil || len(r.ChangeTimes) <= k {
				continue
			}
			ch := r.Scenario.Changes[k]
			d := r.ChangeTimes[k]
			what := "the slowdown"
			if ch.Kind == Recovery {
				what = "its recovery"
			}
			add(Goal{Scenario: "b", Mode: m, Value: seconds(d), Met: d >= 0 && d <= within,
				Text: fmt.Sprintf("(b) %s: %s gets > 50 %% of first picks within %s of %s",
					m, r.Scenario.Targets[ch.Leader].Name, secs(within), what),
				Figure: r.ChangeText(k)})
		}
	}
	ratioGoal("c", "reliable-latency", QuickFaultRatio, "")
	if rel, least := st.Result("c2", "reliable-latency"), st.Result("c2", "least-latency"); rel != nil && least != nil {
		x, y := rel.PerRequest(rel.Faults), least.PerRequest(least.Faults)
		share := math.Inf(1)
		if y > 0 {
			share = x / y
		}
		add(Goal{Scenario: "c2", Mode: rel.Mode, Value: share, Met: share <= SlowFaultShare,
			Text:   "(c2) reliable-latency: at most a fifth of least-latency's failed attempts",
			Figure: fmt.Sprintf("%.3f against %.3f per request (%.2fx)", x, y, share)})
	}
	ratioGoal("c2", "reliable-latency", SlowFaultRatio, "")
	for _, m := range []string{"ewma-latency", "reliable-latency"} {
		r, o := st.Result("d", m), st.Result("d", Oracle)
		if r == nil || o == nil || r.Scenario.Window == nil {
			continue
		}
		x := st.WindowRatio(r)
		add(Goal{Scenario: "d", Mode: m, Value: x, Met: x <= HangRatio,
			Text:   fmt.Sprintf("(d) %s, no breaker: mean TTFB within %.0fx the oracle's %s", m, HangRatio, r.Scenario.Window.Name),
			Figure: fmt.Sprintf("%.3fx (%s against %s)", x, msText(r.WindowTTFB), msText(o.WindowTTFB))})
	}
	for _, m := range LatencyModes {
		r := st.Result("d-breaker", m)
		if r == nil {
			continue
		}
		x := r.PerRequest(r.Skips)
		add(Goal{Scenario: "d-breaker", Mode: m, Value: x, Met: x <= BreakerSkips,
			Text:   fmt.Sprintf("(d-breaker) %s: at most %.2f skips per request", m, BreakerSkips),
			Figure: fmt.Sprintf("%.4f", x)})
	}
	out = append(out, st.failureGoals()...)
	out = append(out, st.hedgeGoals()...)
	out = append(out, st.reactGoals()...)
	out = append(out, st.throughputGoals()...)
	for _, m := range LatencyModes {
		worst, where := math.Inf(1), ""
		for _, s := range st.Scenarios {
			if s.Outage != nil {
				continue // nothing can be served while every target is down
			}
			if r := st.Result(s.Name, m); r != nil && r.ServedShare() < worst {
				worst, where = r.ServedShare(), s.Name
			}
		}
		if where == "" {
			continue
		}
		add(Goal{Mode: m, Value: worst, Met: worst >= MinServedShare,
			Text:   fmt.Sprintf("(every scenario) %s: serves >= %s of requests", m, percent(MinServedShare, 1)),
			Figure: fmt.Sprintf("lowest: %s in (%s)", percent(worst, 2), where)})
	}
	return out
}

// ratioGoal is the goal that mode's mean TTFB in scenario is within limit
// times the oracle's; ok is false when either did not run.
func (st *Study) ratioGoal(scenario, mode string, limit float64, what string) (Goal, bool) {
	r, o := st.Result(scenario, mode), st.Result(scenario, Oracle)
	if r == nil || o == nil {
		return Goal{}, false
	}
	x := st.Ratio(r)
	return Goal{Scenario: scenario, Mode: mode, Value: x, Met: x <= limit,
		Text:   fmt.Sprintf("(%s) %s: mean TTFB within %.2fx %s%s", scenario, mode, limit, oracleName(r.Scenario), what),
		Figure: fmt.Sprintf("%.3fx (%s against %s)", x, msText(r.Mean()), msText(o.Mean()))}, true
}

// oracleName is how a goal names s's oracle.
func oracleName(s *Scenario) string {
	switch {
	case s.Oracle == OracleSplit:
		return "the best static split's"
	case s.Conversations > 0:
		return "the cache-aware oracle's"
	}
	return "the oracle's"
}

// seconds is d in seconds, -1 for never.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return d.Seconds()
}

// msText prints a duration in milliseconds.
func msText(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// failureGoals are the goals of the providers that fail as real ones do:
// (g) a revoked key, (h) a rate limit, (i) an outage of every target.
func (st *Study) failureGoals() []Goal {
	var out []Goal
	for _, m := range LatencyModes {
		if r := st.Result("g", m); r != nil {
			n := 0
			for _, d := range r.Draws[t20] {
				n += d.Attempts
			}
			allowed := math.Ceil(r.duration.Seconds() / DisableProbeEvery.Seconds())
			out = append(out, Goal{Scenario: "g", Mode: m, Value: float64(n), Met: float64(n) <= allowed,
				Text:   fmt.Sprintf("(g) %s: at most one attempt on the revoked key per %s probe interval", m, secs(DisableProbeEvery)),
				Figure: fmt.Sprintf("%d attempts in %s (%d allowed)", n, secs(r.duration), int(allowed))})
		}
		if r := st.Result("h", m); r != nil {
			x := r.PerRequest(r.Faults)
			out = append(out, Goal{Scenario: "h", Mode: m, Value: x, Met: x <= RateLimitFaults,
				Text:   fmt.Sprintf("(h) %s: at most %.2f failed attempts per request", m, RateLimitFaults),
				Figure: fmt.Sprintf("%.4f", x)})
			if o := st.Result("h", Oracle); o != nil {
				y := st.Ratio(r)
				out = append(out, Goal{Scenario: "h", Mode: m, Value: y, Met: y <= RateLimitRatio,
					Text:   fmt.Sprintf("(h) %s: mean TTFB within %.2fx the oracle's", m, RateLimitRatio),
					Figure: fmt.Sprintf("%.3fx (%s against %s)", y, msText(r.Mean()), msText(o.Mean()))})
			}
		}
		if r := st.Result("i", m); r != nil {
			d := r.Recovered
			out = append(out, Goal{Scenario: "i", Mode: m, Value: seconds(d), Met: d >= 0 && d < OutageRecovery && r.LateFailures == 0,
				Text:   fmt.Sprintf("(i) %s: the first request served within %s of the outage's end, none failed after", m, secs(OutageRecovery)),
				Figure: fmt.Sprintf("%s after, %d failed after", msText(d), r.LateFailures)})
		}
	}
	return out
}

// Thresholds of the hedging goals.
const (
	HedgeTailRatio   = 0.7  // (tail): a hedged mode's p99 against the best unhedged mode's
	HedgeSpikesRatio = 0.5  // (tail-spikes): the same
	HedgeStableExtra = 0.05 // hedges per request in (a)
	HedgeStableMean  = 0.02 // (a)'s mean with hedging, against without
	HedgeHangRatio   = 1.05 // (d) reliable-latency with hedging, while t20 hangs
)

// hedgeGoals are the goals of hedging: in the tail scenarios a hedged
// mode's p99 is at most HedgeTailRatio ((tail)) or HedgeSpikesRatio
// ((tail-spikes)) of the best unhedged mode's and below the oracle's, its mean no worse than without, at a cost within the budget; in
// (a) it costs next to nothing; in (d) reliable-latency with it stays near
// the oracle while t20 hangs.
func (st *Study) hedgeGoals() []Goal {
	var out []Goal
	for _, sc := range []string{"tail", "tail-spikes"} {
		best := math.Inf(1)
		for _, m := range st.Modes {
			if _, hedged := baseMode(m); !hedged && m != Oracle {
				if r := st.Result(sc, m); r != nil {
					best = min(best, float64(r.Quantile(0.99)))
				}
			}
		}
		o := st.Result(sc, Oracle)
		for _, m := range HedgedModes {
			r := st.Result(sc, m)
			plain, _ := baseMode(m)
			p := st.Result(sc, plain)
			if r == nil || o == nil || p == nil || math.IsInf(best, 1) {
				continue
			}
			p99 := float64(r.Quantile(0.99))
			x, ratio := p99/best, HedgeTailRatio
			if sc == "tail-spikes" {
				ratio = HedgeSpikesRatio
			}
			out = append(out, Goal{Scenario: sc, Mode: m, Value: x, Met: x <= ratio && p99 < float64(o.Quantile(0.99)),
				Text:   fmt.Sprintf("(%s) %s: p99 at most %.1fx the best unhedged mode's, and below the oracle's", sc, m, ratio),
				Figure: fmt.Sprintf("%s: %.2fx %s, oracle %s", msText(r.Quantile(0.99)), x, msText(time.Duration(best)), msText(o.Quantile(0.99)))})
			extra := r.PerRequest(r.Hedged)
			out = append(out, Goal{Scenario: sc, Mode: m, Value: extra, Met: r.Mean() <= p.Mean() && extra <= HedgeBudget+0.01,
				Text:   fmt.Sprintf("(%s) %s: mean no worse than without hedging, at most %.2f hedges per request", sc, m, HedgeBudget+0.01),
				Figure: fmt.Sprintf("mean %s (without: %s), %.3f hedges per request", msText(r.Mean()), msText(p.Mean()), extra)})
		}
	}
	for _, m := range HedgedModes {
		plain, _ := baseMode(m)
		r, p := st.Result("a", m), st.Result("a", plain)
		if r == nil || p == nil {
			continue
		}
		extra, drift := r.PerRequest(r.Hedged), float64(r.Mean())/float64(p.Mean())-1
		out = append(out, Goal{Scenario: "a", Mode: m, Value: extra, Met: extra <= HedgeStableExtra && math.Abs(drift) <= HedgeStableMean,
			Text:   fmt.Sprintf("(a) %s: at most %.2f hedges per request, the mean within %.0f %% of without", m, HedgeStableExtra, HedgeStableMean*100),
			Figure: fmt.Sprintf("%.3f hedges per request, mean %+.1f %%", extra, drift*100)})
	}
	if r, o := st.Result("d", "reliable-latency"+HedgeSuffix), st.Result("d", Oracle); r != nil && o != nil && r.Scenario.Window != nil {
		x := st.WindowRatio(r)
		out = append(out, Goal{Scenario: "d", Mode: r.Mode, Value: x, Met: x <= HedgeHangRatio,
			Text:   fmt.Sprintf("(d) %s, no breaker: mean TTFB within %.2fx the oracle's %s", r.Mode, HedgeHangRatio, r.Scenario.Window.Name),
			Figure: fmt.Sprintf("%.3fx (%s against %s)", x, msText(r.WindowTTFB), msText(o.WindowTTFB))})
	}
	return out
}

// reactGoals are the goals of the providers that react to what they are
// sent: in (capacity) least- and reliable-latency stay within
// CapacityRatio of the best static split, no request fails while some
// target has room (t80 always has: so, in the study, no request fails;
// the providers queue rather than refuse, so this holds the pipeline to
// never turning a queue into a failure), and their leader changes at most
// MaxLeaderChanges times a minute; in (fleet) every latency mode stays
// within FleetRatio of it and each replica's leader changes at most
// MaxLeaderChanges times a minute; in (cache) least- and reliable-latency
// stay within CacheRatio of the cache-aware oracle.
func (st *Study) reactGoals() []Goal {
	var out []Goal
	leaders := func(scenario, mode string) {
		r := st.Result(scenario, mode)
		if r == nil {
			return
		}
		x, k := r.WorstLeaderChanges()
		g := Goal{Scenario: scenario, Mode: mode, Value: x, Met: x <= MaxLeaderChanges,
			Text:   fmt.Sprintf("(%s) %s: the leader changes at most %g times a minute", scenario, mode, MaxLeaderChanges),
			Figure: fmt.Sprintf("%.1f a minute", x)}
		if len(r.LeaderChanges) > 1 {
			g.Text = fmt.Sprintf("(%s) %s: each replica's leader changes at most %g times a minute", scenario, mode, MaxLeaderChanges)
			g.Figure = fmt.Sprintf("%.1f a minute (replica %d, the worst)", x, k)
		}
		if o := st.Result(scenario, Oracle); o != nil {
			y, _ := o.WorstLeaderChanges()
			g.Figure += fmt.Sprintf("; oracle %.1f", y)
		}
		out = append(out, g)
	}
	for _, m := range []string{"least-latency", "reliable-latency"} {
		if g, ok := st.ratioGoal("capacity", m, CapacityRatio, ""); ok {
			out = append(out, g)
		}
		if r := st.Result("capacity", m); r != nil {
			failed := r.Requests - r.Served
			out = append(out, Goal{Scenario: "capacity", Mode: m, Value: float64(r.FailedWithRoom), Met: r.FailedWithRoom == 0,
				Text:   fmt.Sprintf("(capacity) %s: no request fails while a target has room", m),
				Figure: fmt.Sprintf("%d of %d failed, %d of them while a target had room", failed, r.Requests, r.FailedWithRoom)})
		}
		leaders("capacity", m)
	}
	for _, m := range LatencyModes {
		if g, ok := st.ratioGoal("fleet", m, FleetRatio, ""); ok {
			out = append(out, g)
		}
		leaders("fleet", m)
	}
	for _, m := range []string{"least-latency", "reliable-latency"} {
		if g, ok := st.ratioGoal("cache", m, CacheRatio, ""); ok {
			out = append(out, g)
		}
	}
	return out
}
