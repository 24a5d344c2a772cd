package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// The figures and goals of the providers that fail as real ones do: (g) a
// revoked key, (h) a rate-limited fastest, (i) an outage of every target.
// A revoked key and an outage are events of one run, so their goals are
// judged round by round (the worst counts); a rate limit's on the pooled
// figures, as the other scenarios' are.

// Their goals' thresholds (the study's: goals_test.go holds them equal).
const (
	goalProbeEvery      = 30 * time.Second // (g): at most one attempt on the revoked key per interval
	goalRateLimitFaults = 0.02             // (h): failed attempts per request
	goalRateLimitRatio  = 1.15             // (h): mean TTFB / the oracle's
	goalOutageRecovery  = time.Second      // (i): the first request served after the outage's end
)

// failureColumns are the extra columns of s's table and each arm's cells in
// them; none for the other scenarios.
func failureColumns(v routingView, s routinge2e.Scenario) (head []string, cells func(arm string) []string) {
	runs := func(arm string) [][]routinge2e.Outcome { return v.res.runs[s.Name][arm] }
	switch {
	case s.Revoked != "":
		head = []string{fmt.Sprintf("attempts on %s: cold start / later (round by round)", s.Revoked), "later attempts sent at"}
		cells = func(arm string) []string {
			var counts, times []string
			for _, outs := range runs(arm) {
				r := routinge2e.Revoked(outs, s.Revoked)
				counts = append(counts, fmt.Sprintf("%d / %d", r.Cold, r.Attempts))
				for _, at := range r.Later {
					times = append(times, secs(at))
				}
			}
			return []string{strings.Join(counts, ", "), orDash(strings.Join(times, ", "))}
		}
	case len(s.Limited()) > 0:
		lim := s.Limited()[0]
		head = []string{"429s to clients", lim + " attempts a second (mean, most)", lim + " refusals (429)"}
		cells = func(arm string) []string {
			clients, refusals, mean, most := 0, 0, 0.0, 0
			for _, outs := range runs(arm) {
				perSecond := make([]int, int(s.Duration/time.Second))
				for _, o := range outs {
					if o.Status == http.StatusTooManyRequests {
						clients++
					}
					for _, h := range o.Hops {
						if h.Target != lim {
							continue
						}
						if h.Status == http.StatusTooManyRequests {
							refusals++
						}
						if sec := int(o.Start / time.Second); sec < len(perSecond) {
							perSecond[sec]++
						}
					}
				}
				for _, n := range perSecond {
					mean += float64(n) / float64(len(perSecond)*len(runs(arm)))
					most = max(most, n)
				}
			}
			return []string{fmt.Sprint(clients), fmt.Sprintf("%.1f, %d", mean, most), fmt.Sprint(refusals)}
		}
	case s.Outage.To > 0:
		head = []string{fmt.Sprintf("first served after the outage's end (%v)", s.Outage.To), "failed of those sent after the end"}
		cells = func(arm string) []string {
			var after, failed []string
			for _, outs := range runs(arm) {
				r := routinge2e.RecoveryFrom(outs, s.Outage)
				after, failed = append(after, recoveryText(r)), append(failed, fmt.Sprint(r.LateFailures))
			}
			return []string{strings.Join(after, ", "), strings.Join(failed, ", ")}
		}
	}
	return head, cells
}

// limitTable is what the rate-limited target served second by second: a
// refusal cools it for its Retry-After, which shows as seconds without it.
func limitTable(v routingView, s routinge2e.Scenario) table {
	lim := s.Limited()[0]
	n := int(s.Duration / time.Second)
	t := table{
		title: fmt.Sprintf("Scenario (%s): %s's answers (200), then refusals (429), second by second (mean of the rounds)", s.Name, lim),
		head:  []string{"arm"},
	}
	for i := range n {
		t.head = append(t.head, fmt.Sprintf("%ds", i))
	}
	for _, arm := range armsOf(s) {
		ok, refused := make([]int, n), make([]int, n)
		rounds := v.res.runs[s.Name][arm]
		for _, outs := range rounds {
			for _, o := range outs {
				sec := int(o.Start / time.Second)
				for _, h := range o.Hops {
					switch {
					case h.Target != lim || sec >= n:
					case h.Status == http.StatusOK:
						ok[sec]++
					case h.Status == http.StatusTooManyRequests:
						refused[sec]++
					}
				}
			}
		}
		row := []string{arm}
		for i := range n {
			cell := fmt.Sprintf("%.0f", float64(ok[i])/float64(len(rounds)))
			if refused[i] > 0 {
				cell += fmt.Sprintf(" +%.1f", float64(refused[i])/float64(len(rounds)))
			}
			row = append(row, cell)
		}
		t.rows = append(t.rows, row)
	}
	t.notes = append(t.notes, fmt.Sprintf("column Ns: requests sent in [N, N+1) s that %s answered 200 (+ the ones it refused with 429); its limit is %d a second",
		lim, routinge2e.RateLimit))
	return t
}

func recoveryText(r routinge2e.Recovery) string {
	if !r.Recovered() {
		return "never"
	}
	return msec(r.After)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// failureGoals are the goals of (g), (h) and (i), for the scenarios the run
// had.
func failureGoals(v routingView) []goal {
	var goals []goal
	if s, ok := v.scenario("g"); ok {
		for _, arm := range latencyModes {
			most, worstServed := 0, 1.0
			var each []string
			for _, outs := range v.res.runs[s.Name][arm] {
				r := routinge2e.Revoked(outs, s.Revoked)
				n := r.MostPerInterval(outs, s.Revoked, goalProbeEvery)
				f := routinge2e.Summarize(outs, routinge2e.Window{})
				most, worstServed = max(most, n), min(worstServed, f.Served)
				each = append(each, fmt.Sprintf("served %.2f%%, %d cold-start attempt(s) on %s, then at most %d per %v",
					100*f.Served, r.Cold, s.Revoked, n, goalProbeEvery))
			}
			goals = append(goals, goal{
				fmt.Sprintf("(g) %s: serves >= %.1f%%, at most one attempt on the revoked key per %v once the gateway knows", arm, 100*goalServed, goalProbeEvery),
				strings.Join(each, "; "), worstServed >= goalServed && most <= 1,
			})
		}
	}
	if _, ok := v.scenario("h"); ok {
		oracle := v.figures("h", armOracle, routinge2e.Window{})
		for _, arm := range latencyModes {
			f := v.figures("h", arm, routinge2e.Window{})
			goals = append(goals, goal{fmt.Sprintf("(h) %s: at most %.2f failed attempts per request", arm, goalRateLimitFaults),
				fmt.Sprintf("%.4f", f.FailedAttempts), f.FailedAttempts <= goalRateLimitFaults})
			x := ratio(f.Mean, oracle.Mean)
			goals = append(goals, goal{fmt.Sprintf("(h) %s mean TTFB <= %.2fx the oracle's", arm, goalRateLimitRatio),
				fmt.Sprintf("%.2fx (%s against %s)", x, msec(f.Mean), msec(oracle.Mean)), x <= goalRateLimitRatio})
		}
	}
	if s, ok := v.scenario("i"); ok {
		for _, arm := range latencyModes {
			met := true
			var each []string
			for _, outs := range v.res.runs[s.Name][arm] {
				r := routinge2e.RecoveryFrom(outs, s.Outage)
				met = met && r.Recovered() && r.After < goalOutageRecovery && r.LateFailures == 0
				each = append(each, fmt.Sprintf("%s after, %d sent after the end failed", recoveryText(r), r.LateFailures))
			}
			goals = append(goals, goal{
				fmt.Sprintf("(i) %s: the first request served < %v after the outage's end, none sent after the end failed", arm, goalOutageRecovery),
				strings.Join(each, "; "), met,
			})
		}
	}
	return goals
}
