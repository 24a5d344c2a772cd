package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// The figures and goals of slow moments, (tail) and (tail-spikes), and of
// providers that react to what they are sent, (capacity), (fleet) and
// (cache): the routing study's goals (goals_test.go holds them equal),
// judged on the pooled rounds.
const (
	goalHedgeTailRatio   = 0.7  // (tail): a hedged mode's p99 / the best unhedged mode's
	goalHedgeSpikesRatio = 0.5  // (tail-spikes): the same
	goalHedgeExtra       = 0.01 // hedges per request beyond the budget
	goalCapacityRatio    = 1.15 // (capacity) least- and reliable-latency / the best static split
	goalFleetRatio       = 1.20 // (fleet) every latency mode / the best static split
	goalLeaderChanges    = 6.0  // (capacity), (fleet): a minute, per replica
	goalCacheRatio       = 1.15 // (cache) least- and reliable-latency / the cache-aware oracle
)

// oracleNoteOf says what the oracle of s is.
func (v routingView) oracleNoteOf(s routinge2e.Scenario) string {
	switch {
	case s.Split != nil:
		return fmt.Sprintf("oracle: the best static split, each request's first pick drawn by the client (X-Firstbyte-Provider-Order, "+
			"the others in declaration order): the study's best split (fast, mid, slow %v) and every move of %.2f from it, one run each "+
			"in the first round; the best was %v (its run is the oracle's row, later rounds run it again)", s.Split, splitStep, v.res.splits[s.Name])
	case s.Conversations > 0:
		return "oracle: the cache-aware order, for each request the fixed order with the least expected TTFB knowing which providers " +
			"answered its conversation in the last 5 minutes (a cached prefix's median halved); " + oracleNote(s)
	}
	return oracleNote(s)
}

// worstLeaderChanges is the most leadership changes a minute of any
// replica in any round of arm.
func (v routingView) worstLeaderChanges(s routinge2e.Scenario, arm string) float64 {
	worst := 0.0
	for _, outs := range v.res.runs[s.Name][arm] {
		for r := range s.Gateways() {
			worst = max(worst, routinge2e.LeaderChanges(outs, s.Names(), r, s.Duration))
		}
	}
	return worst
}

// reactTables are the extra tables of s: hedging's figures, leadership.
func reactTables(v routingView, s routinge2e.Scenario) []table {
	switch {
	case s.Hedged:
		t := table{
			title: fmt.Sprintf("Scenario (%s): hedging (%s, budget %g, max %d)", s.Name, routinge2e.HedgeAfter, routinge2e.HedgeBudget, routinge2e.HedgeMax),
			head:  []string{"arm", "mean TTFB", "p99", "p99 x best unhedged", "hedges/req", "won", "lost", "hedged requests whose loser was cut"},
		}
		best := v.bestUnhedgedP99(s)
		for _, arm := range armsOf(s) {
			f, h := v.figures(s.Name, arm, routinge2e.Window{}), routinge2e.HedgingOf(v.pooled(s.Name, arm))
			t.rows = append(t.rows, []string{arm, msec(f.Mean), msec(f.P99), fmt.Sprintf("%.2f", ratio(f.P99, best)),
				fmt.Sprintf("%.3f", h.PerRequest()), fmt.Sprint(h.Won), fmt.Sprint(h.Lost), fmt.Sprintf("%d of %d", h.LosersCut, h.Hedged)})
		}
		t.notes = append(t.notes, "won/lost: X-Firstbyte-Hedged; a loser is cut when its provider never answered it (the gateway closed the request first)")
		return []table{t}
	case s.Split != nil:
		t := table{
			title: fmt.Sprintf("Scenario (%s): leadership and queues", s.Name),
			head:  []string{"arm", "x best static split", "leadership changes a minute (worst replica, worst round)"},
		}
		split := v.figures(s.Name, armOracle, routinge2e.Window{})
		for _, arm := range armsOf(s) {
			f := v.figures(s.Name, arm, routinge2e.Window{})
			t.rows = append(t.rows, []string{arm, fmt.Sprintf("%.2f", ratio(f.Mean, split.Mean)), fmt.Sprintf("%.0f", v.worstLeaderChanges(s, arm))})
		}
		t.notes = append(t.notes, fmt.Sprintf("the leader of each %v is the target with the most first picks, once ahead of the last leader by more than %d standard deviations of an even split (the study's definition)",
			routinge2e.LeaderWindow, routinge2e.LeaderMargin))
		return []table{t}
	case s.Conversations > 0:
		t := table{
			title: fmt.Sprintf("Scenario (%s): prompt caches", s.Name),
			head:  []string{"arm", "x cache-aware oracle", "later turns answered from a provider's cache"},
		}
		oracle := v.figures(s.Name, armOracle, routinge2e.Window{})
		for _, arm := range armsOf(s) {
			f := v.figures(s.Name, arm, routinge2e.Window{})
			var hits []string
			for _, outs := range v.res.runs[s.Name][arm] {
				hits = append(hits, fmt.Sprintf("%.3f", routinge2e.CacheHits(outs, s.Conversations)))
			}
			t.rows = append(t.rows, []string{arm, fmt.Sprintf("%.2f", ratio(f.Mean, oracle.Mean)), strings.Join(hits, ", ")})
		}
		t.notes = append(t.notes, "a turn answered from a cache: its answer reports cached prompt tokens; later turns: every request but each conversation's first (round by round)")
		return []table{t}
	}
	return nil
}

// bestUnhedgedP99 is the lowest p99 of s's latency modes without hedging.
func (v routingView) bestUnhedgedP99(s routinge2e.Scenario) (best time.Duration) {
	for _, m := range latencyModes {
		if p := v.figures(s.Name, m, routinge2e.Window{}).P99; best == 0 || p < best {
			best = p
		}
	}
	return best
}

// reactGoals are the goals of these scenarios, for those the run had.
func reactGoals(v routingView) []goal {
	var goals []goal
	for _, name := range []string{"tail", "tail-spikes"} {
		s, ok := v.scenario(name)
		if !ok {
			continue
		}
		best, oracle := v.bestUnhedgedP99(s), v.figures(name, armOracle, routinge2e.Window{}).P99
		for _, m := range latencyModes {
			f, p := v.figures(name, m+routinge2e.HedgeSuffix, routinge2e.Window{}), v.figures(name, m, routinge2e.Window{})
			x, want := ratio(f.P99, best), goalHedgeTailRatio
			if name == "tail-spikes" {
				want = goalHedgeSpikesRatio
			}
			goals = append(goals, goal{fmt.Sprintf("(%s) %s%s: p99 at most %.1fx the best unhedged mode's, and below the oracle's", name, m, routinge2e.HedgeSuffix, want),
				fmt.Sprintf("%.2fx (%s against %s; oracle %s)", x, msec(f.P99), msec(best), msec(oracle)), x <= want && f.P99 < oracle})
			h := routinge2e.HedgingOf(v.pooled(name, m+routinge2e.HedgeSuffix))
			goals = append(goals, goal{fmt.Sprintf("(%s) %s%s: mean no worse than without hedging, at most %.2f hedges per request", name, m, routinge2e.HedgeSuffix, routinge2e.HedgeBudget+goalHedgeExtra),
				fmt.Sprintf("mean %s (without: %s), %.3f hedges per request", msec(f.Mean), msec(p.Mean), h.PerRequest()),
				f.Mean <= p.Mean && h.PerRequest() <= routinge2e.HedgeBudget+goalHedgeExtra})
		}
	}
	if s, ok := v.scenario("capacity"); ok {
		split := v.figures(s.Name, armOracle, routinge2e.Window{})
		for _, m := range []string{"least-latency", "reliable-latency"} {
			f := v.figures(s.Name, m, routinge2e.Window{})
			x, lc := ratio(f.Mean, split.Mean), v.worstLeaderChanges(s, m)
			goals = append(goals, goal{fmt.Sprintf("(capacity) %s: mean within %.2fx the best static split's, no request failing (slow always has room), at most %.0f leadership changes a minute", m, goalCapacityRatio, goalLeaderChanges),
				fmt.Sprintf("%.2fx (%s against %s), served %s, %.0f a minute", x, msec(f.Mean), msec(split.Mean), pct(f.Served), lc),
				x <= goalCapacityRatio && f.Served == 1 && lc <= goalLeaderChanges})
		}
	}
	if s, ok := v.scenario("fleet"); ok {
		split := v.figures(s.Name, armOracle, routinge2e.Window{})
		for _, m := range latencyModes {
			f := v.figures(s.Name, m, routinge2e.Window{})
			x, lc := ratio(f.Mean, split.Mean), v.worstLeaderChanges(s, m)
			goals = append(goals, goal{fmt.Sprintf("(fleet) %s: fleet mean within %.2fx the best static split's, at most %.0f leadership changes a minute per replica", m, goalFleetRatio, goalLeaderChanges),
				fmt.Sprintf("%.2fx (%s against %s), worst replica %.0f a minute", x, msec(f.Mean), msec(split.Mean), lc),
				x <= goalFleetRatio && lc <= goalLeaderChanges})
		}
	}
	if s, ok := v.scenario("cache"); ok {
		oracle := v.figures(s.Name, armOracle, routinge2e.Window{})
		for _, m := range []string{"least-latency", "reliable-latency"} {
			f := v.figures(s.Name, m, routinge2e.Window{})
			x := ratio(f.Mean, oracle.Mean)
			goals = append(goals, goal{fmt.Sprintf("(cache) %s: mean within %.2fx the cache-aware oracle's", m, goalCacheRatio),
				fmt.Sprintf("%.2fx (%s against %s)", x, msec(f.Mean), msec(oracle.Mean)), x <= goalCacheRatio})
		}
	}
	return goals
}
