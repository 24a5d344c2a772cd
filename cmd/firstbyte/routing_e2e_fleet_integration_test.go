//go:build integration

package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// (capacity)'s providers behind four gateways that share their spans
// through the real collector (each exports OTLP to it, it fans every span
// out to every gateway's admin /v1/traces), four clients each: every
// replica serves everything, the peers' spans arrive, and the fleet's mean
// stays within 1.3x the best static split's.
func TestRoutingE2EFleetSharesThroughTheCollector(t *testing.T) {
	s := routinge2e.Fleet(4 * sec)
	split := runSplit(t, s)
	clock, up := startUpstreams(t, s)
	grpcAddr, httpAddr := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
	var admins, apis []string
	var gws []*gatewayProc
	for i := range s.Gateways() {
		admins = append(admins, loopbackAddr(freeLoopbackPort(t)))
		cfg := s.FleetGatewayConfig("least-latency", "127.0.0.1:0", admins[i], up.URLs(), "http://"+httpAddr)
		gw := startGatewayProc(t, fmt.Sprintf("gateway-%d", i), cfg, slices.Concat(routinge2e.ExportEnv,
			[]string{fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES=service.instance.id=fleet-%d", i)})...)
		gws, apis = append(gws, gw), append(apis, gw.api)
	}
	startCollector(t, grpcAddr, httpAddr, routinge2e.CollectorConfig(grpcAddr, httpAddr, admins))
	outs := routinge2e.Load{APIs: apis, Clients: s.ClientsOr(), Duration: s.Duration}.Run(context.Background(), clock, up)
	requireServed(t, outs)
	f, fs := routinge2e.Summarize(outs, routinge2e.Window{}), routinge2e.Summarize(split, routinge2e.Window{})
	worst := 0.0
	for i, gw := range gws {
		var mine []routinge2e.Outcome
		for _, o := range outs {
			if o.Replica == i {
				mine = append(mine, o)
			}
		}
		worst = max(worst, routinge2e.LeaderChanges(outs, s.Names(), i, s.Duration))
		peer := scrapeMetric(t, gw.admin, "firstbyte_spans_consumed_total", `source="peer"`)
		t.Logf("replica %d: %d requests, mean %v, first picks %s, %v peer spans", i, len(mine),
			routinge2e.Summarize(mine, routinge2e.Window{}).Mean.Round(100*time.Microsecond), shares(routinge2e.Summarize(mine, routinge2e.Window{}).FirstPicks), peer)
		if len(mine) < 50 {
			t.Errorf("replica %d served %d requests, want its clients' share (>= 50)", i, len(mine))
		}
		if peer == 0 {
			t.Errorf(`replica %d: firstbyte_spans_consumed_total{source="peer"} = 0, want its peers' spans`, i)
		}
	}
	t.Logf("fleet mean %v (first picks %s), split %v: %.2fx; fast's queue %+v; leadership changes a minute, worst replica: %.0f",
		f.Mean.Round(100*time.Microsecond), shares(f.FirstPicks), fs.Mean.Round(100*time.Microsecond), ratio(f.Mean, fs.Mean),
		up.Sim(routinge2e.Fast).Slots(), worst)
	if x := ratio(f.Mean, fs.Mean); x > 1.3 {
		t.Errorf("fleet mean %v = %.2fx the static split's %v, want at most 1.3x", f.Mean, x, fs.Mean)
	}
}

// 20 conversations with 5 KiB system prompts, each provider answering a
// prompt it answered in the last 5 minutes in half the time: with the
// affinity, conversations stay where their prefix is cached (more than 0.8
// of the turns after each conversation's first hit a cache, as the
// providers count them) and the gateway counts affinity hits.
func TestRoutingE2ECacheAffinityKeepsConversations(t *testing.T) {
	s := routinge2e.Cache(3 * sec)
	clock, up := startUpstreams(t, s)
	gw := startGatewayProc(t, "gateway-least-latency", s.GatewayConfig("least-latency", "127.0.0.1:0", "127.0.0.1:0", up.URLs()))
	outs := routinge2e.Load{API: gw.api, Duration: s.Duration, Conversations: s.Conversations}.Run(context.Background(), clock, up)
	requireServed(t, outs)
	var hits, misses int64
	for _, name := range s.Names() {
		st := up.Sim(name).PromptCacheStats()
		hits, misses = hits+st.Hits, misses+st.Misses
	}
	later := len(outs) - s.Conversations
	share := float64(hits) / float64(later)
	affinity := scrapeMetric(t, gw.admin, "firstbyte_affinity_total", `result="hit"`)
	f := routinge2e.Summarize(outs, routinge2e.Window{})
	t.Logf("%d requests, mean %v, first picks %s; provider cache hits %d, misses %d: %.3f of the %d later turns (%.3f by the answers' cached tokens); affinity hits %v",
		len(outs), f.Mean.Round(100*time.Microsecond), shares(f.FirstPicks), hits, misses, share, later, routinge2e.CacheHits(outs, s.Conversations), affinity)
	if share <= 0.8 {
		t.Errorf("cache hits %.3f of the later turns, want > 0.8", share)
	}
	if affinity == 0 {
		t.Error(`firstbyte_affinity_total{result="hit"} = 0, want the conversations kept on their targets`)
	}
}
