package router_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A conversation kept on its target for the prompt cache leaves it as soon
// as that target's recent attempts are past the bound, not once its
// 100-sample p50 is: real HTTP, the real tracker and metrics, a fake clock
// that the simulated providers advance by their latency.

// cachedTurn is a chat request whose system prompt is long enough to be
// cached, one conversation per id.
func cachedTurn(id, last string) string {
	system := strings.Repeat("You are a careful assistant. ", 200) + id
	return `{"model":"m","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + last + `"}]}`
}

// affinityCount is firstbyte_affinity_total{result} as gathered from reg.
func affinityCount(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "firstbyte_affinity_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

func TestAffinityLeavesATargetThatTurnedSlow(t *testing.T) {
	t.Parallel()
	const leader = 100 * time.Millisecond
	clock, log := router.NewFakeClock(), &hitLog{}
	a := startSimProvider(t, "a", leader, clock, log)
	b := startSimProvider(t, "b", 120*time.Millisecond, clock, log) // within 1.5x a's 100 ms

	tracker := collector.NewTracker(collector.TrackerOptions{Now: clock.Now})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{InstanceID: "self"})
	reg := prometheus.NewRegistry()
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "self", Aggregator: agg, Observers: collector.NewMetrics(reg), Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
strategy: {mode: least-latency}
providers:
  a: {base_url: %q, models: [m]}
  b: {base_url: %q, models: [m]}
targets:
  - {virtual_key: a}
  - {virtual_key: b}
`, a.srv.URL+"/v1", b.srv.URL+"/v1")), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: tracker, Rand: &scriptRand{}, TracerProvider: sdk.TracerProvider, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	url := newServer(t, gw).URL

	// Long histories: 30 samples each, so b's p50 would need 31 slow ones
	// to pass the bound.
	for range 30 {
		ask(t, url, "m", router.HeaderProviderOrder, "a")
		ask(t, url, "m", router.HeaderProviderOrder, "b")
	}
	turn := func(n int, hdr ...string) string {
		resp := post(t, url, "/v1/chat/completions", cachedTurn("1", fmt.Sprintf("turn %d", n)), hdr...)
		readAll(t, resp.Body)
		return resp.Header.Get(router.HeaderTarget)
	}
	if got := turn(0, router.HeaderProviderOrder, "b"); got != "b" {
		t.Fatalf("turn 0 served by %q, want b (the client's order)", got)
	}
	for n := 1; n <= 2; n++ {
		if got := turn(n); got != "b" {
			t.Fatalf("turn %d served by %q, want b: 120 ms is within 1.5x the leader's 100 ms", n, got)
		}
	}
	router.WaitUntil(t, "two affinity hits counted", func() bool { return affinityCount(t, reg, affinity.Hit) == 2 })

	b.latency.Store(int64(50 * leader)) // b turns 50x slower
	slow := 0
	for n := 3; ; n++ {
		got := turn(n)
		if got != "b" {
			if got != "a" {
				t.Fatalf("turn %d served by %q, want a once the affinity broke", n, got)
			}
			break
		}
		if slow++; slow > 3 {
			t.Fatalf("the conversation stayed on b for %d slow turns (p50 %v): want the affinity broken after at most 3",
				slow, tracker.StatsAt("b", "m", clock.Now()).P50)
		}
	}
	t.Logf("the affinity broke after %d slow turn(s)", slow)
	router.WaitUntil(t, "the broken affinity counted", func() bool { return affinityCount(t, reg, affinity.Broken) == 1 })
}
