package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// demoLeads is the demo's record of lead changes: a line each time the
// leader of the demo's model moves, and why (its p50 against the old
// leader's). The demo's watcher observes it at the same moment and with
// the same routing state as the story (demostory.go), so a lead change and
// the story step it ends carry the same time; the frame, drawn once a
// second or less often, only shows them. Safe for concurrent use.
type demoLeads struct {
	mu     sync.Mutex // guards the fields below
	leader string
	events []string // newest last
}

// observe notes the leader in routing at run time elapsed.
func (l *demoLeads) observe(elapsed time.Duration, routing []routingview.Model) {
	leader, p50s := "", map[string]string{}
	for _, m := range routing {
		if m.Model != demoModel {
			continue
		}
		for _, t := range m.Targets {
			p50s[t.Target] = demoP50(t)
			if t.Leader {
				leader = t.Target
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if leader == "" || leader == l.leader {
		return
	}
	if l.leader != "" {
		l.events = append(l.events, fmt.Sprintf("%s  lead %s -> %s: p50 %s now beats %s's %s",
			clock(elapsed), l.leader, leader, p50s[leader], l.leader, p50s[l.leader]))
	}
	l.leader = leader
}

// last is the newest n lead changes, oldest first.
func (l *demoLeads) last(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events[max(0, len(l.events)-n):]...)
}

// demoP50 is a target's p50 as the demo prints it, "-" before a sample.
func demoP50(t routingview.Target) string {
	if t.Samples == 0 {
		return "-"
	}
	return time.Duration(t.P50Seconds * float64(time.Second)).Round(time.Millisecond).String()
}
