package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// One arm run: fresh providers, fresh gateways (the real binary; a fleet's
// behind a real collector), the scenario's clients.

// routingBins are the binaries a routing run starts.
type routingBins struct {
	gateway string
	otelcol string // "": no scenario with several gateways can run
}

// armsOf are the arms scenario s runs through, in report order: the
// hedging scenarios every latency mode without and with hedging; those of
// providers that react the latency modes; the others every mode. The
// oracle last, whatever it is for s (a fixed order, the best static split,
// the cache-aware order).
func armsOf(s routinge2e.Scenario) []string {
	switch {
	case s.Hedged:
		var arms []string
		for _, m := range latencyModes {
			arms = append(arms, m, m+routinge2e.HedgeSuffix)
		}
		return append(arms, armOracle)
	case s.Split != nil || s.Conversations > 0:
		return append(slices.Clone(latencyModes), armOracle)
	}
	return routingArms
}

// splitStep is the move of the split oracle's small search: from the
// study's best split, every move of 0.05 of the first picks from one
// target to another.
const splitStep = 0.05

// runRoutingArm runs scenario s once through fresh gateways in arm's mode
// (the oracle: fallback, every request carrying the oracle's order; split,
// when s has one, the static split of those shares).
func runRoutingArm(ctx context.Context, s routinge2e.Scenario, arm string, bins routingBins, split []float64) ([]routinge2e.Outcome, error) {
	clock := routinge2e.NewClock()
	up, err := routinge2e.StartUpstreams(s, clock, 0)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	mode := arm
	if arm == armOracle {
		mode = "fallback"
	}
	apis, stop, err := startGateways(ctx, s, mode, bins, up.URLs())
	defer stop()
	if err != nil {
		return nil, err
	}
	load := routinge2e.Load{APIs: apis, Clients: s.ClientsOr(), Duration: s.Duration, Conversations: s.Conversations}
	if arm == armOracle {
		switch {
		case split != nil:
			load.Orderer = s.SplitOracle(split, 1)
		case s.Conversations > 0:
			load.Orderer = s.CacheOracle()
		default:
			load.Order = s.Oracle()
		}
	}
	outs := load.Run(ctx, clock, up)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, errors.New("no request was sent")
	}
	return outs, nil
}

// startGateways starts s's gateways in mode and, for a fleet, the collector
// they share; stop ends them all (call it even on an error).
func startGateways(ctx context.Context, s routinge2e.Scenario, mode string, bins routingBins, urls map[string]string) (apis []string, stop func(), err error) {
	var children []*child
	var removes []func()
	stop = func() {
		for _, c := range slices.Backward(children) {
			c.stop()
		}
		for _, r := range removes {
			r()
		}
	}
	n := s.Gateways()
	var addrs [][2]string
	for range n {
		api, admin, err := freeAddrPair()
		if err != nil {
			return nil, stop, err
		}
		addrs = append(addrs, [2]string{api, admin})
	}
	otlp := ""
	if n > 1 {
		if bins.otelcol == "" {
			return nil, stop, fmt.Errorf("scenario (%s) has %d gateways sharing a collector: give -otelcol (make otelcol)", s.Name, n)
		}
		grpc, httpAddr, err := freeAddrPair()
		if err != nil {
			return nil, stop, err
		}
		var admins []string
		for _, a := range addrs {
			admins = append(admins, a[1])
		}
		path, remove, err := writeConfig([]byte(routinge2e.CollectorConfig(grpc, httpAddr, admins)))
		if err != nil {
			return nil, stop, err
		}
		removes = append(removes, remove)
		col, err := startChild("collector", []string{bins.otelcol, "--config", "file:" + path}, childEnv())
		if err != nil {
			return nil, stop, err
		}
		children = append(children, col)
		if err := waitListening(ctx, col, httpAddr); err != nil {
			return nil, stop, err
		}
		otlp = "http://" + httpAddr
	}
	for i, a := range addrs {
		path, remove, err := writeConfig([]byte(s.FleetGatewayConfig(mode, a[0], a[1], urls, otlp)))
		if err != nil {
			return nil, stop, err
		}
		removes = append(removes, remove)
		env := childEnv()
		if otlp != "" {
			env = slices.Concat(env, routinge2e.ExportEnv, []string{fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES=service.instance.id=fleet-%d", i)})
		}
		gw, err := startChild(fmt.Sprintf("%s-%d", armGateway, i), []string{bins.gateway, "serve", "-config", path}, env)
		if err != nil {
			return nil, stop, err
		}
		children = append(children, gw)
		if err := waitReady(ctx, gw, "http://"+a[1]+"/readyz", http.StatusOK); err != nil {
			return nil, stop, err
		}
		apis = append(apis, a[0])
	}
	return apis, stop, nil
}

// waitListening waits until c accepts TCP connections on addr.
func waitListening(ctx context.Context, c *child, addr string) error {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if err := c.exited(); err != nil {
			return err
		}
		if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			conn.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not listening on %s within 15s; output:\n%s", c.name, addr, c.out.String())
}

// searchSplit is the split oracle's small search: the study's best split
// and every move of splitStep from it, one run each; the best mean wins.
// Its outcomes are the oracle's run.
func searchSplit(ctx context.Context, s routinge2e.Scenario, bins routingBins, logf func(string, ...any)) ([]routinge2e.Outcome, []float64, error) {
	var best []routinge2e.Outcome
	var bestW []float64
	var bestMean time.Duration
	for _, w := range append([][]float64{s.Split}, routinge2e.SplitMoves(s.Split, splitStep)...) {
		outs, err := runRoutingArm(ctx, s, armOracle, bins, w)
		if err != nil {
			return nil, nil, err
		}
		m := routinge2e.Summarize(outs, routinge2e.Window{}).Mean
		logf("  split %v: mean %s", w, msec(m))
		if best == nil || m < bestMean {
			best, bestW, bestMean = outs, w, m
		}
	}
	return best, bestW, nil
}
