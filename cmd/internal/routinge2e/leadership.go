package routinge2e

import (
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/study"
)

// How often the leader changes, as the routing study counts it
// (cmd/internal/study/leadership.go): the leader of each LeaderWindow is the
// target with the most first picks in it, once it is ahead of the leader
// before it by more than LeaderMargin standard deviations of an even
// split, LeaderMargin × √(a + b) for counts a and b. A window without a
// first pick, a tie or a lead within the margin keeps the leader. Per
// minute of the run; in a fleet, per replica (its own requests).

// LeaderWindow and LeaderMargin are the study's.
const (
	LeaderWindow = study.LeaderWindow
	LeaderMargin = study.LeaderMargin
)

// LeaderChanges is the changes of leader a minute among the requests of
// replica (-1: every request) over [0, d).
func LeaderChanges(outs []Outcome, targets []string, replica int, d time.Duration) float64 {
	n := int((d + LeaderWindow - 1) / LeaderWindow)
	picks := make([][]int, n)
	for i := range picks {
		picks[i] = make([]int, len(targets))
	}
	for _, o := range outs {
		w, k := int(o.Start/LeaderWindow), slices.Index(targets, o.First)
		if (replica >= 0 && o.Replica != replica) || k < 0 || w < 0 || w >= n {
			continue
		}
		picks[w][k]++
	}
	return float64(study.LeaderChanges(picks)) / d.Minutes()
}

// Names are the names of s's targets in declaration order.
func (s Scenario) Names() []string {
	names := make([]string, len(s.Targets))
	for i, p := range s.Targets {
		names[i] = p.Name
	}
	return names
}

// Hedging is what hedging did in a set of requests.
type Hedging struct {
	// Requests counts them; Hedged those that had a hedge, Won and Lost by
	// X-Firstbyte-Hedged.
	Requests, Hedged, Won, Lost int
	// LosersCut counts the hedged requests one of whose upstream requests
	// got no answer from its provider: the gateway closed it first.
	LosersCut int
}

// HedgingOf counts what hedging did in outs.
func HedgingOf(outs []Outcome) Hedging {
	var h Hedging
	for _, o := range outs {
		h.Requests++
		switch o.Hedged {
		case "":
			continue
		case "won":
			h.Won++
		case "lost":
			h.Lost++
		}
		h.Hedged++
		if slices.ContainsFunc(o.Hops, func(x Hop) bool { return x.Status == 0 }) {
			h.LosersCut++
		}
	}
	return h
}

// PerRequest is the hedges per request: the extra attempts hedging made.
func (h Hedging) PerRequest() float64 {
	if h.Requests == 0 {
		return 0
	}
	return float64(h.Hedged) / float64(h.Requests)
}

// CacheHits is the share of the requests of a conversation after its
// first that a provider answered from its prompt cache, as their answers
// say (cached prompt tokens), out of conversations conversations.
func CacheHits(outs []Outcome, conversations int) float64 {
	later, hits := 0, 0
	for _, o := range outs {
		if o.Conv < 0 {
			continue
		}
		later++
		if o.Cached {
			hits++
		}
	}
	later -= conversations
	if later <= 0 {
		return 0
	}
	return float64(hits) / float64(later)
}
