package main

import (
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// routingOf is a recorded routing state: targets with their p50 (seconds)
// and which one leads.
func recordedRouting(leader string, p50s map[string]float64) []routingview.Model {
	m := routingview.Model{Model: demoModel, Mode: "least-latency"}
	for _, name := range []string{"groq-sim", "together-sim", "claude-sim"} {
		m.Targets = append(m.Targets, routingview.Target{Target: name, P50Seconds: p50s[name], Samples: 100, Leader: name == leader, Circuit: "closed"})
	}
	return []routingview.Model{m}
}

// TestDemoFramesOnARecordedRun: shares over the run and over the last 10 s
// diverge once the lead moves; the frame says what each share is of, and
// the footer's shares are named as why picks went where, not whose they
// were.
func TestDemoFramesOnARecordedRun(t *testing.T) {
	t.Parallel()
	v := newDemoView(10 * time.Second)
	d := &demoDriver{}
	counts := func(groq, together, openai float64) demoCounts {
		return demoCounts{
			picks:   map[string]float64{"groq-sim": groq, "together-sim": together, "claude-sim": openai},
			reasons: map[string]float64{"leader": 0.9 * (groq + together + openai), "explore": 0.1 * (groq + together + openai)},
			failed:  map[string]float64{"groq-sim": 12},
		}
	}
	fast := map[string]float64{"groq-sim": 0.15, "together-sim": 0.35, "claude-sim": 0.6}
	slow := map[string]float64{"groq-sim": 0.9, "together-sim": 0.35, "claude-sim": 0.6}

	// 0:00..0:30 groq leads; 0:40 together has led for 10 s.
	v.frame(0, recordedRouting("groq-sim", fast), counts(0, 0, 0), d)
	v.frame(30*time.Second, recordedRouting("groq-sim", fast), counts(900, 50, 50), d)
	f := v.frame(40*time.Second, recordedRouting("together-sim", slow), counts(910, 340, 60), d)

	rows := map[string]demoRow{}
	for _, r := range f.Rows {
		rows[r.Target] = r
	}
	if g, tg := rows["groq-sim"], rows["together-sim"]; g.Share != "69%" || g.Recent != "3%" || tg.Share != "26%" || tg.Recent != "94%" {
		t.Errorf("shares groq %s/%s together %s/%s; want 69%%/3%% and 26%%/94%% (run/last 10 s)", g.Share, g.Recent, tg.Share, tg.Recent)
	}
	f.Events = []string{"0:38  lead groq-sim -> together-sim: p50 350ms now beats groq-sim's 900ms"}
	f.Story = []string{"story: each step begins when the one before has happened", "  0:30-      the lead has moved  <- now, ends at 0:45"}
	out := renderDemoFrame(f, false)
	for _, want := range []string{
		"TARGET              P50 SAMPLES FIRST PICKS   SHARE     NOW   FAILED  STATUS",
		"groq-sim          900ms     100         910     69%      3%       12",
		"together-sim      350ms     100         340     26%     94%        0  ★ leader",
		"SHARE: this target's part of its model's first picks so far · NOW: the same over the last 10s",
		"\nwhy the 1310 first picks so far went where they did: to the leader of the moment 90% · exploring 10% · cold (unmeasured) 0%\n",
		"0:38  lead groq-sim -> together-sim",
		"\nstory: each step begins when the one before has happened\n  0:30-      the lead has moved  <- now, ends at 0:45\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Error("a frame for a non-terminal clears the screen")
	}
	if strings.Contains(out, "is busy") {
		t.Error("a frame says a port was busy when none was")
	}
	if !strings.HasPrefix(renderDemoFrame(f, true), "\033[H\033[2J") {
		t.Error("a terminal frame does not clear the screen first")
	}
}

// TestDemoLeadsAnnounceEachChangeOnce: the first leader is no change; each
// move after it is one line, stamped with the time it was observed, with
// both p50s; the same leader again adds nothing; a frame lists the newest
// few.
func TestDemoLeadsAnnounceEachChangeOnce(t *testing.T) {
	t.Parallel()
	var l demoLeads
	p50s := map[string]float64{"groq-sim": 0.9, "together-sim": 0.35, "claude-sim": 0.6}
	l.observe(time.Second, recordedRouting("", p50s)) // nobody leads yet
	l.observe(2*time.Second, recordedRouting("groq-sim", p50s))
	if got := l.last(maxDemoEvents); len(got) != 0 {
		t.Errorf("after the first leader: %q, want no change", got)
	}
	for i := 0; i < maxDemoEvents+1; i++ {
		sec := time.Duration(10+i) * time.Second
		l.observe(sec, recordedRouting([]string{"together-sim", "groq-sim"}[i%2], p50s))
		l.observe(sec+100*time.Millisecond, recordedRouting([]string{"together-sim", "groq-sim"}[i%2], p50s))
	}
	got := l.last(maxDemoEvents)
	want := []string{
		"0:11  lead together-sim -> groq-sim: p50 900ms now beats together-sim's 350ms",
		"0:12  lead groq-sim -> together-sim: p50 350ms now beats groq-sim's 900ms",
		"0:13  lead together-sim -> groq-sim: p50 900ms now beats together-sim's 350ms",
		"0:14  lead groq-sim -> together-sim: p50 350ms now beats groq-sim's 900ms",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("last(%d) = \n%s\nwant\n%s", maxDemoEvents, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDemoSaysWhenAPortWasBusy: a listener that moved because its port was
// taken is said, with where it went, on the frame; one that got what it
// asked for, or asked for any port (:0), is not.
func TestDemoSaysWhenAPortWasBusy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		addrs []demoAddr
		want  []string
	}{
		{name: "got what it asked for", addrs: []demoAddr{{"the API", "127.0.0.1:8080", "127.0.0.1:8080"}}},
		{name: "asked for any port", addrs: []demoAddr{{"the API", "127.0.0.1:0", "127.0.0.1:41234"}}},
		{name: "busy", addrs: []demoAddr{{"the API", "127.0.0.1:8080", "127.0.0.1:41234"}, {"the admin listener", "127.0.0.1:9464", "127.0.0.1:9464"}},
			want: []string{"127.0.0.1:8080 is busy: the API listens on 127.0.0.1:41234 instead"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := movedAddrs(tt.addrs...)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("movedAddrs(%v) = %q, want %q", tt.addrs, got, tt.want)
			}
			out := renderDemoFrame(demoFrame{API: "127.0.0.1:41234", Moved: got}, false)
			for _, m := range tt.want {
				if !strings.Contains(out, "http://127.0.0.1:41234/v1   metrics") || !strings.Contains(out, "\n  "+m+"\n") {
					t.Errorf("frame lacks %q under its addresses:\n%s", m, out)
				}
			}
		})
	}
}
