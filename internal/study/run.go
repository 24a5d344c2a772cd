package study

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// One run is one scenario under one mode: a discrete-event simulation of
// Clients closed-loop clients on a virtual clock. A request gets its route
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
	id int

	// the request
	route     *router.Route
	start     time.Duration
	selection string
	attempts  int
	faults    int
	skips     int
	firstPick int // target of attempt 1; -1 before it

	// the attempts in flight: one, or with hedging some racing
	racers []*racer
	gen    int // the request's number: events of an earlier one are stale
	hedges int // hedges started
	busy   bool
}

// racer is one simulated attempt in flight.
type racer struct {
	turn   router.Turn
	target int // the scenario's index of turn's target
	end    router.Result
	endAt  time.Duration
	over   bool // ended (or cancelled): its end event is stale
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
	planner   planner
	tracer    trace.Tracer
	clients   []*client
	res       *Result
	err       error
}

// runOne runs scenario s under mode (a registered mode, or Oracle).
func runOne(ctx context.Context, s *Scenario, mode string, seed uint64, duration time.Duration, deps Deps) (*Result, error) {
	r := &runner{s: s, mode: mode, duration: duration, clock: &clock{t: -WarmUp}}
	r.res = newResult(s, mode, duration)
	r.index = map[string]int{}
	for i, t := range s.Targets {
		r.providers = append(r.providers, newProvider(seed, i))
		r.index[t.Name] = i
	}
	if mode == Oracle {
		// The oracle knows what a breaker would learn, and teaches nothing.
		o := *s
		o.Breaker = nil
		gws, err := gatewaysOf(&o, "fallback", router.Options{Now: r.clock.Now})
		if err != nil {
			return nil, err
		}
		r.tracer = noop.NewTracerProvider().Tracer(telemetry.TracerName)
		r.planner = &oraclePlanner{s: s, gateways: gws, room: func(i int, t time.Duration) bool {
			return r.providers[i].room(s.Behave(i, t).Limit, t)
		}}
	} else {
		stats, consumer := deps.NewStats(r.clock.Now)
		sdk, shutdown, err := telemetry.Setup(ctx, telemetry.Options{
			ServiceName: "firstbyte-study",
			InstanceID:  "study",
			Aggregator:  consumer,
			Getenv:      func(string) string { return "" }, // no export, the default sampler
		})
		if err != nil {
			return nil, err
		}
		defer func() { _ = shutdown(context.WithoutCancel(ctx)) }()
		r.tracer = sdk.TracerProvider.Tracer(telemetry.TracerName)
		rnd := &lockedRand{r: rand.New(newSource(seed, streamRouter))}
		gws, err := gatewaysOf(s, mode, router.Options{Stats: stats, Rand: rnd, Now: r.clock.Now, TracerProvider: sdk.TracerProvider})
		if err != nil {
			return nil, err
		}
		r.planner = &gatewayPlanner{gateways: gws}
	}
	for i := range Clients {
		r.clients = append(r.clients, &client{id: i, firstPick: -1})
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
		default:
			r.hedge(c)
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
	route, selection, err := r.planner.plan(now)
	if err != nil {
		r.err = err
		return
	}
	*c = client{id: c.id, route: route, start: now, selection: selection, firstPick: -1, busy: true, gen: c.gen + 1}
	r.next(c)
}

// next starts the next attempt of c's route (its skips counted), with a
// hedge due after its delay when the route hedges; or ends the request
// when the route has no candidate left.
func (r *runner) next(c *client) {
	t, ok := c.route.Next()
	c.skips = len(c.route.Skipped())
	if !ok {
		r.requestEnded(c, false)
		return
	}
	r.begin(c, t)
	if d, ok := c.route.HedgeAfter(&t); ok {
		r.scheduleHedge(c, r.clock.t+d)
	}
}

// begin starts t's attempt: the provider draws how it ends, and when.
func (r *runner) begin(c *client, t router.Turn) {
	now := r.clock.t
	r.res.Admitted++
	c.attempts++
	target := r.index[t.Cand.Target]
	if c.attempts == 1 {
		c.firstPick = target
	}
	b := r.s.Behave(target, now)
	end, took := r.providers[target].answer(b, r.s.FirstByte, now, r.clock.Now())
	rc := &racer{turn: t, target: target, end: end, endAt: now + took}
	rc.turn.StartSpan(context.Background(), r.tracer, telemetry.OperationChat, ClientModel, trace.WithTimestamp(r.clock.Now()))
	c.racers = append(c.racers, rc)
	r.res.drew(target, now, end, took)
	r.scheduleEnd(c, rc)
}

// hedge starts a hedge beside c's newest attempt if none has its first
// byte yet, fewer than the most race, and the budget allows; another is
// due after the delay while more may race.
func (r *runner) hedge(c *client) {
	if len(c.racers) > c.route.HedgeMax() {
		return
	}
	last := c.racers[len(c.racers)-1]
	t, ok := c.route.TryHedge(&last.turn)
	c.skips = len(c.route.Skipped())
	if !ok {
		return
	}
	c.hedges++
	r.begin(c, t)
	if d, ok := c.route.HedgeAfter(&t); ok && len(c.racers) <= c.route.HedgeMax() {
		r.scheduleHedge(c, r.clock.t+d)
	}
}

// attemptEnded ends rc, one of c's attempts in flight, at the current
// instant (its span ends: the statistics learn from it now; its
// admission is resolved). A success wins the request: every other racer
// is cancelled now (hedge_lost). A failure lets the others race on; when
// none is left the request ends, or moves on, as the route says.
func (r *runner) attemptEnded(c *client, rc *racer) {
	rc.over = true
	c.racers = slices.DeleteFunc(c.racers, func(x *racer) bool { return x == rc })
	r.res.Resolved++
	done := c.route.End(&rc.turn, rc.end, trace.WithTimestamp(r.clock.Now()))
	won := rc.end.Outcome == telemetry.OutcomeSuccess
	if !won {
		c.faults++
	}
	if done || won {
		r.cancelRacers(c)
		if c.hedges > 0 {
			r.res.Hedged++
			if rc.turn.Hedged() {
				r.res.HedgesWon++
			}
		}
		r.requestEnded(c, won)
		return
	}
	if len(c.racers) == 0 {
		r.next(c)
	}
}

// cancelRacers ends every racer still in flight as hedge_lost, now.
func (r *runner) cancelRacers(c *client) {
	for _, o := range c.racers {
		o.over = true
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
	r.res.record(c, served, now-c.start)
	if now < r.duration {
		r.schedule(c.id, now)
	}
}
