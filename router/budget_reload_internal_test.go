package router

import (
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/relay"
)

// TestReloadTakesTheBudgetAndSetsItsLimit: New with Previous shares the
// budget object, with the new config's limit.
func TestReloadTakesTheBudgetAndSetsItsLimit(t *testing.T) {
	build := func(limits string, prev *Gateway) *Gateway {
		t.Helper()
		cfg, err := config.Parse([]byte(limits+"\nstrategy: {mode: fallback}\nproviders: {p: {base_url: \"http://127.0.0.1:9/v1\", models: [m]}}\ntargets: [{virtual_key: p}]\n"),
			func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		g, err := New(cfg, Options{Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := build("limits: {max_buffered: 200MiB}", nil)
	if !limitIs(first.budget, 200<<20) {
		t.Error("the budget's limit is not 200MiB")
	}
	inFlight := first.budget.Hold() // answers in flight
	inFlight.Take(5 << 20)
	defer inFlight.Release()
	next := build("", first)
	if next.budget != first.budget || next.BufferedBytes() != 5<<20 {
		t.Errorf("after the reload: shared %v, held %d; want the same budget, 5MiB held", next.budget == first.budget, next.BufferedBytes())
	}
	if !limitIs(next.budget, config.DefaultMaxBuffered) {
		t.Error("after the reload: the budget's limit is not the default")
	}
	if other := build("", nil); other.budget == first.budget {
		t.Error("a gateway built afresh took another's budget")
	}
	// Raising max_response alone raises the budget's default with it.
	if g := build("limits: {max_response: 128MiB}", nil); !limitIs(g.budget, 128<<20) {
		t.Error("max_response 128MiB alone: the budget's limit is not 128MiB")
	}
}

// limitIs reports whether b takes exactly limit bytes in all: one answer
// more, beside those held, fills it to the byte and not one byte past it
// (another answer holds a byte, so that the budget may refuse at all).
func limitIs(b *relay.Budget, limit int64) bool {
	other := b.Hold()
	defer other.Release()
	if !other.Take(1) {
		return false
	}
	c := b.Hold()
	defer c.Release()
	return c.Take(limit-b.Held()) && !c.Take(1)
}
