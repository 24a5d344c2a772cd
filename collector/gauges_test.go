package collector_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// The routing gauges carry each target's provider state: disabled (one
// series a reason) and the end of its rate-limit cooldown.
func TestRoutingCollectorProviderState(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector.NewRoutingCollector(func() []collector.RoutingRow {
		return []collector.RoutingRow{
			{Model: "m", Target: "cooled", RateLimitedUntil: 1_700_000_010.5},
			{Model: "m", Target: "revoked", Disabled: "auth"},
		}
	}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"firstbyte_rate_limited_until_seconds,target=cooled":    1_700_000_010.5,
		"firstbyte_rate_limited_until_seconds,target=revoked":   0,
		"firstbyte_target_disabled,reason=auth,target=revoked":  1,
		"firstbyte_target_disabled,reason=quota,target=revoked": 0,
		"firstbyte_target_disabled,reason=auth,target=cooled":   0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
}
