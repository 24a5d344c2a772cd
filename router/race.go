package router

import (
	"context"
	"errors"
	"net/http"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The hedged race: a request's attempt runs in a goroutine of its own; if
// it has produced no first byte when the hedge's delay (hedge.go) passes
// and the budget allows, the route's next candidate starts beside it (up
// to strategy.hedge.max of them). The first racer to reach a first byte
// the client could be given (a stream's first event, a unary answer whole
// and checked) wins: every other is cancelled at once (its upstream
// connection closed, its slot freed, its span ended as hedge_lost) before
// a byte of the winner is written, so a client only ever gets one answer.
// A racer that fails before its first byte leaves the others running; when
// all have failed, the pipeline goes on as it would after one failure.
//
// A racer whose answer is the upstream's own error for the client (a 400,
// a 404: not failover-safe) does not win while another is still running:
// that answer says only what one provider made of the request, and the
// request without a hedge would have had the other's. It is held, and
// served only if every other racer fails. The race's result (won, lost)
// is recorded only when a racer's answer goes to a client still there: a
// race that served nothing was neither won nor lost.

// errHedgeLost ends a racer that another beat to a first byte.
var errHedgeLost = errors.New("another attempt of the request answered first")

// racer is one attempt in a race.
type racer struct {
	t     Turn
	lim   *limiter
	a     *attempt
	ready bool // reach found something for the client
	panic any  // a panic in reach, re-raised on the handler's goroutine
}

// race runs t (holding lim) with hedges beside it, and reports whether the
// request is done.
func (g *Gateway) race(ctx context.Context, c *call, t *Turn, lim *limiter) (done bool) {
	delay, ok := c.route.HedgeAfter(t)
	if !ok {
		return g.attempt(ctx, c, t, lim)
	}
	results := make(chan *racer, 1+c.route.HedgeMax())
	var running []*racer
	start := func(t Turn, lim *limiter) {
		c.target = t.Cand.Target
		r := &racer{t: t, lim: lim}
		actx := r.t.StartSpan(ctx, g.tracer, c.ep.operation, c.fields.Model, g.timestamp())
		r.a = g.newAttempt(actx, c, &r.t)
		running = append(running, r)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					r.panic = v
				}
				results <- r
			}()
			r.ready = r.a.reach()
		}()
	}
	start(*t, lim)
	timer := g.newTimer(delay)
	defer timer.Stop()
	// The newest racer's turn: a next hedge goes past it. It points into
	// the racer (running holds pointers), so removeRacer never moves it.
	last := &running[0].t
	var held *racer // a client error, kept while another racer runs
	for len(running) > 0 {
		select {
		case r := <-results:
			running = removeRacer(running, r)
			switch {
			case r.panic == nil && r.ready && r.a.kind == answerPassThrough && len(running) > 0:
				if held == nil {
					r.a.firstByte.Stop() // its answer is in hand: no timeout may cut it while it waits
					held = r
				} else {
					g.loseRacer(c, r) // the first client error is the one kept
				}
				continue
			case r.panic != nil || r.ready || !g.lost(c, r):
				return g.finishRace(c, r, held, running, results)
			}
			if len(running) == 0 {
				if held != nil { // every other racer failed: the client error is the answer
					return g.finishRace(c, held, nil, nil, results)
				}
				return false // every racer failed over: the pipeline goes on
			}
		case <-timer.C():
			if len(running) > c.route.HedgeMax() {
				continue
			}
			h, ok := c.route.TryHedge(last)
			if !ok {
				continue
			}
			hlim := h.Cand.upstream.limiter
			if hlim != nil && !hlim.tryAcquire() {
				c.route.Skip(&h, SkipQueueFull)
				continue
			}
			start(h, hlim)
			last = &running[len(running)-1].t
			if len(running) <= c.route.HedgeMax() {
				timer.Stop()
				timer = g.newTimer(delay)
			}
		}
	}
	return false
}

// lost ends a racer that failed before its first byte (it reports to the
// route, its slot is freed) and reports whether the request goes on: false
// when the failure ends the request (the client left, the gateway is
// going).
func (g *Gateway) lost(c *call, r *racer) bool {
	if r.a.res.Outcome != telemetry.OutcomeFailover {
		return false
	}
	c.answer = r.a.answer
	c.upstreamWait += r.a.res.Wait
	g.endRacer(c, r)
	return true
}

// finishRace ends the race with r: the winner (its answer is delivered),
// a failure that ends the request, or a panic (re-raised once every other
// racer is ended). Every other racer (those running, and a held client
// error r beat) is cancelled first and ended as hedge_lost, so nothing of
// it reaches the client.
func (g *Gateway) finishRace(c *call, r, held *racer, running []*racer, results chan *racer) bool {
	for _, o := range running {
		o.a.cancel(errHedgeLost)
	}
	for range running {
		g.loseRacer(c, <-results)
	}
	if held != nil && held != r {
		held.a.cancel(errHedgeLost)
		g.loseRacer(c, held)
	}
	if c.route.hedges > 0 && r.ready && r.a.ctx.Err() == nil {
		c.route.SetHedge(HedgeLost)
		if r.t.hedge {
			c.route.SetHedge(HedgeWon)
		}
	}
	if r.panic != nil {
		r.a.abandon()
		g.endRacer(c, r)
		panic(r.panic)
	}
	defer g.endRacer(c, r)
	switch {
	case r.ready:
		c.target = r.t.Cand.Target
		c.status = r.a.deliver(c.w, &c.route)
	case r.a.stopping:
		setGatewayHeaders(c.w.Header(), &c.route, c.target)
		g.fail(c, http.StatusServiceUnavailable, errTypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
	}
	c.upstreamWait += r.a.res.Wait
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
		r.lim.release()
	}
}

func removeRacer(rs []*racer, r *racer) []*racer {
	for i, x := range rs {
		if x == r {
			return append(rs[:i], rs[i+1:]...)
		}
	}
	return rs
}
