package study

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// One run is one scenario under one mode: a discrete-event simulation of
// Clients closed-loop clients on a virtual clock. A request is ordered the
// moment it starts (Plan), then its candidates are tried in that order, each
// admitted by its provider's breaker at the moment its attempt would start
// (a refusal is a skip), each attempt ending, at its virtual end, in an
// attempt span the statistics source learns from before anything else
// happens at that instant. The request ends at the first success; when
// every candidate failed or was skipped it is a failure. Its client then
// sends the next one at once.

// Oracle is the name the oracle runs under, next to the modes.
const Oracle = "oracle"

// client is one closed-loop client and its request in flight.
type client struct {
	id int

	// the request
	order     []step // its own backing array: the order outlives the event
	start     time.Duration
	selection string
	pos, try  int // candidate being tried, and its try
	attempts  int
	faults    int
	skips     int
	firstPick int // target of attempt 1; -1 before it

	// the attempt in flight
	inFlight bool
	adm      router.Admission
	span     trace.Span
	end      router.AttemptEnd
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
	for i := range s.Targets {
		r.providers = append(r.providers, newProvider(seed, i))
	}
	if mode == Oracle {
		r.planner = &oraclePlanner{s: s}
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
		p := &gatewayPlanner{index: map[string]int{}}
		for i, t := range s.Targets {
			p.index[t.Name] = i
		}
		configs := [][]int{activeTargets(s, 0)}
		p.from = []time.Duration{-WarmUp}
		if at := s.reload(); at > 0 {
			configs[0] = activeTargets(s, at-1)
			configs = append(configs, activeTargets(s, at))
			p.from = append(p.from, at)
		}
		for _, targets := range configs {
			cfg, err := gatewayConfig(s, mode, targets)
			if err != nil {
				return nil, err
			}
			g, err := router.New(cfg, router.Options{Stats: stats, Rand: rnd, Now: r.clock.Now, TracerProvider: sdk.TracerProvider})
			if err != nil {
				return nil, fmt.Errorf("scenario %s, mode %s: %w", s.Name, mode, err)
			}
			p.gateways = append(p.gateways, g)
		}
		r.planner = p
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
		if c.inFlight {
			r.attemptEnded(c)
		} else {
			r.startRequest(c)
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
	order, selection, err := r.planner.plan(c.order[:0], now)
	if err != nil {
		r.err = err
		return
	}
	*c = client{id: c.id, order: order, start: now, selection: selection, firstPick: -1}
	r.next(c)
}

// next starts the attempt of the current candidate, passing over those
// whose breaker refuses (skips), or ends the request when none is left.
func (r *runner) next(c *client) {
	now := r.clock.t
	for c.pos < len(c.order) {
		st := c.order[c.pos]
		if st.cand != nil {
			adm, ok := st.cand.Admit()
			if !ok {
				if c.try == 0 {
					c.skips++
				}
				c.pos, c.try = c.pos+1, 0
				continue
			}
			c.adm = adm
			r.res.Admitted++
		}
		c.attempts++
		if c.attempts == 1 {
			c.firstPick = st.target
		}
		b := r.s.Behave(st.target, now)
		end, took := r.providers[st.target].answer(b, r.s.FirstByte)
		c.end, c.inFlight = end, true
		if st.cand != nil {
			selection := c.selection
			if c.attempts > 1 {
				selection = telemetry.SelectionFailover
			}
			_, c.span = r.tracer.Start(context.Background(), st.cand.SpanName(telemetry.OperationChat),
				trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(r.clock.Now()),
				trace.WithAttributes(st.cand.AttemptAttributes(telemetry.OperationChat, ClientModel, c.attempts, selection)...))
		}
		r.res.drew(st.target, now, end, took)
		r.schedule(c.id, now+took)
		return
	}
	r.requestEnded(c, false)
}

// attemptEnded ends c's attempt in flight at the current instant: its span
// (the statistics learn from it now) and its admission; then the request
// ends on a success or moves on.
func (r *runner) attemptEnded(c *client) {
	c.inFlight = false
	st := c.order[c.pos]
	if st.cand != nil {
		c.adm.Resolve(c.end)
		r.res.Resolved++
		c.end.EndSpan(c.span, r.clock.Now())
		c.span = nil
	}
	if c.end.Outcome == telemetry.OutcomeSuccess {
		r.requestEnded(c, true)
		return
	}
	c.faults++
	c.try++
	if c.try >= r.tries(st) {
		c.pos, c.try = c.pos+1, 0
	}
	r.next(c)
}

// tries is how many tries a candidate gets (1 + retry.attempts).
func (r *runner) tries(st step) int {
	if st.cand != nil {
		return st.cand.Tries
	}
	return 1
}

// requestEnded records c's request and, within the measured time, sends
// its next one at once.
func (r *runner) requestEnded(c *client, served bool) {
	now := r.clock.t
	r.res.record(c, served, now-c.start)
	if now < r.duration {
		r.schedule(c.id, now)
	}
}
