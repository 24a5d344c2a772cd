package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The goals routing quality is measured against.
const (
	goalLeaderShare      = 0.90 // (a), least-latency, ± goalLeaderTolerance
	goalLeaderTolerance  = 0.03
	goalStableRatio      = 1.10 // (a), ewma- and reliable-latency mean TTFB / the oracle's
	goalAdapt            = 3 * time.Second
	goalRecover          = 8 * time.Second
	goalQuickFaultsRatio = 1.10 // (c), reliable-latency / the oracle
	goalSlowFaultsRatio  = 1.20 // (c2), reliable-latency / the oracle
	goalSlowFaultsShare  = 0.2  // (c2), reliable-latency's failed attempts / least-latency's
	goalHangRatio        = 2.0  // (d), ewma- and reliable-latency / the oracle, while the target hangs
	goalSkips            = 0.05 // (d-breaker), per request
	goalServed           = 0.999
)

// routingView reads a routing run's results: figures pooled over rounds,
// lead times round by round.
type routingView struct{ res *routingResults }

func (v routingView) scenario(name string) (routinge2e.Scenario, bool) {
	for _, s := range v.res.plan.scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return routinge2e.Scenario{}, false
}

func (v routingView) pooled(scn, arm string) []routinge2e.Outcome {
	var all []routinge2e.Outcome
	for _, outs := range v.res.runs[scn][arm] {
		all = append(all, outs...)
	}
	return all
}

func (v routingView) figures(scn, arm string, w routinge2e.Window) routinge2e.Figures {
	return routinge2e.Summarize(v.pooled(scn, arm), w)
}

// lead is how long after a change its best target took the lead in one
// round; ok is false when it never did before the next change or the end.
type lead struct {
	after time.Duration
	ok    bool
}

// leads is, round by round, how long after change c the change's best
// target took the lead.
func (v routingView) leads(s routinge2e.Scenario, arm string, c routinge2e.Change) []lead {
	end := s.Duration
	for _, next := range s.Changes {
		if next.At > c.At {
			end = next.At
			break
		}
	}
	var out []lead
	for _, outs := range v.res.runs[s.Name][arm] {
		d, ok := routinge2e.TimeToLead(outs, c.Best, c.At, end)
		out = append(out, lead{d, ok})
	}
	return out
}

// worst is the longest lead time, and false when some round never led.
func worst(ls []lead) (time.Duration, bool) {
	var w time.Duration
	for _, l := range ls {
		if !l.ok {
			return 0, false
		}
		w = max(w, l.after)
	}
	return w, len(ls) > 0
}

// leadText is the worst round's lead time, followed by every round's when
// there are several and they differ.
func leadText(ls []lead) string {
	text := func(l lead) string {
		if !l.ok {
			return "never"
		}
		return secs(l.after)
	}
	w, ok := worst(ls)
	head := text(lead{w, ok})
	var each []string
	for _, l := range ls {
		each = append(each, text(l))
	}
	if len(ls) > 1 && slices.ContainsFunc(ls, func(l lead) bool { return l != ls[0] }) {
		head += " (" + strings.Join(each, ", ") + ")"
	}
	return head
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s" }

func msec(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func buildRoutingReport(res *routingResults) *report {
	p, m := res.plan, res.machine
	v := routingView{res}
	r := &report{}
	kind := "full run"
	if p.quick {
		kind = "QUICK run (-quick: too short for figures to quote)"
	}
	loads := slices.Clone(res.loads)
	slices.SortFunc(loads, func(a, b string) int { return strings.Compare(pad(a), pad(b)) })
	r.header = []string{
		fmt.Sprintf("%s, routing run, %s, %d round(s), %s", res.started.UTC().Format("2006-01-02 15:04 MST"), kind, p.rounds, res.duration.Round(time.Second)),
		fmt.Sprintf("machine: %d CPUs (%s), shared by the clients, the simulated providers and the gateway; load average %s at start, %s at end, 1-minute figure %s to %s over the arm runs",
			m.cpus, m.cpuModel, m.loadStart, m.loadEnd, loads[0], loads[len(loads)-1]),
		fmt.Sprintf("go: %s; gateway: %s", m.goVersion, orUnknown(m.gateway)),
		fmt.Sprintf("%d closed-loop clients of unary chat completions (%d in (capacity) and (fleet)); targets fast, mid, slow: log-normal TTFB, sigma %.2f (%.1f in (tail)), medians 20, 40, 80 ms; a fresh gateway (a fleet: fresh gateways and collector) and fresh providers for every arm run",
			routinge2e.Clients, routinge2e.CapacityClients, routinge2e.Spread, routinge2e.TailSpread),
	}

	for _, s := range p.scenarios {
		r.tables = append(r.tables, scenarioTable(v, s))
		if len(s.Changes) > 0 {
			r.tables = append(r.tables, sharesTable(v, s))
		}
		if len(s.Limited()) > 0 {
			r.tables = append(r.tables, limitTable(v, s))
		}
		r.tables = append(r.tables, reactTables(v, s)...)
	}
	r.goals = routingGoals(v)
	return r
}

// pad makes load averages compare as numbers.
func pad(s string) string {
	i, f, _ := strings.Cut(s, ".")
	return fmt.Sprintf("%08s.%s", i, f)
}

func scenarioTable(v routingView, s routinge2e.Scenario) table {
	rounds := v.res.plan.rounds
	t := table{
		title: fmt.Sprintf("Scenario (%s): %s (%v per run, %d round(s))", s.Name, s.Title, s.Duration, rounds),
		head: []string{"arm", "requests", "served", "mean TTFB", "p50", "p99", "x oracle", "failed attempts/req", "skips/req",
			"first picks fast/mid/slow"},
	}
	if s.Window.To > 0 {
		t.head = append(t.head, "mean "+s.Window.String(), "x oracle "+s.Window.String())
	}
	for _, c := range s.Changes {
		t.head = append(t.head, fmt.Sprintf("%s leads after the %s (%v)", c.Best, c.What, c.At))
	}
	extraHead, extra := failureColumns(v, s)
	t.head = append(t.head, extraHead...)
	oracle := v.figures(s.Name, armOracle, routinge2e.Window{})
	oracleW := v.figures(s.Name, armOracle, s.Window)
	for _, arm := range armsOf(s) {
		f := v.figures(s.Name, arm, routinge2e.Window{})
		row := []string{arm, strconv.Itoa(f.Requests), pct(f.Served), msec(f.Mean), msec(f.P50), msec(f.P99),
			fmt.Sprintf("%.2f", ratio(f.Mean, oracle.Mean)), fmt.Sprintf("%.3f", f.FailedAttempts), fmt.Sprintf("%.3f", f.Skips),
			fmt.Sprintf("%.0f / %.0f / %.0f %%", 100*f.FirstPicks[routinge2e.Fast], 100*f.FirstPicks[routinge2e.Mid], 100*f.FirstPicks[routinge2e.Slow])}
		if s.Window.To > 0 {
			w := v.figures(s.Name, arm, s.Window)
			row = append(row, msec(w.Mean), fmt.Sprintf("%.2f", ratio(w.Mean, oracleW.Mean)))
		}
		for _, c := range s.Changes {
			if arm == armOracle {
				row = append(row, "-") // its order switches at the change itself
				continue
			}
			row = append(row, leadText(v.leads(s, arm, c)))
		}
		if extra != nil {
			row = append(row, extra(arm)...)
		}
		t.rows = append(t.rows, row)
	}
	t.notes = append(t.notes, v.oracleNoteOf(s))
	if rounds > 1 {
		var per []string
		for _, arm := range armsOf(s) {
			var means []string
			for _, outs := range v.res.runs[s.Name][arm] {
				means = append(means, fmt.Sprintf("%.1f", float64(routinge2e.Summarize(outs, routinge2e.Window{}).Mean)/1e6))
			}
			per = append(per, arm+" "+strings.Join(means, ", "))
		}
		t.notes = append(t.notes, "mean TTFB round by round (ms): "+strings.Join(per, "; "))
	}
	if len(s.Changes) > 0 {
		t.notes = append(t.notes, fmt.Sprintf("leads after: from the change to the end of the first %v bin that starts %v in which the target has more than half the first picks in every bin; with several rounds, the worst (then round by round)",
			routinge2e.LeadBin, routinge2e.LeadSustain))
	}
	return t
}

// oracleNote says the oracle's order in each phase and the TTFB it is
// expected to give, from the distributions alone.
func oracleNote(s routinge2e.Scenario) string {
	at := []time.Duration{0}
	for _, p := range s.Targets {
		for _, ph := range p.Phases {
			if ph.After < s.Duration && !slices.Contains(at, ph.After) {
				at = append(at, ph.After)
			}
		}
	}
	slices.Sort(at)
	var parts []string
	for _, t := range at {
		order := s.OracleOrder(t)
		part := fmt.Sprintf("from %v %s (expected %.1f ms)", t, strings.Join(order, ","), 1000*s.ExpectedTTFB(order, t))
		if full := s.Limited(); len(full) > 0 {
			order := s.OracleOrderFull(t, full)
			part += fmt.Sprintf(" while %s has room in its rate limit, else %s (expected %.1f ms)",
				strings.Join(full, ", "), strings.Join(order, ","), 1000*s.ExpectedTTFBFull(order, t, full))
		}
		parts = append(parts, part)
	}
	return "oracle order " + strings.Join(parts, "; ")
}

// sharesTable is fast's share of first picks second by second.
func sharesTable(v routingView, s routinge2e.Scenario) table {
	t := table{
		title: fmt.Sprintf("Scenario (%s): fast's share of first picks, second by second (%%)", s.Name),
		head:  []string{"arm"},
	}
	n := int((s.Duration + time.Second - 1) / time.Second)
	for i := range n {
		t.head = append(t.head, fmt.Sprintf("%ds", i))
	}
	for _, arm := range armsOf(s) {
		row := []string{arm}
		for _, sh := range routinge2e.FirstPickShares(v.pooled(s.Name, arm), routinge2e.Fast, time.Second, s.Duration) {
			if sh < 0 {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%.0f", 100*sh))
		}
		t.rows = append(t.rows, row)
	}
	var changes []string
	for _, c := range s.Changes {
		changes = append(changes, fmt.Sprintf("%s at %v", c.What, c.At))
	}
	t.notes = append(t.notes, "column Ns: requests sent in [N, N+1) s; "+strings.Join(changes, ", "))
	return t
}

func routingGoals(v routingView) []goal {
	var goals []goal
	ratioOf := func(scn, arm string, w routinge2e.Window) float64 {
		return ratio(v.figures(scn, arm, w).Mean, v.figures(scn, armOracle, w).Mean)
	}
	if _, ok := v.scenario("a"); ok {
		var warm []routinge2e.Outcome
		for _, o := range v.pooled("a", "least-latency") {
			if o.Selection != telemetry.SelectionCold {
				warm = append(warm, o)
			}
		}
		f := routinge2e.Summarize(warm, routinge2e.Window{})
		share := f.FirstPicks[routinge2e.Fast]
		goals = append(goals, goal{
			fmt.Sprintf("(a) least-latency leader share %.2f ± %.2f", goalLeaderShare, goalLeaderTolerance),
			fmt.Sprintf("fast %.3f of first picks (selection leader %.3f, explore %.3f; cold requests left out)", share, f.Selections[telemetry.SelectionLeader], f.Selections[telemetry.SelectionExplore]),
			share >= goalLeaderShare-goalLeaderTolerance && share <= goalLeaderShare+goalLeaderTolerance,
		})
		for _, arm := range []string{"ewma-latency", "reliable-latency"} {
			x := ratioOf("a", arm, routinge2e.Window{})
			goals = append(goals, goal{fmt.Sprintf("(a) %s mean TTFB <= %.2fx the oracle's", arm, goalStableRatio), fmt.Sprintf("%.2fx", x), x <= goalStableRatio})
		}
	}
	if s, ok := v.scenario("b"); ok && len(s.Changes) == 2 {
		for _, arm := range latencyModes {
			adapt, recov := v.leads(s, arm, s.Changes[0]), v.leads(s, arm, s.Changes[1])
			wa, okA := worst(adapt)
			wr, okR := worst(recov)
			met := okA && okR && wa <= goalAdapt && wr <= goalRecover
			goals = append(goals, goal{
				fmt.Sprintf("(b) %s: mid > 50%% of first picks within %v of the slowdown, fast within %v of its recovery", arm, goalAdapt, goalRecover),
				leadText(adapt) + " / " + leadText(recov), met,
			})
		}
	}
	if _, ok := v.scenario("c"); ok {
		x := ratioOf("c", "reliable-latency", routinge2e.Window{})
		goals = append(goals, goal{fmt.Sprintf("(c) reliable-latency mean TTFB <= %.2fx the oracle's", goalQuickFaultsRatio), fmt.Sprintf("%.2fx", x), x <= goalQuickFaultsRatio})
	}
	if _, ok := v.scenario("c2"); ok {
		rel := v.figures("c2", "reliable-latency", routinge2e.Window{}).FailedAttempts
		least := v.figures("c2", "least-latency", routinge2e.Window{}).FailedAttempts
		goals = append(goals, goal{
			fmt.Sprintf("(c2) reliable-latency's failed attempts <= %.1f x least-latency's", goalSlowFaultsShare),
			fmt.Sprintf("%.3f vs %.3f per request (%.2f)", rel, least, rel/least), rel <= goalSlowFaultsShare*least,
		})
		x := ratioOf("c2", "reliable-latency", routinge2e.Window{})
		goals = append(goals, goal{fmt.Sprintf("(c2) reliable-latency mean TTFB <= %.2fx the oracle's", goalSlowFaultsRatio), fmt.Sprintf("%.2fx", x), x <= goalSlowFaultsRatio})
	}
	if s, ok := v.scenario("d"); ok {
		for _, arm := range []string{"ewma-latency", "reliable-latency"} {
			x := ratioOf("d", arm, s.Window)
			goals = append(goals, goal{fmt.Sprintf("(d) %s mean TTFB <= %.0fx the oracle's while fast hangs (%v)", arm, goalHangRatio, s.Window), fmt.Sprintf("%.2fx", x), x <= goalHangRatio})
		}
	}
	if _, ok := v.scenario("d-breaker"); ok {
		var parts []string
		met := true
		for _, arm := range latencyModes {
			sk := v.figures("d-breaker", arm, routinge2e.Window{}).Skips
			parts = append(parts, fmt.Sprintf("%s %.3f", arm, sk))
			met = met && sk <= goalSkips
		}
		goals = append(goals, goal{fmt.Sprintf("(d-breaker) at most %.2f skips per request, every latency mode", goalSkips), strings.Join(parts, ", "), met})
	}
	goals = append(goals, failureGoals(v)...)
	goals = append(goals, reactGoals(v)...)
	worst, where := 1.0, ""
	for _, s := range v.res.plan.scenarios {
		if s.Outage.To > 0 {
			continue // nothing can be served while every target is down: (i) has its own goal
		}
		for _, arm := range latencyModes {
			if f := v.figures(s.Name, arm, routinge2e.Window{}); f.Served < worst || where == "" {
				worst, where = f.Served, fmt.Sprintf("%s in (%s)", arm, s.Name)
			}
		}
	}
	goals = append(goals, goal{fmt.Sprintf("every latency mode serves >= %.1f%% in every scenario but an outage of every target", goalServed*100),
		fmt.Sprintf("lowest %.2f%% (%s)", worst*100, where), worst >= goalServed})
	return goals
}
