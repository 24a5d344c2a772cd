// Package keyratelimitprocessor is a collector processor that passes at
// most a given number of spans a second for each (firstbyte.target,
// gen_ai.request.model) key, with a token bucket per key.
//
// It is for the collector that fans every span out to every firstbyte
// replica: the fan-out costs replicas x spans, but each replica's tracker
// keeps only the newest 100 samples of the last 5 minutes per key, so
// beyond a few spans a second a key's spans only replace each other.
// Limiting per key (not overall) keeps every key learning, however busy
// the others are. docs/fleet.md ("Beyond one collector") gives the
// numbers.
//
// What it must not do: look at anything but the two key attributes, hold
// state that grows with the keys it is sent (MaxKeys bounds it), or block.
package keyratelimitprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// Type is the processor's name in a config: processors::firstbyte_ratelimit.
var Type = component.MustNewType("firstbyte_ratelimit")

// NewFactory returns the processor's factory (traces only).
func NewFactory() processor.Factory {
	return processor.NewFactory(Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, component.StabilityLevelDevelopment))
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config %T, want *Config", Type, cfg)
	}
	p := newRateLimiter(c, nil)
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
