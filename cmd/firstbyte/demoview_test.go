package main

import (
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// routingOf is a recorded routing state: targets with their p50 (seconds)
// and which one leads.
func recordedRouting(leader string, p50s map[string]float64) []router.ModelRouting {
	m := router.ModelRouting{Model: demoModel, Mode: "least-latency"}
	for _, name := range []string{"groq-sim", "together-sim", "claude-sim"} {
		m.Targets = append(m.Targets, router.TargetRouting{Target: name, P50Seconds: p50s[name], Samples: 100, Leader: name == leader, Circuit: "closed"})
	}
	return []router.ModelRouting{m}
}

// TestDemoFramesOnARecordedRun: shares over the run and over the last 10 s
// diverge once the lead moves, and the move is announced once, with why.
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
	if len(f.Events) != 1 || f.Events[0] != "0:40  lead groq-sim -> together-sim: p50 350ms now beats groq-sim's 900ms" {
		t.Errorf("events %q", f.Events)
	}
	f.Story = []string{"story: each step begins when the one before has happened", "  0:30-      the lead has moved  <- now, ends at 0:45"}
	out := renderDemoFrame(f, false)
	for _, want := range []string{
		"TARGET              P50 SAMPLES FIRST PICKS   SHARE     NOW   FAILED  STATUS",
		"groq-sim          900ms     100         910     69%      3%       12",
		"together-sim      350ms     100         340     26%     94%        0  ★ leader",
		"NOW: of the last 10s",
		"0:40  lead groq-sim -> together-sim",
		"\nstory: each step begins when the one before has happened\n  0:30-      the lead has moved  <- now, ends at 0:45\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Error("a frame for a non-terminal clears the screen")
	}
	// The same leader again: no new event.
	if f := v.frame(45*time.Second, recordedRouting("together-sim", slow), counts(912, 400, 62), d); len(f.Events) != 1 {
		t.Errorf("events after a frame without a change: %q", f.Events)
	}
	if !strings.HasPrefix(renderDemoFrame(f, true), "\033[H\033[2J") {
		t.Error("a terminal frame does not clear the screen first")
	}
}
