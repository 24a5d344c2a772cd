package study

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The gateways of a run. A scenario without replicas has one gateway, with
// one statistics source that learns from its spans as they end. A fleet
// has several replicas, each its own gateway with its own statistics
// source, telemetry SDK, service.instance.id and random stream; every
// replica's ended attempt spans go to its own source as its own
// (ConsumeTraces) and to every replica's as a collector's fan-out delivers
// them (ConsumePeerTraces), which skips the replica's own by
// service.instance.id. The fan-out is instant: the most the replicas can
// know of each other, which is also when they are most likely to move
// their leader at once.

// PeerConsumer is a replica's span consumer: its own spans through
// ConsumeTraces, the fleet's through ConsumePeerTraces (in the product,
// the collector's aggregator with the replica's service.instance.id).
type PeerConsumer interface {
	telemetry.TracesConsumer
	ConsumePeerTraces(ctx context.Context, td ptrace.Traces) error
}

// fanOut hands a replica's ended span to its own consumer, then to every
// replica's as a peer's span, as the collector's fan-out does (its own
// included: it skips the span by service.instance.id).
type fanOut struct {
	own   PeerConsumer
	fleet []PeerConsumer
}

func (f fanOut) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	errs := []error{f.own.ConsumeTraces(ctx, td)}
	for _, p := range f.fleet {
		errs = append(errs, p.ConsumePeerTraces(ctx, td))
	}
	return errors.Join(errs...)
}

// streamReplica is the first of the router streams of replicas after the
// first (which keeps streamRouter, so a run without replicas draws what
// it always drew).
const streamReplica = 1 << 32

// routerStream is replica k's router stream.
func routerStream(k int) uint64 {
	if k == 0 {
		return streamRouter
	}
	return streamReplica + uint64(k)
}

// instanceID is replica k's service.instance.id among n.
func instanceID(n, k int) string {
	if n == 1 {
		return "study"
	}
	return fmt.Sprintf("study-%d", k)
}

// useGateways gives each of the scenario's replicas its statistics source,
// telemetry SDK and gateways under the run's mode; stop shuts the SDKs
// down.
func (r *runner) useGateways(ctx context.Context, seed uint64, deps Deps) (stop func(), err error) {
	n := r.s.replicas()
	sources := make([]mode.StatsSource, n)
	consumers := make([]telemetry.TracesConsumer, n)
	if n == 1 {
		sources[0], consumers[0] = deps.NewStats(r.clock.Now)
	} else {
		if deps.NewReplica == nil {
			return nil, fmt.Errorf("scenario %s: %d replicas need Deps.NewReplica", r.s.Name, n)
		}
		fleet := make([]PeerConsumer, n)
		for k := range n {
			sources[k], fleet[k] = deps.NewReplica(r.clock.Now, instanceID(n, k))
		}
		for k := range n {
			consumers[k] = fanOut{own: fleet[k], fleet: fleet}
		}
	}
	var shutdowns []func(context.Context) error
	stop = func() {
		for _, f := range shutdowns {
			_ = f(context.WithoutCancel(ctx))
		}
	}
	for k := range n {
		sdk, shutdown, err := telemetry.Setup(ctx, telemetry.Options{
			ServiceName: "firstbyte-study",
			InstanceID:  instanceID(n, k),
			Aggregator:  consumers[k],
			Getenv:      func(string) string { return "" }, // no export, the default sampler
		})
		if err != nil {
			stop()
			return nil, err
		}
		shutdowns = append(shutdowns, shutdown)
		rnd := &lockedRand{r: rand.New(newSource(seed, routerStream(k)))}
		gws, err := gatewaysOf(r.s, r.mode, router.Options{Stats: sources[k], Rand: rnd, Now: r.clock.Now,
			TracerProvider: sdk.TracerProvider})
		if err != nil {
			stop()
			return nil, err
		}
		r.replicas = append(r.replicas, &replica{planner: &gatewayPlanner{gateways: gws},
			tracer: sdk.TracerProvider.Tracer(telemetry.TracerName)})
	}
	return stop, nil
}

// needsReplicas reports whether any of ss has more than one replica.
func needsReplicas(ss []*Scenario) bool {
	for _, s := range ss {
		if s.replicas() > 1 {
			return true
		}
	}
	return false
}
