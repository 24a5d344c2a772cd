//go:build integration

package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// TestLeastLatencyPicksTheFastest runs the least-latency
// through the real binary with real sleeps, at a small scale: three
// providers whose TTFB medians are 20, 60 and 120 ms. The first three
// requests are cold (one per unmeasured target); after that the fastest
// leads, and only an exploring request goes elsewhere.
func TestLeastLatencyPicksTheFastest(t *testing.T) {
	// Not parallel: it checks each target's p50 against its simulated
	// median, which siblings starting gateways on two cores doubled.
	pace := sim.Pace{Chunks: 1} // unary answers take the TTFB only
	providers := []sim.Provider{
		{Name: "fast", TTFB: sim.Dist{Median: 20 * time.Millisecond, Spread: 0.1}, Stream: pace},
		{Name: "medium", TTFB: sim.Dist{Median: 60 * time.Millisecond, Spread: 0.1}, Stream: pace},
		{Name: "slow", TTFB: sim.Dist{Median: 120 * time.Millisecond, Spread: 0.1}, Stream: pace},
	}
	urls := map[string]string{}
	for _, p := range providers {
		urls[p.Name] = startSimProvider(t, p).URL()
	}
	// slow is declared first so that declaration order cannot pass for ranking.
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
strategy: {mode: least-latency}
providers:
  slow:   {kind: openai, base_url: %q, api_key: test-key}
  medium: {kind: openai, base_url: %q, api_key: test-key}
  fast:   {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: slow,   model_map: {m1: slow-model}}
  - {virtual_key: medium, model_map: {m1: medium-model}}
  - {virtual_key: fast,   model_map: {m1: fast-model}}
`, urls["slow"], urls["medium"], urls["fast"]))

	const requests = 40
	cold := map[string]bool{}
	picks := map[string]int{}
	bySelection := map[string]int{}
	for i := range requests {
		r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", i%4 == 3))
		if r.status != http.StatusOK {
			t.Fatalf("request %d = %d, want 200: %s", i+1, r.status, r.body)
		}
		target, sel := r.target(), r.selection()
		if r.header.Get("X-Firstbyte-Attempts") != "1" {
			t.Errorf("request %d: X-Firstbyte-Attempts = %q, want 1", i+1, r.header.Get("X-Firstbyte-Attempts"))
		}
		bySelection[sel]++
		switch {
		case i < 3:
			if sel != "cold" {
				t.Errorf("request %d: X-Firstbyte-Selection = %q, want cold (a target is still unmeasured)", i+1, sel)
			}
			if cold[target] {
				t.Errorf("request %d went cold to %s again; unmeasured targets go first", i+1, target)
			}
			cold[target] = true
		case sel == "leader":
			picks[target]++
			if target != "fast" {
				t.Errorf("request %d: leader %s, want fast", i+1, target)
			}
		case sel == "explore":
			picks[target]++
			if target == "fast" {
				t.Errorf("request %d: explore went to the leader fast, want a runner-up", i+1)
			}
		default:
			t.Errorf("request %d: X-Firstbyte-Selection = %q, want leader or explore once every target is measured", i+1, sel)
		}
	}
	t.Logf("first picks after the cold start: %v; selections: %v", picks, bySelection)
	// Exploration is 1 in 10, so about 33 of the 37 warm requests go to fast;
	// fewer than 2/3 would take 12 explorations out of 37 (p < 1e-3).
	if warm := requests - 3; picks["fast"]*3 < warm*2 {
		t.Errorf("fast got %d of %d warm first picks, want most (>= 2/3)", picks["fast"], warm)
	}

	// The last answer's sample is recorded right after the answer is
	// flushed: it may land just after the client has it.
	var ts map[string]targetState
	pollUntil(t, 5*time.Second, "the last request's sample", func() bool {
		ts = modelRouting(t, gw.admin, "m1")
		return totalSamples(ts) >= requests
	})
	if leaderOf(ts) != "fast" {
		t.Errorf("/debug/routing leader = %q, want fast: %+v", leaderOf(ts), ts)
	}
	if !(ts["fast"].p50 < ts["medium"].p50 && ts["medium"].p50 < ts["slow"].p50) {
		t.Errorf("/debug/routing p50s fast %.3fs, medium %.3fs, slow %.3fs, want ascending", ts["fast"].p50, ts["medium"].p50, ts["slow"].p50)
	}
	for name, want := range map[string]float64{"fast": 0.020, "medium": 0.060, "slow": 0.120} {
		if got := ts[name].p50; got < want*0.7 || got > want*1.6 {
			t.Errorf("/debug/routing %s p50 = %.3fs, want about %.3fs", name, got, want)
		}
	}
	if ts["fast"].rank != 1 || ts["medium"].rank != 2 || ts["slow"].rank != 3 {
		t.Errorf("/debug/routing ranks fast %d, medium %d, slow %d, want 1, 2, 3", ts["fast"].rank, ts["medium"].rank, ts["slow"].rank)
	}
	if got := totalSamples(ts); got != requests {
		t.Errorf("/debug/routing samples = %d, want %d (one per request)", got, requests)
	}
}
