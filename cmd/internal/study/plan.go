package study

import (
	"fmt"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// How a run routes its requests: through the gateway's own Route, built
// from an ordinary config, or through the oracle's order on a gateway of
// its own.

// planner gives a request that starts at t, of conversation conv (-1:
// none), asking for at most tokens output tokens (0: no limit), its route,
// and the selection the run records for it.
type planner interface {
	plan(t time.Duration, conv, tokens int) (*router.Route, string, error)
}

// gateways are the gateways of a run, one per config it has: the
// scenario's reload changes the targets from its instant on.
type gateways struct {
	g    []*router.Gateway // in force from from[i] on
	from []time.Duration
}

// gatewaysOf builds the gateways of s under mode, with o.
func gatewaysOf(s *Scenario, mode string, o router.Options) (gateways, error) {
	var gws gateways
	configs := [][]int{activeTargets(s, 0)}
	gws.from = []time.Duration{-s.warmUp()}
	if at := s.reload(); at > 0 {
		configs[0] = activeTargets(s, at-1)
		configs = append(configs, activeTargets(s, at))
		gws.from = append(gws.from, at)
	}
	for _, targets := range configs {
		cfg, err := gatewayConfig(s, mode, targets)
		if err != nil {
			return gws, err
		}
		g, err := router.New(cfg, o)
		if err != nil {
			return gws, fmt.Errorf("scenario %s, mode %s: %w", s.Name, mode, err)
		}
		gws.g = append(gws.g, g)
	}
	return gws, nil
}

// at is the gateway in force at t.
func (gws gateways) at(t time.Duration) *router.Gateway {
	g := gws.g[0]
	for i, f := range gws.from {
		if t >= f {
			g = gws.g[i]
		}
	}
	return g
}

// gatewayPlanner is the product's ordering: Route of the gateway in force,
// told the request's prompt prefix: its conversation's.
type gatewayPlanner struct{ gateways gateways }

func (p *gatewayPlanner) plan(t time.Duration, conv, tokens int) (*router.Route, string, error) {
	route, _, ok := p.gateways.at(t).Route(ClientModel, router.RouteOptions{Prefix: prefixOf(conv), MaxTokens: tokens})
	if !ok {
		return nil, "", fmt.Errorf("no target serves %s", ClientModel)
	}
	return route, route.Selection(), nil
}

// prefixOf is conversation conv's prompt prefix (-1: none), as a client
// names it to the gateway: a fixed key, cached for CacheTTL.
func prefixOf(conv int) affinity.Prefix {
	if conv < 0 {
		return affinity.Prefix{}
	}
	return affinity.Prefix{Key: uint64(conv) + 1, TTL: CacheTTL}
}

// oraclePlanner is the oracle's ordering, named to a gateway of the
// targets in force with no circuit breaker.
type oraclePlanner struct {
	s        *Scenario
	gateways gateways
	know     knowledge
	buf      []int
	names    []string
}

func (p *oraclePlanner) plan(t time.Duration, conv, tokens int) (*router.Route, string, error) {
	k := p.know.at(conv)
	k.tokens = tokens
	p.buf, _ = oracleOrderAt(p.buf[:0], p.s, t, k)
	p.names = p.names[:0]
	for _, i := range p.buf {
		p.names = append(p.names, p.s.Targets[i].Name)
	}
	route, unknown, ok := p.gateways.at(t).Route(ClientModel, router.RouteOptions{Names: p.names})
	if !ok || unknown != "" {
		return nil, "", fmt.Errorf("oracle: no route through %v at %v", p.names, t)
	}
	return route, telemetry.SelectionOrder, nil
}

// activeTargets lists the targets in the config at t.
func activeTargets(s *Scenario, t time.Duration) []int {
	var out []int
	for i := range s.Targets {
		if s.active(i, t) {
			out = append(out, i)
		}
	}
	return out
}

// targetPrice is a target's rate card in the study (input + output USD per
// million tokens): inversely proportional to its normal median, 1.0 at 40 ms.
func targetPrice(t Target) float64 {
	return float64(40*time.Millisecond) / float64(t.Median)
}

// gatewayConfig is the gateway config of a run, in the YAML a user would
// write: one provider per target (its base_url is never called; it only
// names server.address on spans) serving ClientModel, the scenario's
// first-byte timeout and breaker, the mode.
func gatewayConfig(s *Scenario, mode string, targets []int) (*config.Config, error) {
	breaker := Breaker{Failures: noBreaker, Cooldown: time.Second}
	if s.Breaker != nil {
		breaker = *s.Breaker
	}
	var b strings.Builder
	b.WriteString("providers:\n")
	for _, i := range targets {
		name := s.Targets[i].Name
		fmt.Fprintf(&b, "  %s:\n", name)
		fmt.Fprintf(&b, "    base_url: http://%s.study.invalid/v1\n", name)
		fmt.Fprintf(&b, "    models: [%s]\n", ClientModel)
		fmt.Fprintf(&b, "    timeout: {first_byte: %s}\n", s.FirstByte)
		fmt.Fprintf(&b, "    circuit_breaker: {failures: %d, cooldown: %s}\n", breaker.Failures, breaker.Cooldown)
		// Faster costs more, as it usually does: cost-optimized then has a
		// real trade to make (it picks the slowest, cheapest target).
		half := targetPrice(s.Targets[i]) / 2
		fmt.Fprintf(&b, "    pricing: {%s: {input: %g, output: %g}}\n", ClientModel, half, half)
	}
	base, hedged := baseMode(mode)
	fmt.Fprintf(&b, "strategy:\n  mode: %s\n", base)
	if hedged {
		fmt.Fprintf(&b, "  hedge: {enabled: true, after: %s, budget: %g, max: %d}\n", HedgeAfter, HedgeBudget, HedgeMax)
	}
	b.WriteString("targets:\n")
	for _, i := range targets {
		fmt.Fprintf(&b, "  - virtual_key: %s\n", s.Targets[i].Name)
	}
	cfg, err := config.Parse([]byte(b.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("scenario %s, mode %s: %w", s.Name, mode, err)
	}
	return cfg, nil // router.New validates it
}
