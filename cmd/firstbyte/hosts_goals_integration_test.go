//go:build integration

package main

// The pools the cloud hosts exist for, through the real binary: one model
// bought from several hosts whose speed differs, and least-latency sending
// the first picks to whichever is fastest now. The sims speak each host's
// API with its credential (SigV4 from the AWS chain, OAuth tokens from the
// Vertex sim's token endpoint, Azure api-keys), so what is measured
// includes the hosts' signing, framing and translation.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// hostPool is a model served by three hosts: first is the fastest until
// the swap, last the fastest after it.
type hostPool struct {
	name   string
	family string    // claude | gpt
	kinds  [3]string // the host kind of each target, fastest first
	names  [3]string // the targets' provider names
}

// The speeds (TTFB medians): before the swap first 20 ms, second 50 ms, last 100 ms;
// after it first 150 ms and last 10 ms.
const (
	poolSwap     = 1500 * time.Millisecond
	poolDuration = 10500 * time.Millisecond
	// poolFollow bounds how long after the swap the new fastest takes the
	// lead. least-latency re-measures a runner-up only on its exploring
	// requests (1 in 20 each), and its p50 turns once more than half its
	// samples are fresh: about as long as the runner-up was slow before, and
	// longer on a busy machine, whose fewer requests explore less often
	// (4-5 s on two cores with a build beside).
	poolFollow = 7500 * time.Millisecond
)

func (p hostPool) scenario() routinge2e.Scenario {
	medians := [3]time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}
	after := [3]time.Duration{150 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond}
	s := routinge2e.Scenario{Name: p.name, Title: p.name + ": the fastest host changes", Duration: poolDuration}
	for i := range 3 {
		d := sim.Dist{Median: after[i], Spread: routinge2e.Spread}
		s.Targets = append(s.Targets, sim.Provider{
			Name:   p.names[i],
			TTFB:   sim.Dist{Median: medians[i], Spread: routinge2e.Spread},
			Stream: sim.Pace{Chunks: 1},
			Host:   hostOf(p.kinds[i], p.names[i]),
			Phases: []sim.Phase{{After: poolSwap, TTFB: &d}},
		})
	}
	return s
}

func (p hostPool) gatewayConfig(t *testing.T, urls map[string]string) string {
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nstrategy: {mode: least-latency}\ntelemetry: {otlp_endpoint: \"\"}\nproviders:\n")
	// Declared slowest first, so that declaration order cannot pass for ranking.
	for i := 2; i >= 0; i-- {
		fmt.Fprintf(&b, "  %s: %s\n", p.names[i], providerEntry(t, p.kinds[i], p.names[i], urls[p.names[i]], ""))
	}
	b.WriteString("targets:\n")
	for i := 2; i >= 0; i-- {
		fmt.Fprintf(&b, "  - {virtual_key: %s, model_map: {%s: %q}}\n", p.names[i], routinge2e.Model, upstreamModel(p.kinds[i], p.family))
	}
	return b.String()
}

// TestHostPoolsLeastLatencyFollowsTheFastest: Claude on Anthropic, Bedrock
// and Vertex, and GPT on OpenAI and two Azure regions. Before the swap the
// fastest host gets >= 85 % of the leader picks and most of all first
// picks (exploring is ~10 %); after it the lead moves to the new fastest
// within poolFollow and stays there.
func TestHostPoolsLeastLatencyFollowsTheFastest(t *testing.T) {
	for _, p := range []hostPool{
		{name: "claude", family: "claude", kinds: [3]string{sim.HostBedrock, sim.HostVertex, "anthropic"}, names: [3]string{"bedrock", "vertex", "anthropic"}},
		{name: "gpt", family: "gpt", kinds: [3]string{sim.HostAzure, "openai", sim.HostAzure}, names: [3]string{"azure-east", "openai", "azure-west"}},
	} {
		t.Run(p.name, func(t *testing.T) {
			s := p.scenario()
			clock := routinge2e.NewClockAt(time.Now())
			up, err := routinge2e.StartUpstreams(s, clock, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(up.Close)
			gw := startGatewayProc(t, "gateway-"+p.name, p.gatewayConfig(t, up.URLs()), awsEnv(t)...)
			outs := routinge2e.Load{API: gw.api, Duration: s.Duration}.Run(context.Background(), clock, up)
			requireServed(t, outs)
			checkPoolShares(t, p, outs)
		})
	}
}

// checkPoolShares checks and logs the first-pick shares before and after
// the swap.
func checkPoolShares(t *testing.T, p hostPool, outs []routinge2e.Outcome) {
	t.Helper()
	fastest, next := p.names[0], p.names[2]
	// 400 ms for the cold start and the first samples.
	before := routinge2e.Window{From: 400 * time.Millisecond, To: poolSwap}
	leader, leaderFast := 0, 0
	for _, o := range outs {
		if before.Contains(o.Start) && o.Selection == "leader" {
			leader++
			if o.First == fastest {
				leaderFast++
			}
		}
	}
	share := firstPickShare(outs, fastest, before)
	leaderShare := float64(leaderFast) / float64(max(leader, 1))
	t.Logf("%s before the swap (%v): %s gets %.1f%% of warm first picks, %.1f%% of leader picks (%d of %d)",
		p.name, before, fastest, 100*share, 100*leaderShare, leaderFast, leader)
	if leaderShare < 0.85 {
		t.Errorf("%s got %.3f of the leader picks before the swap, want >= 0.85", fastest, leaderShare)
	}
	if share < 0.75 {
		t.Errorf("%s got %.3f of the warm first picks before the swap, want about 0.90 (>= 0.75)", fastest, share)
	}
	adapt, ok := routinge2e.TimeToLeadFor(outs, next, poolSwap, poolDuration, 500*time.Millisecond)
	if !ok || adapt > poolFollow {
		t.Fatalf("%s leads %v after the swap (ok %v), want within %v; shares per 250 ms: %s",
			next, adapt, ok, poolFollow, percents(routinge2e.FirstPickShares(outs, next, routinge2e.LeadBin, poolDuration)))
	}
	after := routinge2e.Window{From: poolSwap + adapt, To: poolDuration}
	shareAfter := firstPickShare(outs, next, after)
	t.Logf("%s after the swap: %s leads %v after it, then gets %.1f%% of warm first picks (%v)", p.name, next, adapt, 100*shareAfter, after)
	if shareAfter < 0.75 {
		t.Errorf("%s got %.3f of the warm first picks once it led, want about 0.90 (>= 0.75)", next, shareAfter)
	}
}
