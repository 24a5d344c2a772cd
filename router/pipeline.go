package router

import (
	"context"
	"net/http"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The gateway's driver of the pipeline (route.go): each Turn the route
// hands out gets a concurrency slot, an attempt (attempt.go) and its
// Result reported back; the route says when the request is done. When no
// candidate is left the client gets the all-failed answer.

// run drives c's route with real attempts, each raced against hedges when
// strategy.hedge is on (race.go, race_gateway.go).
func (g *Gateway) run(ctx context.Context, c *call) {
	for {
		t, ok := c.route.Next()
		if !ok {
			g.allFailed(c)
			return
		}
		lim := t.Cand.Upstream.Limiter
		if lim != nil && !lim.Acquire(ctx) {
			if ctx.Err() != nil {
				c.route.Abandon(&t)
				return // the client left while waiting: nobody to answer
			}
			c.route.Skip(&t, SkipQueueFull)
			continue
		}
		done := false
		if c.route.hedging != nil {
			done = g.race(ctx, c, &t, lim)
		} else {
			done = g.attempt(ctx, c, &t, lim)
		}
		if done || ctx.Err() != nil {
			return
		}
	}
}

// attempt runs t's attempt holding its concurrency slot (lim nil: no
// limit), released however the attempt ends (a panic in it must not cost
// the provider a slot for good), and reports it to the route. The attempt
// span ends before the answer leaves the gateway's buffers (the handler
// flushes once the pipeline returns): the tracker learns from it at once,
// so the next request is ordered knowing this one. A stream's chunks went
// out as they came.
func (g *Gateway) attempt(ctx context.Context, c *call, t *Turn, lim *upstream.Limiter) (done bool) {
	if lim != nil {
		defer lim.Release()
	}
	c.tried(t.Cand.Target)
	actx := t.StartSpan(ctx, g.tracer, c.ep.operation, c.fields.Model, g.timestamp())
	a := g.newAttempt(actx, c, t)
	defer a.close()
	ended := false
	defer func() {
		if !ended { // a panic: it goes on to recovered, which answers 500
			a.abandon()
			c.route.End(t, a.res, g.timestamp())
		}
	}()
	if a.reach() {
		g.noteStored(a)
		c.answered(a.deliver(c.w, &c.route))
		g.noteStored(a)
	} else if a.res.Outcome == telemetry.OutcomeFailover {
		c.failedOver(a) // its answer is the client's if this failure is the last
	} else if a.stopping {
		setGatewayHeaders(c.w.Header(), &c.route, c.target)
		g.fail(c, http.StatusServiceUnavailable, errTypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
	}
	c.attemptEnded(a)
	ended = true
	return c.route.End(t, a.res, g.timestamp())
}
