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
	s := newDemoStory(func(on bool) { switched = append(switched, on) })
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
		"   1:40       groq-sim leads again, 22s after it recovered: the story is told",
	}
	if got := s.lines(); !slices.Equal(got, want) {
		t.Errorf("told, the story says\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := s.ending(); got != "the story was told by 1:40." {
		t.Errorf("ending %q", got)
	}
	at(120, "together-sim") // after the end nothing moves
	if step() != stepTold || len(switched) != 2 {
		t.Errorf("after the story: step %d, switched %v", step(), switched)
	}
}

// TestDemoStoryLinesAtTheStart: before anything has happened the frame
// says what the first step is, what ends it, and what comes next.
func TestDemoStoryLinesAtTheStart(t *testing.T) {
	t.Parallel()
	got := newDemoStory(func(bool) {}).lines()
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
