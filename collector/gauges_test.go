package collector_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// The routing gauges carry each target's provider state: disabled (one
// series a reason) and the end of its rate-limit cooldown, over the
// target's upstream models whatever order their rows come in.
func TestRoutingCollectorProviderState(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector.NewRoutingCollector(func() []collector.RoutingRow {
		return []collector.RoutingRow{
			{Model: "m", Target: "cooled", RateLimitedUntil: 1_700_000_010.5},
			{Model: "m", Target: "revoked", Disabled: "auth"},
			// Per model: m2 of target two cooled and refused, m served.
			{Model: "m2", Target: "two", RateLimitedUntil: 1_700_000_060, Disabled: "model_access"},
			{Model: "m", Target: "two"},
			{Model: "m3", Target: "two", RateLimitedUntil: 1_700_000_030},
			// A provider's own reason is on every row; a model's does not hide it.
			{Model: "m2", Target: "both", Disabled: "model_access"},
			{Model: "m", Target: "both", Disabled: "quota"},
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
		"firstbyte_rate_limited_until_seconds,target=cooled":        1_700_000_010.5,
		"firstbyte_rate_limited_until_seconds,target=revoked":       0,
		"firstbyte_target_disabled,reason=auth,target=revoked":      1,
		"firstbyte_target_disabled,reason=quota,target=revoked":     0,
		"firstbyte_target_disabled,reason=auth,target=cooled":       0,
		"firstbyte_rate_limited_until_seconds,target=two":           1_700_000_060,
		"firstbyte_target_disabled,reason=model_access,target=two":  1,
		"firstbyte_target_disabled,reason=quota,target=both":        1,
		"firstbyte_target_disabled,reason=model_access,target=both": 0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
}

// The predicted time to the last token and the output-rate percentiles are
// exported once a target has them, and absent before.
func TestRoutingCollectorCompletion(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector.NewRoutingCollector(func() []collector.RoutingRow {
		return []collector.RoutingRow{
			{Model: "m", Target: "t2", Samples: 12, HasPrediction: true, PredictedCompletionSeconds: 4.4,
				RateSamples: 12, OutputRate: [4]float64{150, 160, 170, 180}},
			{Model: "m", Target: "cold", Samples: 3}, // TTFB samples, no rate sample
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
	want := map[string]float64{
		"firstbyte_predicted_completion_seconds,model=m,target=t2":                   4.4,
		"firstbyte_target_output_tokens_per_second,model=m,percentile=p50,target=t2": 150,
		"firstbyte_target_output_tokens_per_second,model=m,percentile=p75,target=t2": 160,
		"firstbyte_target_output_tokens_per_second,model=m,percentile=p90,target=t2": 170,
		"firstbyte_target_output_tokens_per_second,model=m,percentile=p99,target=t2": 180,
	}
	for key, w := range want {
		if v, ok := got[key]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, w)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok && strings.Contains(key, "target=cold") &&
			(strings.HasPrefix(key, "firstbyte_predicted_completion_seconds") || strings.HasPrefix(key, "firstbyte_target_output_tokens_per_second")) {
			t.Errorf("%s exported for a target without a rate sample", key)
		}
	}
}
