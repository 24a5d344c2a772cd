package mode

import (
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// The hedge policy on injected statistics and instants: how late is late,
// and the budget's sliding window.

func TestHedgeBudgetSlidesOverTenSeconds(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var b hedgeBudget
	for range 40 {
		b.request(t0)
	}
	for i := range 2 {
		if !b.take(t0, 0.05) {
			t.Fatalf("hedge %d of 2 refused with 40 requests at 5 %%", i+1)
		}
	}
	if b.take(t0, 0.05) {
		t.Fatal("a third hedge allowed: 3 > 0.05 x 40")
	}
	// 9 s later the window still holds them; 10 s later they are gone.
	if b.take(t0.Add(9*time.Second), 0.05) {
		t.Fatal("hedges left the window before 10 s")
	}
	b.request(t0.Add(10 * time.Second))
	if b.take(t0.Add(10*time.Second), 0.05) {
		t.Fatal("one request in the new window allowed a hedge (0.05 x 1 < 1)")
	}
	for range 19 {
		b.request(t0.Add(10 * time.Second))
	}
	if !b.take(t0.Add(10*time.Second), 0.05) {
		t.Fatal("20 requests in the window refused their one hedge")
	}
}

func TestHedgeDelayIsTheTargetsOwnQuantile(t *testing.T) {
	c := &Candidate{Target: "a", Model: "m"}
	st := statsTable{"a": {Samples: 9, P95: 300 * time.Millisecond}}
	h := NewHedging(config.Hedge{Enabled: true, After: "p95", Budget: 1, Max: 1}, st, []string{"m"})
	if _, ok := h.Delay(c, nil, time.Time{}); ok {
		t.Fatal("a hedge on a target with 9 samples")
	}
	st["a"] = stats.Target{Samples: 10, P95: 300 * time.Millisecond, P99: time.Second}
	if d, ok := h.Delay(c, nil, time.Time{}); !ok || d != 300*time.Millisecond {
		t.Fatalf("delay = %v, %v; want the target's p95, 300ms", d, ok)
	}
	st["a"] = stats.Target{Samples: 50, P95: time.Millisecond}
	if d, _ := h.Delay(c, nil, time.Time{}); d != config.HedgeFloor {
		t.Fatalf("delay = %v, want the floor %v", d, config.HedgeFloor)
	}
	fixed := NewHedging(config.Hedge{Enabled: true, After: "250ms", Budget: 1, Max: 1}, nil, []string{"m"})
	if d, ok := fixed.Delay(c, nil, time.Time{}); !ok || d != 250*time.Millisecond {
		t.Fatalf("fixed delay = %v, %v; want 250ms with no samples at all", d, ok)
	}
	if NewHedging(config.Hedge{Enabled: false, After: "p95", Budget: 1, Max: 1}, st, nil) != nil {
		t.Fatal("hedging on while disabled")
	}
}
