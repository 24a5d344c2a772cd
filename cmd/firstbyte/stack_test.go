package main

import (
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// TestAggregatorTargetsCarryTheFirstByteTimeout: every (target, upstream
// model) the aggregator is taught carries its provider's
// timeout.first_byte, the default where the file says none: the bound of a
// plausible time to first chunk in peers' and applications' spans.
func TestAggregatorTargetsCarryTheFirstByteTimeout(t *testing.T) {
	cfg, err := config.Parse([]byte(`
providers:
  fast: {kind: openai, base_url: "http://127.0.0.1:9/v1", timeout: {first_byte: 5s}}
  plain: {kind: anthropic, base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: fast, model_map: {m: up-fast, m2: up-fast2}}
  - {virtual_key: plain, model_map: {m: up-plain}}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Stats: collector.NewTracker(collector.TrackerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string]time.Duration{
		{"fast", "up-fast"}:   5 * time.Second,
		{"fast", "up-fast2"}:  5 * time.Second,
		{"plain", "up-plain"}: config.DefaultFirstByte,
	}
	got := map[[2]string]time.Duration{}
	for _, tg := range aggregatorTargets(cfg, gw) {
		got[[2]string{tg.Name, tg.Model}] = tg.FirstByteTimeout
	}
	if len(got) != len(want) {
		t.Errorf("aggregatorTargets = %v, want %v", got, want)
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("%s/%s FirstByteTimeout = %v, want %v", k[0], k[1], got[k], d)
		}
	}
}
