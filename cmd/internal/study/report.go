package study

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The report: Markdown tables (nothing in them depends on the machine or
// the wall clock, so a seed gives the same bytes) and the charts they show.

// ReportFile is the name of the Markdown report in the output directory.
const ReportFile = "README.md"

// WriteFiles writes the report and its charts into dir, creating it.
func (st *Study) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	charts, err := st.Charts()
	if err != nil {
		return err
	}
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(dir, c.Name), c.PNG, 0o644); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString("# Routing study: results\n\n")
	b.WriteString("Generated; do not edit. What the study is and how each scenario and the oracle are defined: " +
		"docs/routing-study.md in the firstbyte repository.\n\n")
	st.writeMarkdown(&b, "##", "")
	return os.WriteFile(filepath.Join(dir, ReportFile), b.Bytes(), 0o644)
}

// Markdown is the report's body with headings at level heading ("##") and
// the charts referred to under imageDir (a slash-separated path relative to
// the Markdown file; "" for the same directory).
func (st *Study) Markdown(heading, imageDir string) []byte {
	var b bytes.Buffer
	st.writeMarkdown(&b, heading, imageDir)
	return b.Bytes()
}

// CommandLine is the command that reproduces the study, defaults left out.
func (st *Study) CommandLine() string {
	o := st.Options
	args := []string{"firstbyte study", fmt.Sprintf("-seed %d", o.Seed)}
	if o.Duration != DefaultDuration {
		args = append(args, "-duration "+o.Duration.String())
	}
	if names := scenarioNames(st.Scenarios); !slices.Equal(names, ScenarioNames()) {
		args = append(args, "-scenarios "+strings.Join(names, ","))
	}
	if modes := st.Modes[:len(st.Modes)-1]; !slices.Equal(modes, AllModes()) {
		args = append(args, "-modes "+strings.Join(modes, ","))
	}
	return strings.Join(args, " ")
}

func scenarioNames(ss []*Scenario) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func (st *Study) writeMarkdown(b *bytes.Buffer, h, imageDir string) {
	img := func(name string) string { return path.Join(imageDir, name) }
	fmt.Fprintf(b, "`%s`: %d closed-loop clients (where a scenario says no other number), %s of measured time per "+
		"scenario after a %s warm-up, first picks counted in %s buckets, leaders in %s windows. Targets log-normal "+
		"(sigma %.2f), declared t40, t80, t20 (medians 40, 80, 20 ms); every mode drives the real router, tracker and "+
		"breakers on a virtual clock.\n\n",
		st.CommandLine(), Clients, secs(st.Options.Duration), secs(WarmUp), ms(Bucket), secs(LeaderWindow), Sigma)

	fmt.Fprintf(b, "%s Goals\n\n", h)
	b.WriteString("| goal | measured | met |\n|---|---|---|\n")
	for _, g := range st.Goals() {
		met := "yes"
		if !g.Met {
			met = "**no**"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", g.Text, g.Figure, met)
	}
	b.WriteString("\n")

	modes := st.Modes[:len(st.Modes)-1]
	fmt.Fprintf(b, "%s Mean time to first byte against the oracle\n\n", h)
	b.WriteString("Mean end-to-end TTFB of the served requests (failed attempts' time included) over the oracle's " +
		"in the same scenario; 1.00 is the oracle.\n\n")
	fmt.Fprintf(b, "![mean TTFB over the oracle's, per scenario and mode](%s)\n\n", img(ratioChart))
	b.WriteString("| scenario | oracle |")
	for _, m := range modes {
		fmt.Fprintf(b, " %s |", m)
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(modes)) + "\n")
	for i, s := range st.Scenarios {
		fmt.Fprintf(b, "| (%s) %s | %s |", s.Name, s.Title, msText(st.Results[i][len(st.Modes)-1].Mean()))
		for j := range modes {
			fmt.Fprintf(b, " %.2f |", st.Ratio(st.Results[i][j]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	for i, s := range st.Scenarios {
		fmt.Fprintf(b, "%s (%s) %s\n\n%s %s\n\n", h, s.Name, s.Title, s.About, st.oracleText(i))
		st.writeLatencyTable(b, i)
		if s.Lengths != nil {
			st.writeLastTokenTable(b, i, img(lastTokenChart))
		}
		st.writePickTable(b, i)
		if slices.Contains(timelineScenarios, s.Name) && st.hasLatencyModes() {
			fmt.Fprintf(b, "![first picks over time, %s](%s)\n\n", s.Title, img(timelineChart(s.Name)))
		}
	}
}

// hasLatencyModes reports whether any latency mode ran.
func (st *Study) hasLatencyModes() bool {
	for _, m := range LatencyModes {
		if slices.Contains(st.Modes, m) {
			return true
		}
	}
	return false
}

func (st *Study) writeLatencyTable(b *bytes.Buffer, i int) {
	s := st.Scenarios[i]
	b.WriteString("| mode | mean | p50 | p95 | p99 | × oracle | failed attempts / request | skips / request | hedges / request | served |")
	if s.Window != nil {
		fmt.Fprintf(b, " mean %s | × oracle %s |", s.Window.Name, s.Window.Name)
	}
	queues := s.hasSlots()
	if queues {
		b.WriteString(" queued attempts / request | mean wait of a queued attempt |")
	}
	b.WriteString("\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	if s.Window != nil {
		b.WriteString("---:|---:|")
	}
	if queues {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")
	for _, r := range st.Results[i] {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.2f | %.3f | %.3f | %.3f | %s |", r.Mode, msText(r.Mean()),
			msText(r.Quantile(0.5)), msText(r.Quantile(0.95)), msText(r.Quantile(0.99)), st.Ratio(r), r.PerRequest(r.Faults),
			r.PerRequest(r.Skips), r.PerRequest(r.Hedged), percent(r.ServedShare(), 2))
		if s.Window != nil {
			fmt.Fprintf(b, " %s | %.2f |", msText(r.WindowTTFB), st.WindowRatio(r))
		}
		if queues {
			fmt.Fprintf(b, " %.3f | %s |", r.PerRequest(r.Queued), msText(r.MeanQueueWait()))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// selections are the X-Firstbyte-Selection values a table shows.
var selections = []string{telemetry.SelectionLeader, telemetry.SelectionExplore, telemetry.SelectionCold, telemetry.SelectionOrder}

func (st *Study) writePickTable(b *bytes.Buffer, i int) {
	s := st.Scenarios[i]
	b.WriteString("| mode |")
	for _, sel := range selections {
		fmt.Fprintf(b, " %s |", sel)
	}
	for _, t := range s.Targets {
		fmt.Fprintf(b, " first picks %s |", t.Name)
	}
	for _, ch := range s.Changes {
		fmt.Fprintf(b, " %s %s at %s |", ch.Kind, s.Targets[ch.Leader].Name, secs(ch.At))
	}
	if s.replicas() > 1 {
		b.WriteString(" leadership changes / min (worst replica) |")
	} else {
		b.WriteString(" leadership changes / min |")
	}
	n := len(selections) + len(s.Targets) + len(s.Changes) + 1
	b.WriteString("\n|---|" + strings.Repeat("---:|", n) + "\n")
	for _, r := range st.Results[i] {
		fmt.Fprintf(b, "| %s |", r.Mode)
		for _, sel := range selections {
			if r.Mode == Oracle {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(b, " %s |", percent(r.SelectionShare(sel), 1))
		}
		for t := range s.Targets {
			fmt.Fprintf(b, " %s |", percent(r.PickShare(t), 1))
		}
		for k := range s.Changes {
			if r.Mode != Oracle && !slices.Contains(LatencyModes, r.Mode) {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(b, " %s |", r.ChangeText(k))
		}
		worst, _ := r.WorstLeaderChanges()
		fmt.Fprintf(b, " %.1f |", worst)
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// oracleText says what scenario i's oracle did.
func (st *Study) oracleText(i int) string {
	s := st.Scenarios[i]
	switch {
	case s.Oracle == OracleSplit:
		o := st.Results[i][len(st.Modes)-1]
		return fmt.Sprintf("Oracle: the best static split of the load (of %d tried): %s.", o.SplitsTried, splitText(s, o.Split))
	case s.Lengths != nil:
		return throughputOracleText(s)
	case s.Conversations > 0:
		return "Oracle: each request's order by expected time, knowing which providers hold its conversation's " +
			"prefix (a cached prefix's expected time halved), ties in declaration order."
	}
	return oracleText(s, st.Options.Duration)
}

// oracleText says which order the oracle used when: it changes only when a
// target's behaviour does (sampled at every bucket start).
func oracleText(s *Scenario, duration time.Duration) string {
	var parts []string
	var last string
	for t := time.Duration(0); t < duration; t += Bucket {
		order, _ := oracleOrder(nil, s, t)
		var names []string
		for _, i := range order {
			names = append(names, s.Targets[i].Name)
		}
		text := strings.Join(names, ", ")
		if text == last {
			continue
		}
		if last == "" {
			parts = append(parts, text)
		} else {
			parts = append(parts, fmt.Sprintf("from %s: %s", secs(t), text))
		}
		last = text
	}
	return "Oracle order: " + strings.Join(parts, "; ") + "."
}

// percent prints a share as a percentage with digits decimals.
func percent(x float64, digits int) string {
	return fmt.Sprintf("%.*f %%", digits, 100*x)
}
