package study

import (
	"container/heap"
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// One run is one scenario under one mode: a discrete-event simulation of
// the scenario's closed-loop clients (spread over its gateway replicas) on
// a virtual clock. A request gets its route
// the moment it starts (router.Gateway.Route: the product's order, or the
// oracle's), then the run drives the router's own pipeline: each Turn the
// route hands out (admitted by its provider's breaker at the moment its
// attempt would start; a refusal is a skip) is a simulated attempt that
// ends, at its virtual end, in an attempt span the statistics source
// learns from before anything else happens at that instant (Route.End).
// The request ends when the route says it is done (the first success);
// when the route has no candidate left it is a failure. Its client then
// sends the next one at once.

// Oracle is the name the oracle runs under, next to the modes.
const Oracle = "oracle"

// client is one closed-loop client and its request in flight.
type client struct {
	id      int
	replica int // the gateway replica it sends to

	// the request
	route     *router.Route
	start     time.Duration
	conv      int           // its conversation; -1: none
	tokens    int           // its answer's length, its max_tokens (0: not simulated)
	ttfb      time.Duration // to the winning attempt's first byte; 0 until it
	selection string
	attempts  int
	faults    int
	skips     int
	firstPick int // target of attempt 1; -1 before it

	// the attempts in flight: one, or with hedging some racing, in the
	// router's own race (router.Race), which c drives (Attempts)
	race   *router.Race
	racers []*racer
	gen    int // the request's number: events of an earlier one are stale
	wake   int // the race's latest hedge wake-up: earlier ones are stale
	hedges int // hedges started
	busy   bool
	r      *runner
}

var _ router.Attempts = (*client)(nil)

// racer is one simulated attempt in flight.
type racer struct {
	turn   router.Turn
	target int // the scenario's index of turn's target
	end    router.Result
	endAt  time.Duration
	hold   hold // the provider's slot it holds
	over   bool // ended (or cancelled): its end event is stale
	// gen is how long a success streams its answer after its first byte;
	// streaming: its first byte is in, its end event is the last token.
	gen       time.Duration
	streaming bool
}

// replica is one gateway replica of a run (a run without replicas has
// one): how it orders requests, and the tracer its attempt spans start
// from.
type replica struct {
	planner planner
	tracer  trace.Tracer
}

// runner is one run's state. Everything in it is touched by one goroutine.
type runner struct {
	s         *Scenario
	mode      string
	duration  time.Duration
	clock     *clock
	queue     eventQueue
	seq       uint64
	providers []*provider
	index     map[string]int // target name -> index in the scenario
	replicas  []*replica
	clients   []*client
	requests  int // started: the next one's conversation is requests % Conversations
	res       *Result
	err       error
}

// runOne runs scenario s under mode (a registered mode, or Oracle).
func runOne(ctx context.Context, s *Scenario, mode string, seed uint64, duration time.Duration, deps Deps) (*Result, error) {
	if mode == Oracle && s.Oracle == OracleSplit {
		return searchSplit(ctx, s, seed, duration)
	}
	r := newRunner(s, mode, seed, duration)
	if mode == Oracle {
		if err := r.useOracle(); err != nil {
			return nil, err
		}
	} else {
		stop, err := r.useGateways(ctx, seed, deps)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	return r.run(ctx)
}

// newRunner is a run of s under mode with its providers, before any
// replica is set up.
func newRunner(s *Scenario, mode string, seed uint64, duration time.Duration) *runner {
	r := &runner{s: s, mode: mode, duration: duration, clock: &clock{t: -s.warmUp()}}
	r.res = newResult(s, mode, duration)
	r.index = map[string]int{}
	for i, t := range s.Targets {
		r.providers = append(r.providers, newProvider(seed, i, t))
		r.index[t.Name] = i
	}
	return r
}

// useOracle routes every replica's requests by the oracle's order, named
// to a gateway of its own that knows what a breaker would learn (none) and
// teaches nothing.
func (r *runner) useOracle() error {
	o := *r.s
	o.Breaker = nil
	gws, err := gatewaysOf(&o, "fallback", router.Options{Now: r.clock.Now})
	if err != nil {
		return err
	}
	p := &oraclePlanner{s: r.s, gateways: gws, know: knowledge{
		room: func(i int, t time.Duration) bool {
			return r.providers[i].room(r.s.Behave(i, t).Limit, t)
		},
		cached: func(i, conv int, t time.Duration) bool { return r.providers[i].cached(conv, t) },
	}}
	r.usePlanner(p)
	return nil
}

// usePlanner routes every replica's requests through p, spans going
// nowhere.
func (r *runner) usePlanner(p planner) {
	tracer := noop.NewTracerProvider().Tracer(telemetry.TracerName)
	for range r.s.replicas() {
		r.replicas = append(r.replicas, &replica{planner: p, tracer: tracer})
	}
}

// run runs the clients until the measured time is over and every request
// has ended.
func (r *runner) run(ctx context.Context) (*Result, error) {
	for i := range r.s.clients() {
		r.clients = append(r.clients, &client{id: i, replica: i % len(r.replicas), firstPick: -1, r: r})
		r.schedule(i, r.clock.t)
	}
	for n := 0; r.queue.Len() > 0 && r.err == nil; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := heap.Pop(&r.queue).(event)
		r.clock.t = e.at
		c := r.clients[e.client]
		switch {
		case e.gen == 0: // the client's next request
			r.startRequest(c)
		case e.gen != c.gen || !c.busy: // of a request that has ended
		case e.racer != nil:
			if !e.racer.over {
				r.attemptEnded(c, e.racer)
			}
		case e.wake == c.wake: // the race's hedge delay passed
			c.race.HedgeDue()
			c.skips = len(c.route.Skipped())
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	r.res.finish()
	return r.res, nil
}

// startRequest orders a new request of c and starts its first attempt.
func (r *runner) startRequest(c *client) {
	now := r.clock.t
	conv, tokens := -1, 0
	if n := r.s.Conversations; n > 0 {
		conv = r.requests % n
	}
	if n := len(r.s.Lengths); n > 0 {
		tokens = r.s.Lengths[r.requests%n]
	}
	r.requests++
	route, selection, err := r.replicas[c.replica].planner.plan(now, conv, tokens)
	if err != nil {
		r.err = err
		return
	}
	*c = client{id: c.id, replica: c.replica, route: route, start: now, conv: conv, tokens: tokens, selection: selection, firstPick: -1,
		busy: true, gen: c.gen + 1, wake: c.wake, r: r}
	r.next(c)
}

// next races the next attempt of c's route (its skips counted), with a
// hedge due after its delay when the route hedges; or ends the request
// when the route has no candidate left.
func (r *runner) next(c *client) {
	t, ok := c.route.Next()
	c.skips = len(c.route.Skipped())
	if !ok {
		r.requestEnded(c, false)
		return
	}
	c.wake++ // a wake-up of an earlier race is stale
	c.race = c.route.Race(t, c)
}

// Start starts t's simulated attempt: its provider draws how it ends, and
// when.
func (c *client) Start(t router.Turn) *router.Turn {
	r := c.r
	now := r.clock.t
	r.res.Admitted++
	c.attempts++
	if t.Hedged() {
		c.hedges++
	}
	target := r.index[t.Cand.Target]
	if c.attempts == 1 {
		c.firstPick = target
	}
	b := r.s.Behave(target, now)
	end, took, h := r.providers[target].answer(attempt{b: b, firstByte: r.s.FirstByte, t: now,
		now: r.clock.Now(), conv: c.conv})
	gen := stream(b, r.s.Lengths != nil, c.tokens, &end)
	rc := &racer{turn: t, target: target, end: end, endAt: now + took, hold: h, gen: gen}
	rc.turn.StartSpan(context.Background(), r.replicas[c.replica].tracer, telemetry.OperationChat, ClientModel,
		trace.WithTimestamp(r.clock.Now()))
	c.racers = append(c.racers, rc)
	r.res.drew(target, now, end, took)
	r.res.queued(now, h)
	r.scheduleEnd(c, rc)
	return &rc.turn
}

// Wake has the race's HedgeDue run after d, in place of an earlier wake.
func (c *client) Wake(d time.Duration) {
	c.wake++
	c.r.scheduleHedge(c, c.r.clock.t+d)
}

// attemptEnded ends rc, one of c's attempts in flight, at the current
// instant (its span ends: the statistics learn from it now; its
// admission is resolved), and does what c's race says: a success wins
// the request, every other racer cancelled now (hedge_lost); a failure
// lets the others race on; when none is left the request moves on to the
// route's next candidate.
func (r *runner) attemptEnded(c *client, rc *racer) {
	if r.firstByte(c, rc) {
		return // it streams on: its end is its last token
	}
	rc.over = true
	c.racers = slices.DeleteFunc(c.racers, func(x *racer) bool { return x == rc })
	r.res.Resolved++
	c.route.End(&rc.turn, rc.end, trace.WithTimestamp(r.clock.Now()))
	how := router.RacerAnswered
	switch rc.end.Outcome {
	case telemetry.OutcomeSuccess:
		r.providers[rc.target].saw(c.conv, r.clock.t)
	case telemetry.OutcomeFailover:
		how = router.RacerFailedOver
		c.faults++
	default:
		how = router.RacerFinal
		c.faults++
	}
	step := router.RaceFinish // a streamed answer's race was decided at its first byte
	if !rc.streaming {
		step = c.race.Ended(&rc.turn, how)
	}
	switch step {
	case router.RaceFinish:
		if !rc.streaming {
			r.cancelRacers(c)
		}
		c.race.Served()
		if c.hedges > 0 {
			r.res.Hedged++
			if rc.turn.Hedged() {
				r.res.HedgesWon++
			}
		}
		r.requestEnded(c, how == router.RacerAnswered)
	case router.RaceFailed:
		r.next(c)
	}
}

// cancelRacers ends every racer the race's winner beat as hedge_lost, now.
func (r *runner) cancelRacers(c *client) {
	for _, t := range c.race.Others() {
		i := slices.IndexFunc(c.racers, func(x *racer) bool { return &x.turn == t })
		o := c.racers[i]
		o.over = true
		r.providers[o.target].slots.release(o.hold, r.clock.t)
		r.res.Resolved++
		lost := router.Result{ErrorType: fault.ErrorHedgeLost, Outcome: telemetry.OutcomeHedgeLost}
		c.route.End(&o.turn, lost, trace.WithTimestamp(r.clock.Now()))
		r.res.Lost++
	}
	c.racers = nil
}

// requestEnded records c's request and, within the measured time, sends
// its next one at once.
func (r *runner) requestEnded(c *client, served bool) {
	now := r.clock.t
	c.busy = false
	if !served && r.someRoom(now) {
		r.res.FailedWithRoom++
	}
	ttfb := now - c.start
	if c.ttfb > 0 {
		ttfb = c.ttfb
	}
	r.res.record(c, served, ttfb, now-c.start)
	if now < r.duration {
		r.schedule(c.id, now)
	}
}

// someRoom reports whether some target would serve an attempt at t at
// once: one without a limit, or with a free slot.
func (r *runner) someRoom(t time.Duration) bool {
	for i, p := range r.providers {
		if r.s.active(i, t) && p.slots.room(t) {
			return true
		}
	}
	return false
}
