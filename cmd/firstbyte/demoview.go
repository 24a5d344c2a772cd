package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/router/routingview"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The demo's live table: what the gateway knows (its routing state) next to
// what it did (first picks and failures, from its own metrics), over the
// whole run and over the last few seconds, with the lead changes
// (demoleads.go) and the story (demostory.go) below. Building a frame (demoView.frame) and drawing it
// (renderDemoFrame) are separate so the drawing is tested on recorded
// frames.

// demoRecent is the sliding window the "NOW" share is taken over.
const demoRecent = 10 * time.Second

// demoCounts are the cumulative counters a frame is built from.
type demoCounts struct {
	picks   map[string]float64 // first picks by target
	reasons map[string]float64 // first picks by selection reason
	failed  map[string]float64 // attempts that failed over or broke, by target
}

func gatherDemoCounts(reg *prometheus.Registry) demoCounts {
	failed := sumBy(reg, "firstbyte_attempts_total", "target", map[string]string{"outcome": "failover"})
	for t, v := range sumBy(reg, "firstbyte_attempts_total", "target", map[string]string{"outcome": "broken"}) {
		failed[t] += v
	}
	return demoCounts{
		picks:   sumBy(reg, "firstbyte_selections_total", "target", nil),
		reasons: sumBy(reg, "firstbyte_selections_total", "reason", nil),
		failed:  failed,
	}
}

// demoView remembers past counts, for the sliding window.
type demoView struct {
	window  time.Duration
	history []demoSnapshot // oldest first, covering at least window
}

type demoSnapshot struct {
	at    time.Duration
	picks map[string]float64
}

func newDemoView(window time.Duration) *demoView { return &demoView{window: window} }

// demoFrame is one drawing of the table.
type demoFrame struct {
	Elapsed, Total, Window time.Duration
	API, Admin             string
	Moved                  []string // addresses taken by another process, and where the demo went instead
	Rows                   []demoRow
	Requests, Failed       int64
	Picks                  float64  // first picks over the run
	Leader, Explore, Cold  string   // the shares of Picks made for each reason
	Events                 []string // lead changes (demoLeads.last)
	Story                  []string // the story's lines (demoStory.lines)
}

type demoRow struct {
	Model   string
	Target  string
	P50     string
	Samples int
	Picks   float64
	Share   string // of first picks over the run
	Recent  string // of first picks over the last Window
	Failed  float64
	Status  string
}

// maxDemoEvents is how many lead changes a frame lists (demoLeads.last).
const maxDemoEvents = 4

// frame builds the frame at elapsed from the routing state and counters.
func (v *demoView) frame(elapsed time.Duration, routing []routingview.Model, c demoCounts, d *demoDriver) demoFrame {
	// The sliding window: the oldest snapshot at least window old.
	v.history = append(v.history, demoSnapshot{at: elapsed, picks: c.picks})
	for len(v.history) > 2 && elapsed-v.history[1].at >= v.window {
		v.history = v.history[1:]
	}
	base := v.history[0]
	var all, recentAll float64
	for t, n := range c.picks {
		all += n
		recentAll += n - base.picks[t]
	}
	share := func(n, of float64) string {
		if of <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*n/of)
	}
	f := demoFrame{Window: min(v.window, elapsed-base.at), Requests: d.ok.Load() + d.failed.Load(), Failed: d.failed.Load(), Picks: all,
		Leader: share(c.reasons[telemetry.SelectionLeader], all), Explore: share(c.reasons[telemetry.SelectionExplore], all), Cold: share(c.reasons[telemetry.SelectionCold], all)}
	for _, m := range demoModelsInOrder(routing) {
		var modelAll, modelRecent float64 // this model's first picks: what its targets' shares are of
		for _, t := range m.Targets {
			modelAll += c.picks[t.Target]
			modelRecent += c.picks[t.Target] - base.picks[t.Target]
		}
		for _, t := range m.Targets {
			r := demoRow{Model: m.Model, Target: t.Target, P50: demoP50(t), Samples: t.Samples, Picks: c.picks[t.Target], Failed: c.failed[t.Target],
				Share: share(c.picks[t.Target], modelAll), Recent: share(c.picks[t.Target]-base.picks[t.Target], modelRecent)}
			switch {
			case t.CircuitOpen:
				r.Status = "circuit " + strings.ReplaceAll(t.Circuit, "_", "-")
			case t.Leader:
				r.Status = "★ leader"
			case t.Samples == 0:
				r.Status = "unmeasured"
			}
			f.Rows = append(f.Rows, r)
		}
	}
	return f
}

// demoModelsInOrder is routing with the story's model first, the others
// after it in the order given.
func demoModelsInOrder(routing []routingview.Model) []routingview.Model {
	out := make([]routingview.Model, 0, len(routing))
	for _, m := range routing {
		if m.Model == demoModel {
			out = append(out, m)
		}
	}
	for _, m := range routing {
		if m.Model != demoModel {
			out = append(out, m)
		}
	}
	return out
}

// demoModelTitle heads a model's rows in the table.
func demoModelTitle(model string) string {
	if model == demoHostsModel {
		return demoHostsTitle
	}
	return model
}

// clock prints a run time as m:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// renderDemoFrame draws a frame; on a terminal it first clears the screen.
func renderDemoFrame(f demoFrame, tty bool) string {
	var b strings.Builder
	if tty {
		b.WriteString("\033[H\033[2J")
	}
	fmt.Fprintf(&b, "firstbyte demo — models %s and %s, strategy least-latency — %s of %s (Ctrl-C stops)\n", demoModel, demoHostsModel, clock(f.Elapsed), clock(f.Total))
	fmt.Fprintf(&b, "API http://%s/v1   metrics http://%s/metrics   routing http://%s/debug/routing\n", f.API, f.Admin, f.Admin)
	for _, m := range f.Moved {
		b.WriteString("  " + m + "\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-14s %8s %7s %11s %7s %7s %8s  %s\n", "TARGET", "P50", "SAMPLES", "FIRST PICKS", "SHARE", "NOW", "FAILED", "STATUS")
	for i, r := range f.Rows {
		if i == 0 || r.Model != f.Rows[i-1].Model {
			fmt.Fprintf(&b, "%s\n", demoModelTitle(r.Model))
		}
		fmt.Fprintf(&b, "%-14s %8s %7d %11.0f %7s %7s %8.0f  %s\n", r.Target, r.P50, r.Samples, r.Picks, r.Share, r.Recent, r.Failed, r.Status)
	}
	fmt.Fprintf(&b, "\nSHARE: this target's part of its model's first picks so far · NOW: the same over the last %s · FAILED: attempts that failed over (503s, timeouts) or broke\n", f.Window.Round(time.Second))
	fmt.Fprintf(&b, "requests %d (failed %d)\nwhy the %.0f first picks so far went where they did: to the leader of the moment %s · exploring %s · cold (unmeasured) %s\n",
		f.Requests, f.Failed, f.Picks, f.Leader, f.Explore, f.Cold)
	if len(f.Events) > 0 {
		b.WriteString("\n")
		for _, e := range f.Events {
			b.WriteString(e + "\n")
		}
	}
	b.WriteString("\n")
	for _, l := range f.Story {
		b.WriteString(l + "\n")
	}
	b.WriteString("claude-sim speaks the Anthropic API: the clients' chat completions reach it translated.\n")
	b.WriteString("anthropic-sim, bedrock-sim and vertex-sim are one Claude model on three hosts: each speaks its host's API with its credential (a Bedrock API key, Vertex OAuth tokens).\n")
	return b.String()
}
