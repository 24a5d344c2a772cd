package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// The demo's story, told by what the gateway does rather than by the clock,
// so it is whole on a slow machine too: each step begins when the one
// before has happened. groq-sim, the fastest, leads; once it has led a
// while it degrades; once the lead has moved off it, it recovers a little
// later; exploration then wins it the lead back. A busy machine sends fewer
// requests a second, and the steps that wait for samples just take longer.

// demoStep is a step of the story.
type demoStep int

const (
	stepLearn   demoStep = iota // groq-sim becomes the leader
	stepDegrade                 // groq-sim is slow and failing, until the lead moves
	stepHold                    // another target leads; groq-sim still degraded, for demoHold
	stepRecover                 // groq-sim is fast again, until it leads again
	stepTold                    // it does: the story is told
	demoSteps
)

const (
	// demoLearn is how long groq-sim leads before it degrades: long enough
	// to see the table settle.
	demoLearn = 8 * time.Second
	// demoHold is how long groq-sim stays degraded after losing the lead,
	// so the failovers and the new leader can be seen.
	demoHold = 8 * time.Second
	// demoStar is the target the story is about.
	demoStar = "groq-sim"
	// demoEpilogue is how long the demo goes on once its story is told:
	// long enough to read the last frame, short of repeating it for
	// minutes (-stay keeps it going until -duration).
	demoEpilogue = 10 * time.Second
)

// demoStory is the story's state; observe moves it on, lines draws it.
// Safe for concurrent use.
type demoStory struct {
	// immutable after newDemoStory
	degrade  func(bool)    // switches demoStar's behaviour: degraded or not
	epilogue time.Duration // how long the demo goes on once the story is told; 0: until -duration

	mu        sync.Mutex // guards the fields below
	step      demoStep
	began     [demoSteps]time.Duration // when each step began, run time
	leadSince time.Duration            // stepLearn: since when demoStar has led; -1 when it does not
	leader    string                   // stepHold: who took the lead
}

func newDemoStory(degrade func(bool), epilogue time.Duration) *demoStory {
	return &demoStory{degrade: degrade, epilogue: epilogue, leadSince: -1}
}

// observe moves the story on at run time elapsed, given the leader now
// ("" when none is known yet).
func (s *demoStory) observe(elapsed time.Duration, leader string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.step {
	case stepLearn:
		if leader != demoStar {
			s.leadSince = -1
			return
		}
		if s.leadSince < 0 {
			s.leadSince = elapsed
		}
		if elapsed-s.leadSince >= demoLearn {
			s.degrade(true)
			s.next(elapsed)
		}
	case stepDegrade:
		if leader != "" && leader != demoStar {
			s.leader = leader
			s.next(elapsed)
		}
	case stepHold:
		if elapsed-s.began[stepHold] >= demoHold {
			s.degrade(false)
			s.next(elapsed)
		}
	case stepRecover:
		if leader == demoStar {
			s.next(elapsed)
		}
	}
}

func (s *demoStory) next(elapsed time.Duration) {
	s.step++
	s.began[s.step] = elapsed
}

// told reports whether the story is told, and when its last step began.
func (s *demoStory) told() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.began[stepTold], s.step == stepTold
}

// over reports whether the demo should end at run time elapsed: its story
// was told at least the epilogue ago (never, without an epilogue).
func (s *demoStory) over(elapsed time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epilogue > 0 && s.step == stepTold && elapsed-s.began[stepTold] >= s.epilogue
}

// lines draws the story: each step that has begun with when it began and
// ended, the current one with what ends it, and the steps to come.
func (s *demoStory) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	what := [demoSteps]string{
		stepLearn:   "groq-sim is the fastest (~150ms) and leads",
		stepDegrade: "groq-sim slows to ~900ms with 25% 503s: failovers; the lead moves once half its last 100 samples are slow",
		stepHold:    "the lead has moved; groq-sim stays degraded a little longer",
		stepRecover: "groq-sim is fast again; exploration (1 request in 10) re-measures it until it leads again",
	}
	ends := [demoSteps]string{
		stepLearn:   fmt.Sprintf("ends when it has led for %s", demoLearn),
		stepDegrade: "ends when another target leads",
		stepHold:    fmt.Sprintf("ends at %s", clock(s.began[stepHold]+demoHold)),
		stepRecover: "ends when groq-sim leads again",
	}
	if s.leader != "" {
		what[stepHold] = fmt.Sprintf("%s leads; groq-sim stays degraded a little longer", s.leader)
	}
	out := []string{"story: each step begins when the one before has happened"}
	for st := stepLearn; st < stepTold; st++ {
		switch {
		case st < s.step:
			out = append(out, fmt.Sprintf("  %5s-%-5s %s", clock(s.began[st]), clock(s.began[st+1]), what[st]))
		case st == s.step:
			out = append(out, fmt.Sprintf("  %5s-      %s  <- now, %s", clock(s.began[st]), what[st], ends[st]))
		default:
			out = append(out, fmt.Sprintf("  %11s %s", "next", what[st]))
		}
	}
	if s.step == stepTold {
		out = append(out, fmt.Sprintf("  %5s       %s", clock(s.began[stepTold]), s.toldLine()))
	}
	return out
}

// toldLine is the story's last line; the caller holds mu.
func (s *demoStory) toldLine() string {
	line := fmt.Sprintf("groq-sim leads again, %s after it recovered: the story is told",
		(s.began[stepTold] - s.began[stepRecover]).Round(time.Second))
	if s.epilogue > 0 {
		line += "; the demo ends at " + clock(s.began[stepTold]+s.epilogue)
	}
	return line
}

// ending is what the closing line says of the story.
func (s *demoStory) ending() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.step == stepTold {
		return "the story was told by " + clock(s.began[stepTold]) + "."
	}
	return "the demo stopped before its story ended (at the step that began at " + clock(s.began[s.step]) +
		"); a slow machine needs longer: -duration 3m."
}

// demoLeader is the leader of the demo's model in routing, or "".
func demoLeader(routing []routingview.Model) string {
	for _, m := range routing {
		if m.Model != demoModel {
			continue
		}
		for _, t := range m.Targets {
			if t.Leader {
				return t.Target
			}
		}
	}
	return ""
}
