package study

import (
	"context"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// collectorDeps wires the product's tracker and aggregator, as cmd does.
func collectorDeps() Deps {
	return Deps{
		NewStats: func(now func() time.Time) (mode.StatsSource, telemetry.TracesConsumer) {
			tracker := collector.NewTracker(collector.TrackerOptions{Now: now})
			return tracker, collector.NewAggregator(tracker, collector.AggregatorOptions{})
		},
		NewReplica: func(now func() time.Time, instance string) (mode.StatsSource, PeerConsumer) {
			tracker := collector.NewTracker(collector.TrackerOptions{Now: now})
			agg := collector.NewAggregator(tracker, collector.AggregatorOptions{})
			agg.SetInstanceID(instance)
			return tracker, agg
		},
	}
}

// runStudy runs a study with the product's tracker, failing the test on an
// error.
func runStudy(t *testing.T, o Options) *Study {
	t.Helper()
	st, err := Run(context.Background(), o, collectorDeps())
	if err != nil {
		t.Fatalf("Run(%+v): %v", o, err)
	}
	return st
}
