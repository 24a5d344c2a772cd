package router

import (
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// TestOrderPutsBlockedCircuitsLast: the strategy orders the targets whose
// circuit lets an attempt through, the others follow in declaration order;
// ordering allocates nothing unless some but not all circuits are open
// (then once).
func TestOrderPutsBlockedCircuitsLast(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cands := make([]*mode.Candidate, 5)
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		p := &config.Provider{CircuitBreaker: config.CircuitBreaker{Failures: 1, Cooldown: time.Minute}}
		u := upstream.New(name, p, upstream.Options{Now: clock})
		cands[i] = &mode.Candidate{Target: name, Model: "m", Index: i, Weight: 1, Tries: 1, Upstream: u, Guard: u.Model("m")}
	}
	fallback, err := mode.New("fallback", mode.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{strategy: fallback, now: clock}
	names := func(cs []*mode.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Target)
		}
		return out
	}
	var buf [mode.RankedCap]*mode.Candidate
	order := func() []*mode.Candidate {
		o, _, _ := g.order(buf[:0], g.policyFor("m").strategy, "m", 0, cands)
		return o
	}
	trip := func(c *mode.Candidate) {
		adm, ok := c.Upstream.Breaker.Admit()
		if !ok {
			t.Fatalf("%s not admitted", c.Target)
		}
		adm.Resolve(upstream.Fault)
	}

	if got := names(order()); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("all closed: %v", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { order() }); allocs != 0 {
		t.Errorf("all closed: %v allocations, want 0", allocs)
	}
	trip(cands[1])
	trip(cands[3])
	if got := names(order()); !slices.Equal(got, []string{"a", "c", "e", "b", "d"}) {
		t.Errorf("b and d open: %v, want a c e b d", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { order() }); allocs > 1 {
		t.Errorf("b and d open: %v allocations, want at most 1", allocs)
	}
	for _, c := range []*mode.Candidate{cands[0], cands[2], cands[4]} {
		trip(c)
	}
	if got := names(order()); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("all open: %v, want declaration order", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { order() }); allocs != 0 {
		t.Errorf("all open: %v allocations, want 0", allocs)
	}
}
