package study

import (
	"fmt"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// How a run orders its requests: through the gateway's own Plan, built
// from an ordinary config, or the oracle's order.

// step is one candidate of a request's order: a target, and its router
// candidate (nil for the oracle, which has no breaker and emits no span).
type step struct {
	target int
	cand   *router.Candidate
}

// planner orders a request that starts at t.
type planner interface {
	plan(dst []step, t time.Duration) ([]step, string, error)
}

// gatewayPlanner is the product's ordering: Plan of the gateway in force,
// which changes when the scenario reloads the config.
type gatewayPlanner struct {
	gateways []*router.Gateway // in force from from[i] on
	from     []time.Duration
	index    map[string]int // target name -> index in the scenario
	buf      []*router.Candidate
}

func (p *gatewayPlanner) plan(dst []step, t time.Duration) ([]step, string, error) {
	g := p.gateways[0]
	for i, f := range p.from {
		if t >= f {
			g = p.gateways[i]
		}
	}
	order, selection, ok := g.Plan(p.buf[:0], ClientModel)
	if !ok {
		return dst, "", fmt.Errorf("no target serves %s", ClientModel)
	}
	p.buf = order
	for _, c := range order {
		dst = append(dst, step{target: p.index[c.Target], cand: c})
	}
	return dst, selection, nil
}

// oraclePlanner is the oracle's ordering.
type oraclePlanner struct {
	s   *Scenario
	buf []int
}

func (p *oraclePlanner) plan(dst []step, t time.Duration) ([]step, string, error) {
	p.buf, _ = oracleOrder(p.buf[:0], p.s, t)
	for _, i := range p.buf {
		dst = append(dst, step{target: i})
	}
	return dst, telemetry.SelectionOrder, nil
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
	fmt.Fprintf(&b, "strategy:\n  mode: %s\ntargets:\n", mode)
	for _, i := range targets {
		fmt.Fprintf(&b, "  - virtual_key: %s\n", s.Targets[i].Name)
	}
	cfg, err := config.Parse([]byte(b.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("scenario %s, mode %s: %w", s.Name, mode, err)
	}
	return cfg, nil // router.New validates it
}
