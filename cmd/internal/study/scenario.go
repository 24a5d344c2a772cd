package study

import (
	"fmt"
	"math"
	"time"
)

// The targets every scenario starts from: log-normal times to first byte
// (sigma Sigma) with medians 40, 80 and 20 ms, declared in that order so
// that neither the declaration order nor a tie favours the fastest.
const (
	// Sigma is the spread of every target's log-normal latency.
	Sigma = 0.25
	// Clients is how many closed-loop clients send requests where a
	// scenario does not say: each sends its next request the moment its
	// previous one ends.
	Clients = 8
	// WarmUp runs before the measured time, in the scenario's first phase,
	// so that no mode is measured while it is still cold.
	WarmUp = 2 * time.Second
	// DefaultDuration is the measured time of a scenario.
	DefaultDuration = 20 * time.Second
	// Bucket is the resolution of the first-pick timelines, and so of the
	// adaptation and recovery times.
	Bucket = 250 * time.Millisecond
	// ClientModel is the model every request asks for.
	ClientModel = "study-model"
	// DefaultFirstByte is the first-byte timeout where a scenario does not
	// set one: the product's default.
	DefaultFirstByte = 30 * time.Second
	// QuickFault and SlowFault are how long the 503 answers of (c) and (c2)
	// take.
	QuickFault = 5 * time.Millisecond
	SlowFault  = 300 * time.Millisecond
	// HangFirstByte is the first-byte timeout of (d): it cuts a hung attempt.
	HangFirstByte = 200 * time.Millisecond
)

// BreakerSettings are the circuit breaker of (d-breaker); every other
// scenario runs with the breaker out of the way (a failure threshold no run
// reaches), so what is measured there is the mode alone.
var BreakerSettings = Breaker{Failures: 5, Cooldown: time.Second}

// noBreaker is a failure threshold no run reaches.
const noBreaker = 1_000_000_000

// Breaker is a provider's circuit_breaker setting.
type Breaker struct {
	Failures int
	Cooldown time.Duration
}

// Target is one upstream of a scenario. Its provider and virtual key are
// both Name.
type Target struct {
	Name   string
	Median time.Duration // of its latency while it behaves normally
	// AddedAt is when the target joins the config (a reload); zero: from
	// the start.
	AddedAt time.Duration
	// Slots is how many attempts the provider serves at once; the rest
	// wait for a slot, first come first served, and the wait is part of
	// their time to first byte. Zero: no limit.
	Slots int
}

// Behaviour is how a target answers an attempt that starts at some time.
type Behaviour struct {
	Median     time.Duration // of the log-normal latency of a success (sigma Sigma) ...
	Spread     float64       // ... or this sigma, when set
	FaultRate  float64       // share of attempts that fail with a 503 ...
	FaultAfter time.Duration // ... after this long
	Hang       bool          // never answers: the first-byte timeout cuts the attempt
	// Status, when set, is what every attempt gets, after QuickFault: 401,
	// the provider refusing the credential.
	Status int
	// SpikeRate, when set, is the share of successes that take SpikeFactor
	// times their draw: a slow moment no ordering foresees.
	SpikeRate   float64
	SpikeFactor float64
	// Limit, when set, is how many attempts a second the target takes
	// (counted afresh every whole second); beyond it an attempt gets 429
	// with a Retry-After of RetryAfter, after QuickFault.
	Limit      int
	RetryAfter time.Duration
	// Rate is the output tokens per second of a success after its first
	// byte (zero: ShortAnswerRate); stream.go.
	Rate float64
}

// ChangeKind says what a change asks of the modes.
type ChangeKind string

const (
	// Adaptation: a new target is now the best; the time until it gets
	// more than half of the first picks is the adaptation time.
	Adaptation ChangeKind = "adaptation"
	// Recovery: a target that was bad is good again; the time until it
	// gets more than half of the first picks is the recovery time.
	Recovery ChangeKind = "recovery"
)

// Change is a moment when the best first choice changes.
type Change struct {
	At     time.Duration
	Kind   ChangeKind
	Leader int // index in Scenario.Targets of the new best first choice
}

// Window is an interval of measured time with a figure of its own (the
// mean time to first byte while a target hangs).
type Window struct {
	Name     string
	From, To time.Duration
}

// Scenario is one situation the modes are driven through. Times are from
// the start of the measured time; the warm-up runs before it.
type Scenario struct {
	Name  string // as -scenarios names it
	Title string
	About string // what happens, for the report
	// Targets in declaration order.
	Targets []Target
	// FirstByte is every provider's first-byte timeout.
	FirstByte time.Duration
	// Breaker is every provider's circuit breaker; nil: out of the way.
	Breaker *Breaker
	// Behave is target i's behaviour for an attempt starting at t.
	Behave func(i int, t time.Duration) Behaviour
	// Changes are when the best first choice changes, in time order.
	Changes []Change
	// Window, when set, gets its own mean and ratio to the oracle.
	Window *Window
	// Outage, when set, is when every target is down: the run measures how
	// soon after its end a request is served again, and the share of
	// requests served is not held to the goal across it.
	Outage *Window
	// Clients is how many closed-loop clients send requests (zero:
	// Clients), spread evenly over Replicas gateway replicas (zero: one),
	// each with its own tracker that learns from every replica's spans.
	Clients, Replicas int
	// Conversations, when set, is how many conversations the requests
	// belong to, in turn: each names its prompt prefix to the gateway, and
	// a provider that answered one within CacheTTL answers it in
	// CacheSpeedup of the time.
	Conversations int
	// Oracle is the scenario's yardstick (zero: OracleOrder).
	Oracle OracleKind
	// Lengths, when set, are the answers' lengths in output tokens, each
	// request the next in turn, its max_tokens saying which; nil: every
	// answer is one token whose generation is not simulated (stream.go).
	Lengths []int
	// WarmUp is how long the scenario runs before its measured time (zero:
	// WarmUp): long enough that its slowest answers have taught the modes.
	WarmUp time.Duration
}

// warmUp is how long s runs before its measured time.
func (s *Scenario) warmUp() time.Duration {
	if s.WarmUp > 0 {
		return s.WarmUp
	}
	return WarmUp
}

// OracleKind says what a scenario's oracle is.
type OracleKind int

const (
	// OracleOrder is the best fixed order knowing every target's
	// behaviour at each request's start (and, with Conversations, which
	// providers hold its prefix): oracle.go.
	OracleOrder OracleKind = iota
	// OracleSplit is the best static split of the load: each request goes
	// to target i with probability w_i, the weights searched: split.go.
	// For providers whose speed depends on the load they are sent, where
	// no fixed order is any good.
	OracleSplit
)

// clients is how many closed-loop clients s has.
func (s *Scenario) clients() int {
	if s.Clients > 0 {
		return s.Clients
	}
	return Clients
}

// hasSlots reports whether a target of s serves a limited number of
// attempts at once.
func (s *Scenario) hasSlots() bool {
	for _, t := range s.Targets {
		if t.Slots > 0 {
			return true
		}
	}
	return false
}

// replicas is how many gateway replicas s has.
func (s *Scenario) replicas() int { return max(s.Replicas, 1) }

// Index of the targets every scenario shares, in declaration order.
const (
	t40 = iota
	t80
	t20
	t10 // only in (e)
)

func baseTargets() []Target {
	return []Target{
		{Name: "t40", Median: 40 * time.Millisecond},
		{Name: "t80", Median: 80 * time.Millisecond},
		{Name: "t20", Median: 20 * time.Millisecond},
	}
}

// Added-target and drift settings of (e) and (f).
const (
	// AddAt is when (e) adds a fourth target, t10, with median AddedMedian.
	AddAt       = 5 * time.Second
	AddedMedian = 10 * time.Millisecond
	// DriftPerSecond is how much t20's median grows per second of measured
	// time in (f): it crosses t40's 40 ms at DriftCross.
	DriftPerSecond = 2 * time.Millisecond
	DriftCross     = 10 * time.Second
)

// Phase times of (b), (d) and (i).
const (
	SlowFrom, SlowTo     = 4 * time.Second, 10 * time.Second
	HangFrom, HangTo     = 2 * time.Second, 8 * time.Second
	OutageFrom, OutageTo = 4 * time.Second, 7 * time.Second
)

// TailSigma is the spread of every target in (tail): a heavy tail, the
// p99 eight times the median.
const TailSigma = 0.9

// Spikes of (tail-spikes): one answer in twenty takes ten times as long.
const (
	SpikeRate   = 0.05
	SpikeFactor = 10.0
)

// Settings of (g), (h) and (i).
const (
	// RateLimit is how many attempts a second t20 takes in (h), and
	// RetryAfter what its 429 says beyond.
	RateLimit  = 40
	RetryAfter = 2 * time.Second
	// DisableProbeEvery is the product's first probe interval of a disabled
	// target: (g) holds the attempts on the revoked key to one per interval.
	DisableProbeEvery = 30 * time.Second
)

// OutageBreaker is the circuit breaker of (i): the product's default, so
// that only the blackout rule stands between an outage's end and the
// next answer (the circuits would stay open for their 30 s cooldown).
var OutageBreaker = Breaker{Failures: 5, Cooldown: 30 * time.Second}

// normal is a target behaving as declared.
func normal(targets []Target, i int) Behaviour {
	return Behaviour{Median: targets[i].Median}
}

// Scenarios returns every scenario, in report order.
func Scenarios() []*Scenario {
	hang := func(name, title string, breaker *Breaker) *Scenario {
		ts := baseTargets()
		about := fmt.Sprintf("t20 hangs from %s to %s: every attempt on it waits for the %s first-byte timeout "+
			"(error.type timeout) and fails over.", secs(HangFrom), secs(HangTo), ms(HangFirstByte))
		if breaker != nil {
			about += fmt.Sprintf(" Circuit breaker on every provider: %d consecutive faults open it for %s, then one "+
				"half-open probe from real traffic at a time.", breaker.Failures, secs(breaker.Cooldown))
		} else {
			about += " No circuit breaker."
		}
		return &Scenario{
			Name: name, Title: title, About: about, Targets: ts, FirstByte: HangFirstByte, Breaker: breaker,
			Behave: func(i int, t time.Duration) Behaviour {
				b := normal(ts, i)
				b.Hang = i == t20 && t >= HangFrom && t < HangTo
				return b
			},
			Changes: []Change{{At: HangFrom, Kind: Adaptation, Leader: t40}, {At: HangTo, Kind: Recovery, Leader: t20}},
			Window:  &Window{Name: "while t20 hangs", From: HangFrom, To: HangTo},
		}
	}
	faults := func(name, title string, after time.Duration) *Scenario {
		ts := baseTargets()
		return &Scenario{
			Name: name, Title: title, Targets: ts, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("t20 answers 30 %% of its attempts, throughout, with a 503 after %s; "+
				"its successes keep their 20 ms median.", ms(after)),
			Behave: func(i int, _ time.Duration) Behaviour {
				b := normal(ts, i)
				if i == t20 {
					b.FaultRate, b.FaultAfter = 0.3, after
				}
				return b
			},
		}
	}
	stable := baseTargets()
	slow := baseTargets()
	added := append(baseTargets(), Target{Name: "t10", Median: AddedMedian, AddedAt: AddAt})
	drift := baseTargets()
	out := []*Scenario{
		{
			Name: "a", Title: "stable", Targets: stable, FirstByte: DefaultFirstByte,
			About:  "Nothing changes: the three targets keep their distributions.",
			Behave: func(i int, _ time.Duration) Behaviour { return normal(stable, i) },
		},
		{
			Name: "b", Title: "the fastest slows down 10x, then recovers", Targets: slow, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("t20's median is 200 ms (10x) from %s to %s, then 20 ms again.", secs(SlowFrom), secs(SlowTo)),
			Behave: func(i int, t time.Duration) Behaviour {
				b := normal(slow, i)
				if i == t20 && t >= SlowFrom && t < SlowTo {
					b.Median *= 10
				}
				return b
			},
			Changes: []Change{{At: SlowFrom, Kind: Adaptation, Leader: t40}, {At: SlowTo, Kind: Recovery, Leader: t20}},
		},
		faults("c", "the fastest fails 30 % with a quick 503", QuickFault),
		faults("c2", "the fastest fails 30 % with a slow 503", SlowFault),
		hang("d", "the fastest hangs, no circuit breaker", nil),
		hang("d-breaker", "the fastest hangs, with the circuit breaker", &BreakerSettings),
		{
			Name: "e", Title: "a faster target is added", Targets: added, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("At %s the config is reloaded with a fourth target, t10 (median %s), declared last; "+
				"the tracker keeps the other targets' samples, as a reload does.", secs(AddAt), ms(AddedMedian)),
			Behave:  func(i int, _ time.Duration) Behaviour { return normal(added, i) },
			Changes: []Change{{At: AddAt, Kind: Adaptation, Leader: t10}},
		},
		{
			Name: "f", Title: "the fastest drifts slower", Targets: drift, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("From the start of the measured time t20's median grows by %s per second "+
				"(20 ms to 60 ms over 20 s), crossing t40's 40 ms at %s.", ms(DriftPerSecond), secs(DriftCross)),
			Behave: func(i int, t time.Duration) Behaviour {
				b := normal(drift, i)
				if i == t20 && t > 0 {
					b.Median += time.Duration(float64(DriftPerSecond) * t.Seconds())
				}
				return b
			},
			Changes: []Change{{At: DriftCross, Kind: Adaptation, Leader: t40}},
		},
	}
	out = append(out, failingScenarios()...)
	return append(out, capacityScenario(), fleetScenario(), cacheScenario(), throughputScenario())
}

// failingScenarios are the scenarios of providers that fail as real ones
// do, (g) to (i), and of slow moments, (tail) and (tail-spikes).
func failingScenarios() []*Scenario {
	revoked, limited, outage, tail, spikes := baseTargets(), baseTargets(), baseTargets(), baseTargets(), baseTargets()
	return []*Scenario{
		{
			Name: "g", Title: "a revoked key", Targets: revoked, FirstByte: DefaultFirstByte,
			About: "t20 answers 401 to every attempt, throughout (its key was revoked): the gateway disables it " +
				"and probes it with one request every 30 s (doubling), so its clients never see the 401.",
			Behave: func(i int, _ time.Duration) Behaviour {
				b := normal(revoked, i)
				if i == t20 {
					b.Status = 401
				}
				return b
			},
		},
		{
			Name: "h", Title: "a rate-limited fastest", Targets: limited, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("t20 takes %d attempts a second (counted afresh each second); beyond, it answers 429 with "+
				"Retry-After: %g. Like a real provider, each success says what remains (x-ratelimit-remaining-requests) "+
				"and when it resets: the gateway stops sending at 0, before it is refused. The oracle knows the limit: "+
				"t20 first while it has room.", RateLimit, RetryAfter.Seconds()),
			Behave: func(i int, _ time.Duration) Behaviour {
				b := normal(limited, i)
				if i == t20 {
					b.Limit, b.RetryAfter = RateLimit, RetryAfter
				}
				return b
			},
		},
		{
			Name: "i", Title: "an outage of every target", Targets: outage, FirstByte: DefaultFirstByte, Breaker: &OutageBreaker,
			About: fmt.Sprintf("Every target answers 503 at once from %s to %s. Circuit breaker on every provider: %d "+
				"consecutive faults open it for %s, so every circuit is open when the outage ends.",
				secs(OutageFrom), secs(OutageTo), OutageBreaker.Failures, secs(OutageBreaker.Cooldown)),
			Behave: func(i int, t time.Duration) Behaviour {
				b := normal(outage, i)
				if t >= OutageFrom && t < OutageTo {
					b.FaultRate, b.FaultAfter = 1, QuickFault
				}
				return b
			},
			Outage: &Window{Name: "outage", From: OutageFrom, To: OutageTo},
		},
		{
			Name: "tail", Title: "a heavy tail", Targets: tail, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("Every target's time to first byte has a heavy tail: log-normal with sigma %g "+
				"(medians 20, 40 and 80 ms; t20's p99 is %s). No ordering can shorten a slow moment of the "+
				"fastest; a hedge can.", TailSigma, ms(time.Duration(float64(20*time.Millisecond)*math.Exp(TailSigma*2.326)).Round(time.Millisecond))),
			Behave: func(i int, _ time.Duration) Behaviour {
				b := normal(tail, i)
				b.Spread = TailSigma
				return b
			},
		},
		{
			Name: "tail-spikes", Title: "slow moments", Targets: spikes, FirstByte: DefaultFirstByte,
			About: fmt.Sprintf("Every target's answers keep their sigma %g, but %g %% of them take %gx as long "+
				"(independently, on every target): the tail of a provider having slow moments.", Sigma, SpikeRate*100, SpikeFactor),
			Behave: func(i int, _ time.Duration) Behaviour {
				b := normal(spikes, i)
				b.SpikeRate, b.SpikeFactor = SpikeRate, SpikeFactor
				return b
			},
		},
	}
}

// ScenarioNames lists the scenarios' names in report order.
func ScenarioNames() []string {
	var names []string
	for _, s := range Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

// active reports whether target i is in the config at t.
func (s *Scenario) active(i int, t time.Duration) bool {
	return s.Targets[i].AddedAt == 0 || t >= s.Targets[i].AddedAt
}

// reload is when the config changes (a target is added), or 0 for none.
func (s *Scenario) reload() time.Duration {
	for _, t := range s.Targets {
		if t.AddedAt > 0 {
			return t.AddedAt
		}
	}
	return 0
}

func secs(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%g ms", float64(d)/float64(time.Millisecond)) }
