//go:build integration

package main

// Routing quality end to end where providers react: a heavy tail that
// hedging races, providers that queue (one gateway, then a fleet of four
// sharing spans through the real collector), and providers that cache
// prompts. The same harness as routing_e2e_integration_test.go; runs of a
// few seconds, thresholds loose enough for a busy two-core machine, and
// each still fails when the feature it is about is off.

import (
	"context"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// startUpstreams serves s's targets for the length of the test.
func startUpstreams(t *testing.T, s routinge2e.Scenario) (*routinge2e.Clock, *routinge2e.Upstreams) {
	t.Helper()
	clock := routinge2e.NewClock()
	up, err := routinge2e.StartUpstreams(s, clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	return clock, up
}

// p99 is the 99th percentile TTFB of the served requests in outs.
func p99(outs []routinge2e.Outcome) time.Duration {
	return routinge2e.Summarize(outs, routinge2e.Window{}).P99
}

// Slow moments (5 % of every target's answers take 10x as long): with
// hedging at p95 (budget 0.1), least-latency's p99 is under 0.7x its p99
// without, in the same test (0.29-0.38x in full runs), the hedges stay
// within the budget, and each hedge's loser is cut: its provider never got
// to answer it. (tail-spikes) rather than (tail): in (tail), sigma 0.9 on
// every target, a 5 s run's p99 moves with which target the mode settles
// on more than hedging moves it (0.73-1.16x in full runs), so only the
// full run can tell.
func TestRoutingE2ETailHedgingCutsTheP99(t *testing.T) {
	s := routinge2e.TailSpikes(5 * sec)
	off := runRouting(t, s, "least-latency")
	on := runRouting(t, s, "least-latency"+routinge2e.HedgeSuffix)
	h := routinge2e.HedgingOf(on)
	t.Logf("p99 without hedging %v, with %v; mean %v / %v; hedged %d of %d (%.3f a request), won %d, lost %d, losers cut %d",
		p99(off).Round(time.Millisecond), p99(on).Round(time.Millisecond),
		routinge2e.Summarize(off, routinge2e.Window{}).Mean.Round(time.Millisecond), routinge2e.Summarize(on, routinge2e.Window{}).Mean.Round(time.Millisecond),
		h.Hedged, h.Requests, h.PerRequest(), h.Won, h.Lost, h.LosersCut)
	if x := ratio(p99(on), p99(off)); x >= 0.7 {
		t.Errorf("p99 with hedging %v, without %v: %.2fx, want under 0.7x", p99(on), p99(off), x)
	}
	if x := h.PerRequest(); x > routinge2e.HedgeBudget+0.01 {
		t.Errorf("%.3f hedges a request, want at most the budget %.2f + 0.01", x, routinge2e.HedgeBudget)
	}
	if h.Hedged < 10 || h.Won == 0 {
		t.Fatalf("%d hedged requests (%d won): hedging did not run", h.Hedged, h.Won)
	}
	if h.LosersCut*10 < h.Hedged*9 {
		t.Errorf("only %d of %d hedged requests had an upstream request cut before its answer; want the loser's connection closed (>= 90%%)", h.LosersCut, h.Hedged)
	}
	if n := routinge2e.HedgingOf(off).Hedged; n > 0 {
		t.Errorf("%d requests hedged with hedging off", n)
	}
}

// fast serves 4 at a time and mid 8, queueing the rest; 16 clients.
// least-latency, reading its in-flight counts, stays within 1.25x the
// study's best static split's mean, and fast's queue is what the sim says:
// never more than 4 served at once.
func TestRoutingE2ECapacitySpreadsTheLoad(t *testing.T) {
	s := routinge2e.Capacity(4 * sec)
	split := runSplit(t, s)
	clock, up := startUpstreams(t, s)
	gw := startGatewayProc(t, "gateway-least-latency", s.GatewayConfig("least-latency", "127.0.0.1:0", "127.0.0.1:0", up.URLs()))
	outs := routinge2e.Load{API: gw.api, Clients: s.ClientsOr(), Duration: s.Duration}.Run(context.Background(), clock, up)
	requireServed(t, outs)
	f, fs := routinge2e.Summarize(outs, routinge2e.Window{}), routinge2e.Summarize(split, routinge2e.Window{})
	fast := up.Sim(routinge2e.Fast).Slots()
	t.Logf("least-latency mean %v (first picks %s), split %v: %.2fx; fast's queue %+v; leadership changes %.0f a minute",
		f.Mean.Round(100*time.Microsecond), shares(f.FirstPicks), fs.Mean.Round(100*time.Microsecond), ratio(f.Mean, fs.Mean), fast,
		routinge2e.LeaderChanges(outs, s.Names(), -1, s.Duration))
	if x := ratio(f.Mean, fs.Mean); x > 1.25 {
		t.Errorf("least-latency mean %v = %.2fx the static split's %v, want at most 1.25x", f.Mean, x, fs.Mean)
	}
	if fast.PeakServing > routinge2e.SlotsFast || fast.Max != routinge2e.SlotsFast {
		t.Errorf("fast served %d at once (max %d), want at most %d", fast.PeakServing, fast.Max, routinge2e.SlotsFast)
	}
	if fast.PeakServing+fast.PeakWaiting > s.ClientsOr() {
		t.Errorf("fast held %d + %d waiting, more than the %d clients", fast.PeakServing, fast.PeakWaiting, s.ClientsOr())
	}
}

// runSplit runs s with the study's best static split through a gateway in
// fallback mode, each request's order drawn by the client.
func runSplit(t *testing.T, s routinge2e.Scenario) []routinge2e.Outcome {
	t.Helper()
	clock, up := startUpstreams(t, s)
	gw := startGatewayProc(t, "gateway-split", s.GatewayConfig("fallback", "127.0.0.1:0", "127.0.0.1:0", up.URLs()))
	outs := routinge2e.Load{API: gw.api, Clients: s.ClientsOr(), Duration: s.Duration, Orderer: s.SplitOracle(s.Split, 1)}.
		Run(context.Background(), clock, up)
	requireServed(t, outs)
	return outs
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
