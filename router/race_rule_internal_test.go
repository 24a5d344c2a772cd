package router

import (
	"testing"
	"time"
)

// scriptedRacers are a race's attempts as a test runs them: started turns
// and wake-ups are only recorded.
type scriptedRacers struct {
	started []*Turn
	wakes   []time.Duration
}

func (s *scriptedRacers) Start(t Turn) *Turn {
	p := &t
	s.started = append(s.started, p)
	return p
}

func (s *scriptedRacers) Wake(d time.Duration) { s.wakes = append(s.wakes, d) }

// racedRoute is a route of g's over a, b, c (fallback order, hedging after
// 100 ms, one hedge at most) and its first turn.
func racedRoute(t *testing.T) (*Route, Turn) {
	t.Helper()
	g, _ := hedgedGateway(t, 1, 1, newHeldUpstream(t, "a"), newHeldUpstream(t, "b"), newHeldUpstream(t, "c"))
	r, _, ok := g.Route("m", RouteOptions{})
	if !ok {
		t.Fatal("no route for m")
	}
	first, ok := r.Next()
	if !ok {
		t.Fatal("no first turn")
	}
	return r, first
}

// The race's rule, without a gateway or a clock: when a hedge is due, who
// wins, and what the driver does after each end. The gateway and the study
// both run this rule.
func TestRaceRule(t *testing.T) {
	t.Run("a hedge wins", func(t *testing.T) {
		r, first := racedRoute(t)
		at := &scriptedRacers{}
		x := r.Race(first, at)
		if len(at.wakes) != 1 || at.wakes[0] != 100*time.Millisecond {
			t.Fatalf("wakes %v, want one after the 100ms delay", at.wakes)
		}
		x.HedgeDue()
		if len(at.started) != 2 || !at.started[1].Hedged() || at.started[1].Cand.Target != "b" {
			t.Fatalf("started %d, want the first and a hedge at b", len(at.started))
		}
		if len(at.wakes) != 1 {
			t.Fatalf("wakes %v: with max 1 hedge running no other is due", at.wakes)
		}
		if step := x.Ended(at.started[0], RacerFailedOver); step != RaceOn {
			t.Fatalf("first fails over: %v, want RaceOn (the hedge races on)", step)
		}
		if step := x.Ended(at.started[1], RacerAnswered); step != RaceFinish || x.Winner() != at.started[1] || len(x.Others()) != 0 {
			t.Fatalf("hedge answers: %v, winner %v, want RaceFinish with the hedge", step, x.Winner())
		}
		x.Served()
		if r.HedgeResult() != HedgeWon {
			t.Fatalf("hedge result %q, want %q", r.HedgeResult(), HedgeWon)
		}
	})
	t.Run("a client error is held while another runs", func(t *testing.T) {
		r, first := racedRoute(t)
		at := &scriptedRacers{}
		x := r.Race(first, at)
		x.HedgeDue()
		if step := x.Ended(at.started[1], RacerClientError); step != RaceHold {
			t.Fatalf("the hedge's 400: %v, want RaceHold", step)
		}
		if step := x.Ended(at.started[0], RacerAnswered); step != RaceFinish || x.Winner() != at.started[0] || x.Beaten() != at.started[1] {
			t.Fatalf("first answers: %v, want RaceFinish with the first, the held 400 beaten", step)
		}
	})
	t.Run("every racer fails over", func(t *testing.T) {
		r, first := racedRoute(t)
		at := &scriptedRacers{}
		x := r.Race(first, at)
		x.HedgeDue()
		x.Ended(at.started[0], RacerFailedOver)
		if step := x.Ended(at.started[1], RacerFailedOver); step != RaceFailed {
			t.Fatalf("both fail over: %v, want RaceFailed", step)
		}
		x.HedgeDue() // a late wake-up of the race that ended
		if len(at.started) != 2 {
			t.Fatalf("a hedge started after the race ended")
		}
	})
}
