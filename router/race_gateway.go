package router

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The gateway's driver of a Race (race.go): each racer is a real attempt
// in a goroutine of its own; a cancelled one has its upstream connection
// closed, its slot freed and its span ended as hedge_lost before a byte of
// the winner is written. The race's result (won, lost) is recorded only
// when a racer's answer goes to a client still there.

// errHedgeLost ends a racer that another beat to a first byte.
var errHedgeLost = errors.New("another attempt of the request answered first")

// racer is one attempt in a race.
type racer struct {
	t     Turn
	lim   *upstream.Limiter
	a     *attempt
	ready bool // reach found something for the client
	panic any  // a panic in reach, re-raised on the handler's goroutine
}

// gatewayRacers runs a race's attempts for c: the Attempts of the gateway.
type gatewayRacers struct {
	g       *Gateway
	ctx     context.Context
	c       *call
	lim     *upstream.Limiter // the first racer's slot, already held
	first   bool              // the first racer has started
	racers  []*racer          // every racer started, by the race's order
	results chan *racer
	timer   hedgeTimer // nil until the race asks for a hedge
}

var _ Attempts = (*gatewayRacers)(nil)

// Start starts t's attempt in a goroutine of its own: the first with the
// slot the pipeline acquired for it, a hedge only if its provider has a
// slot free now (else it is skipped, queue_full).
func (gr *gatewayRacers) Start(t Turn) *Turn {
	lim := gr.lim
	if gr.first {
		lim = t.Cand.Upstream.Limiter
		if lim != nil && !lim.TryAcquire() {
			gr.c.route.Skip(&t, SkipQueueFull)
			return nil
		}
	}
	gr.first = true
	g, c := gr.g, gr.c
	c.tried(t.Cand.Target)
	r := &racer{t: t, lim: lim}
	actx := r.t.StartSpan(gr.ctx, g.tracer, c.ep.operation, c.fields.Model, g.timestamp())
	r.a = g.newAttempt(actx, c, &r.t)
	gr.racers = append(gr.racers, r)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				r.panic = v
			}
			gr.results <- r
		}()
		r.ready = r.a.reach()
	}()
	return &r.t
}

// Wake arms the hedge timer for d.
func (gr *gatewayRacers) Wake(d time.Duration) {
	if gr.timer != nil {
		gr.timer.Stop()
	}
	gr.timer = gr.g.newTimer(d)
}

// of is the racer that holds t.
func (gr *gatewayRacers) of(t *Turn) *racer {
	for _, r := range gr.racers {
		if &r.t == t {
			return r
		}
	}
	return nil
}

// race runs t (holding lim) with hedges beside it, and reports whether the
// request is done.
func (g *Gateway) race(ctx context.Context, c *call, t *Turn, lim *upstream.Limiter) (done bool) {
	delay, ok := c.route.HedgeAfter(t)
	if !ok {
		return g.attempt(ctx, c, t, lim)
	}
	gr := &gatewayRacers{g: g, ctx: ctx, c: c, lim: lim, results: make(chan *racer, 1+c.route.HedgeMax())}
	x := c.route.race(*t, gr, delay, true)
	defer func() {
		if gr.timer != nil {
			gr.timer.Stop()
		}
	}()
	for x.Running() > 0 {
		var wake <-chan time.Time
		if gr.timer != nil {
			wake = gr.timer.C()
		}
		select {
		case r := <-gr.results:
			v := x.Ended(&r.t, racerEnd(r))
			if r.panic == nil && !r.ready && r.a.res.Outcome == telemetry.OutcomeFailover {
				c.failedOver(r.a)
				c.attemptEnded(r.a)
				g.endRacer(c, r)
			}
			switch v {
			case RaceHold:
				r.a.firstByte.Stop() // its answer is in hand: no timeout may cut it while it waits
			case RaceLose:
				g.loseRacer(c, r)
			case RaceFinish:
				return g.finishRace(c, x, gr)
			case RaceFailed:
				return false // every racer failed over: the pipeline goes on
			}
		case <-wake:
			x.HedgeDue()
		}
	}
	return false
}

// racerEnd is how r's attempt ended, as the race needs to know.
func racerEnd(r *racer) RacerEnd {
	switch {
	case r.panic != nil:
		return RacerFinal
	case r.ready && r.a.kind == answerPassThrough:
		return RacerClientError
	case r.ready:
		return RacerAnswered
	case r.a.res.Outcome == telemetry.OutcomeFailover:
		return RacerFailedOver
	}
	return RacerFinal
}

// finishRace ends the race with its winner: an answer (delivered), a
// failure that ends the request, or a panic (re-raised once every other
// racer is ended). Every other racer (those running, and a held client
// error the winner beat) is cancelled first and ended as hedge_lost, so
// nothing of it reaches the client.
func (g *Gateway) finishRace(c *call, x *Race, gr *gatewayRacers) bool {
	others := x.Others()
	for _, o := range others {
		gr.of(o).a.cancel(errHedgeLost)
	}
	for range others {
		g.loseRacer(c, <-gr.results)
	}
	if b := x.Beaten(); b != nil {
		held := gr.of(b)
		held.a.cancel(errHedgeLost)
		g.loseRacer(c, held)
	}
	r := gr.of(x.Winner())
	if r.ready && r.a.ctx.Err() == nil {
		x.Served()
	}
	if r.panic != nil {
		r.a.abandon()
		g.endRacer(c, r)
		panic(r.panic)
	}
	defer g.endWinner(c, r)
	switch {
	case r.ready:
		c.tried(r.t.Cand.Target)
		c.answered(r.a.deliver(c.w, &c.route))
	case r.a.stopping:
		g.setGatewayHeaders(c.w.Header(), &c.route, c.target)
		g.fail(c, http.StatusServiceUnavailable, apierror.TypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
	}
	c.attemptEnded(r.a)
	return true
}

// loseRacer ends o, which another racer's end made pointless: an answer it
// had, or its cancellation, is hedge_lost (not its provider's doing).
func (g *Gateway) loseRacer(c *call, o *racer) {
	if o.ready || o.panic != nil || errors.Is(context.Cause(o.a.actx), errHedgeLost) {
		o.a.res = Result{ErrorType: fault.ErrorHedgeLost, Outcome: telemetry.OutcomeHedgeLost, Wait: o.a.res.Wait, Status: o.a.res.Status}
	}
	g.endRacer(c, o)
}

// endRacer reports a racer to the route, gives back what it holds and
// frees its slot.
func (g *Gateway) endRacer(c *call, r *racer) {
	c.route.End(&r.t, r.a.res, g.timestamp())
	r.a.close()
	if r.lim != nil {
		r.lim.Release()
	}
}

// endWinner is endRacer for the race's winner, the request's last
// attempt: its span ends once the client has its answer (endCall).
func (g *Gateway) endWinner(c *call, r *racer) {
	done, end := c.route.Settle(&r.t, r.a.res, g.timestamp())
	c.attemptSettled(end, done)
	r.a.close()
	if r.lim != nil {
		r.lim.Release()
	}
}
