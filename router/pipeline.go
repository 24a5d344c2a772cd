package router

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// The gateway's driver of the pipeline (route.go): each Turn the route
// hands out gets a concurrency slot, an attempt (attempt.go) and its
// Result reported back; the route says when the request is done. When no
// candidate is left the client gets the all-failed answer.

// run drives c's route with real attempts.
func (g *Gateway) run(ctx context.Context, c *call) {
	for {
		t, ok := c.route.Next()
		if !ok {
			g.allFailed(c)
			return
		}
		lim := t.Cand.upstream.limiter
		if lim != nil && !lim.acquire(ctx) {
			if ctx.Err() != nil {
				c.route.Abandon(&t)
				return // the client left while waiting: nobody to answer
			}
			c.route.Skip(&t, SkipQueueFull)
			continue
		}
		if g.attempt(ctx, c, &t, lim) || ctx.Err() != nil {
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
func (g *Gateway) attempt(ctx context.Context, c *call, t *Turn, lim *limiter) (done bool) {
	if lim != nil {
		defer lim.release()
	}
	c.target = t.Cand.Target
	actx := t.StartSpan(ctx, g.tracer, c.ep.operation, c.fields.Model, g.timestamp())
	a := g.newAttempt(actx, c, t.Cand, c.x)
	defer a.close()
	ended := false
	defer func() {
		if !ended { // a panic: it goes on to recovered, which answers 500
			a.abandon()
			c.route.End(t, a.res, g.timestamp())
		}
	}()
	if a.reach() {
		c.status = a.deliver(c.w, &c.route)
	} else if a.stopping {
		setGatewayHeaders(c.w.Header(), &c.route, c.target)
		g.fail(c, http.StatusServiceUnavailable, errTypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
	}
	c.upstreamWait += a.res.Wait
	ended = true
	return c.route.End(t, a.res, g.timestamp())
}

// prepare readies cand for c's request (the route asks once per
// candidate): the body it is sent, translated for its wire format.
func (c *call) prepare(cand *Candidate) string {
	x, err := c.exchange(cand)
	if err != nil {
		c.untranslatable = err
		return SkipUntranslatable
	}
	c.x = x
	return ""
}

// allFailed answers after every candidate failed over or was skipped: the
// last failure's status (502 transport or unusable answer, 504 timeout; 503
// when nothing could be attempted), with a body naming every attempt.
func (g *Gateway) allFailed(c *call) {
	r := &c.route
	if r.Attempts() == 0 && c.untranslatable != nil && r.onlySkipped(SkipUntranslatable) {
		// No provider's format can carry the request: the client's to fix.
		var re *translate.RequestError
		msg := "the request cannot be served by any target of this model"
		if errors.As(c.untranslatable, &re) {
			msg += ": " + re.Message
		}
		setGatewayHeaders(c.w.Header(), r, c.target)
		g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "unsupported_parameter", msg)
		return
	}
	status := http.StatusServiceUnavailable
	msg := "no target could be tried:"
	failures, skipped := r.Failures(), r.Skipped()
	if n := len(failures); n > 0 {
		status = failures[n-1].Status
		msg = "all " + strconv.Itoa(r.Attempts()) + " attempts failed:"
	}
	extra := []byte(`,"attempts":[`)
	for i, f := range failures {
		if i > 0 {
			msg += ";"
			extra = append(extra, ',')
		}
		msg += " attempt " + strconv.Itoa(f.Attempt) + " " + f.Target + ": " + f.Reason
		extra = append(extra, `{"target":`...)
		extra = appendJSONString(extra, f.Target)
		extra = append(extra, `,"attempt":`...)
		extra = strconv.AppendInt(extra, int64(f.Attempt), 10)
		extra = append(extra, `,"status":`...)
		extra = strconv.AppendInt(extra, int64(f.Status), 10)
		extra = append(extra, `,"error":`...)
		extra = appendJSONString(extra, f.Reason)
		extra = append(extra, '}')
	}
	extra = append(extra, ']')
	if len(skipped) > 0 {
		extra = append(extra, `,"skipped":[`...)
		for i, s := range skipped {
			if i > 0 || len(failures) > 0 {
				msg += ";"
			}
			if i > 0 {
				extra = append(extra, ',')
			}
			msg += " " + s.Target + " skipped: " + s.Reason
			extra = append(extra, `{"target":`...)
			extra = appendJSONString(extra, s.Target)
			extra = append(extra, `,"reason":`...)
			extra = appendJSONString(extra, s.Reason)
			extra = append(extra, '}')
		}
		extra = append(extra, ']')
	}
	setGatewayHeaders(c.w.Header(), r, c.target)
	c.status = status
	writeErrorExtra(c.w, c.ep.shape, status, errTypeUpstream, "all_targets_failed", msg, extra)
}
