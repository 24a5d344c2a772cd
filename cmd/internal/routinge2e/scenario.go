package routinge2e

import (
	"fmt"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The three targets of every scenario, declared in this order: named for
// how fast they normally are (log-normal TTFB, sigma 0.25, medians 20, 40
// and 80 ms). "fast" keeps its name while a scenario makes it slow.
const (
	Fast = "fast"
	Mid  = "mid"
	Slow = "slow"
)

// Model is the client-facing model every target serves.
const Model = "m"

// Clients is the number of closed-loop clients of the routing scenarios.
const Clients = 8

// Spread is sigma of ln(TTFB) of every target.
const Spread = 0.25

// hangTTFB is the TTFB median of a target that hangs: far beyond any
// first-byte timeout, so every attempt on it ends in one.
const hangTTFB = time.Hour

// Breaker settings of (d-breaker), and the threshold that keeps the
// breaker from ever opening in the scenarios without one.
const (
	BreakerFailures = 5
	BreakerCooldown = time.Second
	breakerNever    = 1_000_000
)

// Breaker is every provider's circuit_breaker in a scenario.
type Breaker struct {
	Failures int
	Cooldown time.Duration
}

// Scenario is one routing situation: three targets whose behaviour changes
// on a timeline that starts when the clients do.
type Scenario struct {
	// Name is short and unique ("a", "b", "c", "c2", "d", "d-breaker", "g",
	// "h", "i").
	Name string
	// Title says in a line what happens.
	Title string
	// Duration is how long the clients send.
	Duration time.Duration
	// Targets are the simulated providers in declaration order: Fast, Mid,
	// Slow. Their phases are timed from the moment the clients start.
	Targets []sim.Provider
	// FirstByte is every provider's timeout.first_byte. Zero: the gateway's
	// default.
	FirstByte time.Duration
	// Breaker is every provider's circuit breaker; zero: one whose threshold
	// is so high it never opens, so what is measured is the mode alone.
	Breaker Breaker
	// Changes are the moments the fastest target changes, for the
	// adaptation and recovery times.
	Changes []Change
	// Window, when To > 0, is the stretch the scenario is about (a slowdown,
	// a hang): its figures are reported on their own.
	Window Window
	// Revoked, when set, is the target whose key is revoked: every attempt
	// on it gets 401.
	Revoked string
	// Outage, when To > 0, is when every target is down: what counts is how
	// soon after its end a request is served again, and that none fails
	// after that.
	Outage Window
	// Hedged: the scenario is about hedging; every latency mode runs with
	// and without it (scenario_react.go).
	Hedged bool
	// Clients is how many closed-loop clients it has (0: Clients), Replicas
	// how many gateways they are spread over (0: one), sharing their spans
	// through a collector.
	Clients, Replicas int
	// Split, when set, makes the oracle a static split (fast, mid, slow
	// shares of the first picks): the providers queue, so no fixed order is
	// any good. It is where the oracle's search starts.
	Split []float64
	// Conversations, when positive, is how many conversations the requests
	// belong to; the oracle knows every provider's prompt cache.
	Conversations int
}

// Change is a moment from which another target is the best first pick.
type Change struct {
	At   time.Duration
	What string // "slowdown", "recovery", "hang", "hang ends"
	// Best is the target that should now lead: the oracle's first.
	Best string
}

// Window is [From, To) on the scenario's timeline.
type Window struct{ From, To time.Duration }

// Contains reports whether t is in the window.
func (w Window) Contains(t time.Duration) bool { return t >= w.From && t < w.To }

func (w Window) String() string { return fmt.Sprintf("%v–%v", w.From, w.To) }

// target is a provider with the scenarios' TTFB and unary answers that take
// the TTFB only (one chunk, no pause).
func target(name string, median time.Duration) sim.Provider {
	return sim.Provider{
		Name:   name,
		TTFB:   sim.Dist{Median: median, Spread: Spread},
		Stream: sim.Pace{Chunks: 1},
	}
}

func targets() []sim.Provider {
	return []sim.Provider{target(Fast, 20*time.Millisecond), target(Mid, 40*time.Millisecond), target(Slow, 80*time.Millisecond)}
}

// Stable is scenario (a): nothing changes.
func Stable(d time.Duration) Scenario {
	return Scenario{Name: "a", Title: "stable", Duration: d, Targets: targets()}
}

// Slowdown is scenario (b): the fastest becomes 10x slower in [from, to).
func Slowdown(from, to, d time.Duration) Scenario {
	ts := targets()
	slow := sim.Dist{Median: 200 * time.Millisecond, Spread: Spread}
	back := ts[0].TTFB
	ts[0].Phases = []sim.Phase{{After: from, TTFB: &slow}, {After: to, TTFB: &back}}
	return Scenario{
		Name: "b", Title: fmt.Sprintf("fast is 10x slower from %v to %v", from, to), Duration: d, Targets: ts,
		Changes: []Change{{At: from, What: "slowdown", Best: Mid}, {At: to, What: "recovery", Best: Fast}},
		Window:  Window{from, to},
	}
}

// Fault delays of scenarios (c) and (c2): a provider that refuses at once,
// and one that makes the caller wait 300 ms for its refusal.
const (
	QuickFaultDelay = 5 * time.Millisecond
	SlowFaultDelay  = 300 * time.Millisecond
)

// QuickFaults is scenario (c): the fastest fails 30% of its attempts with
// a 503 that comes after QuickFaultDelay.
func QuickFaults(d time.Duration) Scenario {
	s := failing(0.3, QuickFaultDelay, d)
	s.Name, s.Title = "c", fmt.Sprintf("fast fails 30%% with a quick 503 (after %v)", QuickFaultDelay)
	return s
}

// SlowFaults is scenario (c2): the fastest fails 30% of its attempts with
// a 503 that comes after SlowFaultDelay.
func SlowFaults(d time.Duration) Scenario {
	s := failing(0.3, SlowFaultDelay, d)
	s.Name, s.Title = "c2", fmt.Sprintf("fast fails 30%% with a 503 after %v", SlowFaultDelay)
	return s
}

func failing(rate float64, after, d time.Duration) Scenario {
	ts := targets()
	ts[0].Errors = sim.ErrorRate{Rate: rate, Status: 503, After: after}
	return Scenario{Duration: d, Targets: ts}
}

// Hang is scenario (d) and, with breaker, (d-breaker): the fastest hangs in
// [from, to); every provider's first-byte timeout is 200 ms.
func Hang(from, to, d time.Duration, breaker bool) Scenario {
	ts := targets()
	hang := sim.Dist{Median: hangTTFB}
	back := ts[0].TTFB
	ts[0].Phases = []sim.Phase{{After: from, TTFB: &hang}, {After: to, TTFB: &back}}
	s := Scenario{
		Name: "d", Title: fmt.Sprintf("fast hangs from %v to %v, 200 ms first-byte timeout, no breaker", from, to),
		Duration: d, Targets: ts, FirstByte: 200 * time.Millisecond,
		Changes: []Change{{At: from, What: "hang", Best: Mid}, {At: to, What: "hang ends", Best: Fast}},
		Window:  Window{from, to},
	}
	if breaker {
		s.Name, s.Breaker = "d-breaker", Breaker{BreakerFailures, BreakerCooldown}
		s.Title = fmt.Sprintf("fast hangs from %v to %v, 200 ms first-byte timeout, breaker %d failures / %v", from, to, BreakerFailures, BreakerCooldown)
	}
	return s
}

// Standard is the full-length set, in the order they are reported.
func Standard() []Scenario {
	return []Scenario{
		Stable(12 * time.Second),
		Slowdown(4*time.Second, 10*time.Second, 20*time.Second),
		QuickFaults(12 * time.Second),
		SlowFaults(12 * time.Second),
		Hang(2*time.Second, 8*time.Second, 12*time.Second, false),
		Hang(2*time.Second, 8*time.Second, 12*time.Second, true),
		RevokedKey(32 * time.Second),
		RateLimited(12 * time.Second),
		Outage(OutageFrom, OutageFrom+OutageLength, 12*time.Second),
	}
}

// GatewayConfig is the gateway's config for s in mode (an arm: a mode,
// with HedgeSuffix for hedging on): one openai provider per target at
// urls[name], declared Fast, Mid, Slow, telemetry in process only (no
// export).
func (s Scenario) GatewayConfig(mode, listen, admin string, urls map[string]string) string {
	return s.FleetGatewayConfig(mode, listen, admin, urls, "")
}

// FleetGatewayConfig is GatewayConfig for a gateway of a fleet: it exports
// its spans to the collector at otlp (http://host:port; "": none) and takes
// its peers' on its admin listener's /v1/traces.
func (s Scenario) FleetGatewayConfig(mode, listen, admin string, urls map[string]string, otlp string) string {
	var b strings.Builder
	base, hedged := BaseMode(mode)
	hedge := ""
	if hedged {
		hedge = fmt.Sprintf(", hedge: {enabled: true, after: %s, budget: %g, max: %d}", HedgeAfter, HedgeBudget, HedgeMax)
	}
	fmt.Fprintf(&b, "listen: %s\nadmin: {listen: %s}\nstrategy: {mode: %s%s}\nproviders:\n", listen, admin, base, hedge)
	breaker := s.Breaker
	if breaker.Failures == 0 {
		breaker = Breaker{breakerNever, BreakerCooldown}
	}
	timeout := ""
	if s.FirstByte > 0 {
		timeout = fmt.Sprintf(", timeout: {first_byte: %s}", s.FirstByte)
	}
	for _, t := range s.Targets {
		fmt.Fprintf(&b, "  %s: {kind: openai, base_url: %q, api_key: e2e-not-a-secret%s, circuit_breaker: {failures: %d, cooldown: %s}}\n",
			t.Name, urls[t.Name], timeout, breaker.Failures, breaker.Cooldown)
	}
	b.WriteString("targets:\n")
	for _, t := range s.Targets {
		fmt.Fprintf(&b, "  - {virtual_key: %s, model_map: {%s: %s-model}}\n", t.Name, Model, t.Name)
	}
	if otlp == "" {
		b.WriteString("telemetry: {otlp_endpoint: \"\"}\n")
	} else {
		fmt.Fprintf(&b, "telemetry: {otlp_endpoint: %q, ingest: {enabled: true}}\n", otlp)
	}
	return b.String()
}
