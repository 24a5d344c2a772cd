package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoStoryFollowsTheGateway: each step begins when the one before has
// happened, whenever that is: a slow run (the lead takes a minute to move)
// tells the same story as a fast one, only later. The clock and the
// leaders are scripted.
func TestDemoStoryFollowsTheGateway(t *testing.T) {
	t.Parallel()
	var switched []bool
	s := newDemoStory(func(on bool) { switched = append(switched, on) }, demoEpilogue)
	at := func(sec float64, leader string) { s.observe(time.Duration(sec*float64(time.Second)), leader) }
	step := func() demoStep { s.mu.Lock(); defer s.mu.Unlock(); return s.step }

	at(0.2, "")
	at(1, "together-sim") // cold picks: someone else leads for a moment
	at(2, demoStar)
	at(2+demoLearn.Seconds()-0.5, demoStar)
	if step() != stepLearn || len(switched) != 0 {
		t.Fatalf("step %d after %s of lead, switched %v; want still learning", step(), demoLearn-500*time.Millisecond, switched)
	}
	at(2+demoLearn.Seconds(), demoStar)
	if step() != stepDegrade || !slices.Equal(switched, []bool{true}) {
		t.Fatalf("step %d, switched %v after %s of lead; want degraded", step(), switched, demoLearn)
	}
	// A slow machine: the lead takes a minute to move.
	at(40, demoStar)
	at(70, "together-sim")
	if step() != stepHold {
		t.Fatalf("step %d after the lead moved, want hold", step())
	}
	lines := strings.Join(s.lines(), "\n")
	if !strings.Contains(lines, "together-sim leads; groq-sim stays degraded") || !strings.Contains(lines, "<- now, ends at 1:18") {
		t.Errorf("during the hold the story says\n%s\nwant who leads and when the step ends (1:18)", lines)
	}
	at(70+demoHold.Seconds()-0.1, "together-sim")
	if step() != stepHold {
		t.Fatalf("step %d before the hold's end, want hold", step())
	}
	at(70+demoHold.Seconds(), "together-sim")
	if step() != stepRecover || !slices.Equal(switched, []bool{true, false}) {
		t.Fatalf("step %d, switched %v after the hold; want recovering", step(), switched)
	}
	if _, told := s.told(); told || !strings.Contains(s.ending(), "before its story ended") {
		t.Errorf("told before groq-sim leads again; ending %q", s.ending())
	}
	at(95, "claude-sim")
	at(100, demoStar)
	if when, told := s.told(); !told || when != 100*time.Second {
		t.Fatalf("told = %v at %v, want told at 1:40", told, when)
	}
	want := []string{
		"story: each step begins when the one before has happened",
		"   0:00-0:10  groq-sim is the fastest (~150ms) and leads",
		"   0:10-1:10  groq-sim slows to ~900ms with 25% 503s: failovers; the lead moves once half its last 100 samples are slow",
		"   1:10-1:18  together-sim leads; groq-sim stays degraded a little longer",
		"   1:18-1:40  groq-sim is fast again; exploration (1 request in 10) re-measures it until it leads again",
		"   1:40       groq-sim leads again, 22s after it recovered: the story is told; the demo ends at 1:50",
	}
	if got := s.lines(); !slices.Equal(got, want) {
		t.Errorf("told, the story says\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := s.ending(); got != "the story was told by 1:40." {
		t.Errorf("ending %q", got)
	}
	at(109, demoStar)
	if s.over(109 * time.Second) {
		t.Errorf("over(1:49) = true, want false: the epilogue (%s) has not passed", demoEpilogue)
	}
	at(120, "together-sim") // after the end nothing moves
	if step() != stepTold || len(switched) != 2 {
		t.Errorf("after the story: step %d, switched %v", step(), switched)
	}
	if !s.over(110 * time.Second) {
		t.Errorf("over(1:50) = false, want true: the story was told at 1:40, the epilogue is %s", demoEpilogue)
	}
}

// TestDemoStoryEnd: once the story is told the demo ends after the
// epilogue, and the last line says when; with -stay (no epilogue) it never
// ends by itself, and the line says nothing of an end.
func TestDemoStoryEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		epilogue time.Duration
		at       time.Duration
		over     bool
		lastLine string
	}{
		{name: "before the epilogue", epilogue: 10 * time.Second, at: 39 * time.Second, over: false, lastLine: "the story is told; the demo ends at 0:40"},
		{name: "at the epilogue's end", epilogue: 10 * time.Second, at: 40 * time.Second, over: true, lastLine: "the story is told; the demo ends at 0:40"},
		{name: "stay", epilogue: 0, at: time.Hour, over: false, lastLine: "the story is told"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tellDemoStory(t, tt.epilogue) // told at 0:30
			if got := s.over(tt.at); got != tt.over {
				t.Errorf("over(%s) = %v, want %v", clock(tt.at), got, tt.over)
			}
			lines := s.lines()
			if got := lines[len(lines)-1]; !strings.HasSuffix(got, tt.lastLine) {
				t.Errorf("last line %q, want it to end %q", got, tt.lastLine)
			}
		})
	}
}

// tellDemoStory tells a story to its end at 0:30: groq-sim leads from 0:01,
// degrades at 0:09, loses the lead at 0:12, recovers at 0:20 and leads
// again at 0:30.
func tellDemoStory(t *testing.T, epilogue time.Duration) *demoStory {
	t.Helper()
	s := newDemoStory(func(bool) {}, epilogue)
	for _, o := range []struct {
		sec    int
		leader string
	}{{1, demoStar}, {9, demoStar}, {12, "together-sim"}, {20, "together-sim"}, {30, demoStar}} {
		s.observe(time.Duration(o.sec)*time.Second, o.leader)
	}
	if when, told := s.told(); !told || when != 30*time.Second {
		t.Fatalf("told = %v at %v, want told at 0:30:\n%s", told, when, strings.Join(s.lines(), "\n"))
	}
	return s
}

// TestDemoLeadChangeAndStoryShareOneClock: the lead change the frame lists
// and the story step it ends carry the same time, whenever the frame that
// shows them is drawn: one observation feeds both.
func TestDemoLeadChangeAndStoryShareOneClock(t *testing.T) {
	t.Parallel()
	n := demoNotes{story: newDemoStory(func(bool) {}, demoEpilogue), leads: &demoLeads{}}
	fast := map[string]float64{"groq-sim": 0.15, "together-sim": 0.35, "claude-sim": 0.6}
	slow := map[string]float64{"groq-sim": 0.9, "together-sim": 0.35, "claude-sim": 0.6}
	n.observe(1*time.Second, recordedRouting(demoStar, fast))
	n.observe(9*time.Second, recordedRouting(demoStar, fast)) // led 8 s: degrades
	n.observe(10800*time.Millisecond, recordedRouting(demoStar, slow))
	n.observe(11*time.Second, recordedRouting("together-sim", slow)) // the lead moves at 0:11
	n.observe(11200*time.Millisecond, recordedRouting("together-sim", slow))

	events := n.leads.last(maxDemoEvents)
	if len(events) != 1 || events[0] != "0:11  lead groq-sim -> together-sim: p50 350ms now beats groq-sim's 900ms" {
		t.Errorf("lead changes %q, want one at 0:11", events)
	}
	lines := strings.Join(n.story.lines(), "\n")
	if !strings.Contains(lines, "0:09-0:11  groq-sim slows to ~900ms") || !strings.Contains(lines, "0:11-      together-sim leads") {
		t.Errorf("the story says\n%s\nwant the degraded step to end, and the hold to begin, at 0:11", lines)
	}
}

// TestDemoStoryLinesAtTheStart: before anything has happened the frame
// says what the first step is, what ends it, and what comes next.
func TestDemoStoryLinesAtTheStart(t *testing.T) {
	t.Parallel()
	got := newDemoStory(func(bool) {}, demoEpilogue).lines()
	if len(got) != 5 || !strings.HasSuffix(got[1], "<- now, ends when it has led for 8s") || !strings.Contains(got[2], "next groq-sim slows") {
		t.Errorf("story at the start:\n%s", strings.Join(got, "\n"))
	}
}

// TestDemoStarBehaviours: the two selves the story switches between are
// valid providers of the same name.
func TestDemoStarBehaviours(t *testing.T) {
	t.Parallel()
	if err := demoStarFast.Validate(); err != nil {
		t.Errorf("fast: %v", err)
	}
	if err := demoStarSlow.Validate(); err != nil {
		t.Errorf("slow: %v", err)
	}
	if demoStarFast.Name != demoStar || demoStarSlow.Name != demoStar || demoStarSlow.TTFB.Median <= demoStarFast.TTFB.Median || demoStarSlow.Errors.Rate == 0 {
		t.Errorf("fast %+v, slow %+v: want one name, the slow one slower and failing", demoStarFast, demoStarSlow)
	}
}
