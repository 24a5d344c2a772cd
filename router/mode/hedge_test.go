package mode

import (
	"math"
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
	if _, ok := h.Delay("m", c, nil, time.Time{}); ok {
		t.Fatal("a hedge on a target with 9 samples")
	}
	st["a"] = stats.Target{Samples: 10, P95: 300 * time.Millisecond, P99: time.Second}
	if d, ok := h.Delay("m", c, nil, time.Time{}); !ok || d != 300*time.Millisecond {
		t.Fatalf("delay = %v, %v; want the target's p95, 300ms", d, ok)
	}
	st["a"] = stats.Target{Samples: 50, P95: time.Millisecond}
	if d, _ := h.Delay("m", c, nil, time.Time{}); d != config.HedgeFloor {
		t.Fatalf("delay = %v, want the floor %v", d, config.HedgeFloor)
	}
	fixed := NewHedging(config.Hedge{Enabled: true, After: "250ms", Budget: 1, Max: 1}, nil, []string{"m"})
	if d, ok := fixed.Delay("m", c, nil, time.Time{}); !ok || d != 250*time.Millisecond {
		t.Fatalf("fixed delay = %v, %v; want 250ms with no samples at all", d, ok)
	}
	if NewHedging(config.Hedge{Enabled: false, After: "p95", Budget: 1, Max: 1}, st, nil) != nil {
		t.Fatal("hedging on while disabled")
	}
}

// logNormal is a target of n samples whose tracker quantiles are those of
// a log-normal of median p50 and spread sigma.
func logNormal(n int, p50 time.Duration, sigma float64) stats.Target {
	q := func(i int) time.Duration {
		return time.Duration(float64(p50) * math.Exp(sigma*quantileZ[i]))
	}
	return stats.Target{Samples: n, P50: q(0), P75: q(1), P90: q(2), P95: q(3), P99: q(4)}
}

func near(a, b time.Duration) bool { return max(a-b, b-a) <= time.Microsecond }

func TestQuantileAtIsExactForALogNormal(t *testing.T) {
	st := logNormal(100, 20*time.Millisecond, 0.9)
	for _, q := range []float64{0.5, 0.8, 0.93, 0.97, 0.99, 0.995, 0.3} {
		want := time.Duration(float64(20*time.Millisecond) * math.Exp(0.9*normalScore(q)))
		if got := quantileAt(&st, q); !near(got, want) {
			t.Errorf("quantile %g = %v, want %v", q, got, want)
		}
	}
	if got := quantileAt(&stats.Target{}, 0.9); got != 0 {
		t.Errorf("quantile of nothing = %v, want 0", got)
	}
	one := stats.Target{Samples: 10, P50: 30 * time.Millisecond}
	if got := quantileAt(&one, 0.9); got != 30*time.Millisecond {
		t.Errorf("quantile of a p50 alone = %v, want it", got)
	}
}

func TestAdaptiveDelayAimsAtTheBudgetLeft(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a, b := &Candidate{Target: "a", Model: "m"}, &Candidate{Target: "b", Model: "m"}
	st := statsTable{"a": logNormal(100, 20*time.Millisecond, 0.9), "b": logNormal(100, 40*time.Millisecond, 0.9)}
	h := NewHedging(config.Hedge{Enabled: true, After: config.HedgeAdaptive, Budget: 0.1, Max: 1}, st, []string{"m"})
	at := func(r float64) time.Duration {
		x := st["a"]
		return quantileAt(&x, 1-r)
	}
	// An empty window: aim at hedgeAim of the budget.
	if d, ok := h.Delay("m", a, b, t0); !ok || !near(d, at(0.07)) {
		t.Fatalf("delay %v, %v; want the target's quantile 0.93, %v", d, ok, at(0.07))
	}
	// 100 requests, 7 hedges: on the aim, the same quantile.
	for range 100 {
		h.Request("m", t0)
	}
	for range 7 {
		if !h.Take("m", t0) {
			t.Fatal("a hedge within the budget refused")
		}
	}
	if d, _ := h.Delay("m", a, b, t0); !near(d, at(0.07)) {
		t.Fatalf("on the aim: delay %v, want %v", d, at(0.07))
	}
	// 10 hedges, the whole budget: 0.1 spent against an aim of 0.07, so
	// 0.07 x (0.07/0.1)^2, later.
	for range 3 {
		h.Take("m", t0)
	}
	if h.Take("m", t0) {
		t.Fatal("an 11th hedge in 100 requests at 0.1")
	}
	if d, _ := h.Delay("m", a, b, t0); !near(d, at(0.07*0.7*0.7)) {
		t.Fatalf("the budget spent: delay %v, want %v", d, at(0.07*0.7*0.7))
	}
	// 10 s later the window is empty again.
	if d, _ := h.Delay("m", a, b, t0.Add(10*time.Second)); !near(d, at(0.07)) {
		t.Fatalf("a new window: delay %v, want %v", d, at(0.07))
	}
	// Too few samples: no hedge.
	st["a"] = logNormal(9, 20*time.Millisecond, 0.9)
	if _, ok := h.Delay("m", a, b, t0); ok {
		t.Fatal("an adaptive hedge on a target with 9 samples")
	}
	// Without a tracker, adaptive is off as a quantile is.
	if NewHedging(config.Hedge{Enabled: true, After: config.HedgeAdaptive, Budget: 0.1, Max: 1}, nil, []string{"m"}) != nil {
		t.Fatal("adaptive hedging without statistics")
	}
}

func TestAdaptiveDelayHedgesASlowHeavyTailSooner(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	slow, fast := &Candidate{Target: "slow", Model: "m"}, &Candidate{Target: "fast", Model: "m"}
	h := NewHedging(config.Hedge{Enabled: true, After: config.HedgeAdaptive, Budget: 0.1, Max: 1}, statsTable{}, []string{"m"})
	quantile := func(st stats.Target) time.Duration { return quantileAt(&st, 0.93) }

	// Heavy tails: an attempt at the slow target is hedged once it is
	// later than the fast one would be at the same quantile.
	heavy := statsTable{"slow": logNormal(100, 80*time.Millisecond, 0.9), "fast": logNormal(100, 20*time.Millisecond, 0.9)}
	h.stats = heavy
	if d, _ := h.Delay("m", slow, fast, t0); !near(d, quantile(heavy["fast"])) {
		t.Fatalf("heavy tail: delay %v, want the fast target's quantile %v", d, quantile(heavy["fast"]))
	}
	// The slow target's samples read narrower than its tail is (hedges
	// cancel its slow attempts, so they never become samples: in the
	// study's (tail) a sigma of 0.9 read 0.47-0.62), the runner-up's heavy:
	// still heavy, hedged by the runner-up's quantile.
	censored := statsTable{"slow": logNormal(100, 60*time.Millisecond, 0.45), "fast": logNormal(100, 20*time.Millisecond, 0.9)}
	h.stats = censored
	if d, _ := h.Delay("m", slow, fast, t0); !near(d, quantile(censored["fast"])) {
		t.Fatalf("censored slow tail: delay %v, want the fast target's quantile %v", d, quantile(censored["fast"]))
	}
	// Narrow ones: the slow target's attempt is slow by design; its own
	// quantile, and as a hedge there would not beat its p99, its p99.
	narrow := statsTable{"slow": logNormal(100, 80*time.Millisecond, 0.25), "fast": logNormal(100, 20*time.Millisecond, 0.25)}
	h.stats = narrow
	if d, _ := h.Delay("m", slow, fast, t0); !near(d, quantile(narrow["slow"])) {
		t.Fatalf("narrow: delay %v, want the slow target's own quantile %v", d, quantile(narrow["slow"]))
	}
	// The fast target first, the slow one next: a narrow tail is not worth
	// a hedge before its p99 (the late attempt is due any moment), a heavy
	// one is (the later it is, the longer it takes yet).
	if d, _ := h.Delay("m", fast, slow, t0); d != narrow["fast"].P99 {
		t.Fatalf("narrow, fast first: delay %v, want its p99 %v", d, narrow["fast"].P99)
	}
	h.stats = heavy
	if d, _ := h.Delay("m", fast, slow, t0); !near(d, quantile(heavy["fast"])) {
		t.Fatalf("heavy, fast first: delay %v, want its quantile %v", d, quantile(heavy["fast"]))
	}
}

func TestWorthByResidual(t *testing.T) {
	heavy, narrow := logNormal(100, 20*time.Millisecond, 0.9), logNormal(100, 20*time.Millisecond, 0.25)
	next := logNormal(100, 40*time.Millisecond, 0.9)
	// E[T - d | T > d] of the heavy one at its p90 (63 ms) is about 43 ms.
	if !worthByResidual(&heavy, &next, heavy.P90) {
		t.Error("heavy tail at its p90: the runner-up's 40 ms p50 should beat the 43 ms left")
	}
	if worthByResidual(&narrow, &next, narrow.P90) {
		t.Error("narrow tail at its p90: a few ms left, the runner-up cannot beat them")
	}
	if !worthByResidual(&narrow, &next, time.Hour) {
		t.Error("an hour into a 20 ms target: a hang, worth a hedge")
	}
	if worthByResidual(&heavy, &stats.Target{}, heavy.P90) || worthByResidual(&stats.Target{}, &next, time.Second) {
		t.Error("worth by residual without statistics")
	}
}

// TestHedgeWorthReadsTheCensoredTail: a steady fast target's late attempt
// is seldom much later, so with a p95 delay a hedge at a 40 ms runner-up
// waits for the target's p99; once hedges have cancelled its slow
// attempts, their censored values (CensoredP99) show the tail its answers
// no longer do, and it is hedged from the quantile on. A single cancelled
// attempt no longer does that on its own (Late, the count of lates, once
// latched it for the five minutes a late lives): only a tail that the
// censored values put past the quantile plus the runner-up's p50.
func TestHedgeWorthReadsTheCensoredTail(t *testing.T) {
	ms := time.Millisecond
	c, n := &Candidate{Target: "a", Model: "m"}, &Candidate{Target: "b", Model: "m"}
	steady := stats.Target{Samples: 100, P50: 20 * ms, P95: 28 * ms, P99: 32 * ms, CensoredP99: 32 * ms}
	st := statsTable{"a": steady, "b": {Samples: 100, P50: 40 * ms, P95: 50 * ms, P99: 55 * ms, CensoredP99: 55 * ms}}
	h := NewHedging(config.Hedge{Enabled: true, After: "p95", Budget: 1, Max: 1}, st, []string{"m"})
	if d, _ := h.Delay("m", c, n, time.Time{}); d != 32*ms {
		t.Errorf("steady target: delay %v, want its p99 (28 + 40 ms cannot beat 32)", d)
	}
	one := steady
	one.Late, one.LastLate = 1, time.Time{}.Add(time.Second)
	st["a"] = one
	if d, _ := h.Delay("m", c, n, time.Time{}); d != 32*ms {
		t.Errorf("one late, no censored tail: delay %v, want its p99", d)
	}
	hidden := steady
	hidden.CensoredP99 = 180 * ms // hedges cancelled its slow attempts
	st["a"] = hidden
	if d, _ := h.Delay("m", c, n, time.Time{}); d != 28*ms {
		t.Errorf("censored tail at 180 ms: delay %v, want its p95 (28 + 40 ms beats it)", d)
	}
}
