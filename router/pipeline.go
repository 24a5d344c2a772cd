package router

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The pipeline: try candidates in order, each 1 + retry.attempts times;
// move on after a failover-safe failure; hand any other 4xx to the client;
// never fail over once a byte reached the client. A candidate whose circuit
// is open, or whose concurrency queue is full, is skipped: not an attempt,
// listed in X-Firstbyte-Skipped.
//
// attempt.go runs one attempt and classifies its end; relay.go sends an
// answer to the client; headers.go decides which headers cross.

// Skip reasons (X-Firstbyte-Skipped, firstbyte_skips_total{reason}).
const (
	SkipCircuitOpen = "circuit_open"
	SkipQueueFull   = "queue_full"
	// SkipUntranslatable: the request uses a feature the target's wire
	// format cannot honour (e.g. n > 1 for an Anthropic provider).
	SkipUntranslatable = "untranslatable"
)

// skip is a candidate passed over without an attempt.
type skip struct{ target, reason string }

// order is the order a request gets: the strategy's over the targets whose
// circuit would let an attempt through, then those whose would not (in
// declaration order), so an open circuit costs a request nothing unless
// every other target has failed.
func (g *Gateway) order(dst []*Candidate, model string, eligible []*Candidate) ([]*Candidate, string) {
	// On the stack: neither reaches the strategy (an interface call, which
	// would move them to the heap).
	var admittedBuf, blockedBuf [rankedCap]*Candidate
	admitted, blocked := splitByCircuit(admittedBuf[:0], blockedBuf[:0], eligible)
	if len(blocked) == 0 || len(admitted) == 0 {
		return g.strategy.Order(dst, model, eligible)
	}
	// Some circuits open: the strategy orders a copy of the others (the one
	// allocation, as rare as an open circuit).
	dst, selection := g.strategy.Order(dst, model, append([]*Candidate(nil), admitted...))
	return append(dst, blocked...), selection
}

// splitByCircuit appends the eligible candidates whose circuit would let an
// attempt through now to admitted and the others (open within the
// cooldown, or half-open with its probe in flight) to blocked, each in
// eligible's order, asking each breaker once.
func splitByCircuit(admitted, blocked, eligible []*Candidate) ([]*Candidate, []*Candidate) {
	for _, c := range eligible {
		if c.upstream.breaker.blocked() {
			blocked = append(blocked, c)
		} else {
			admitted = append(admitted, c)
		}
	}
	return admitted, blocked
}

func (g *Gateway) runPipeline(ctx context.Context, c *call, order []*Candidate) {
	for _, cand := range order {
		x, err := c.prepare(cand)
		if err != nil {
			c.untranslatable = err
			c.skip(cand.Target, SkipUntranslatable)
			continue
		}
		for try := 0; try < cand.Tries; try++ {
			adm, ok := cand.upstream.breaker.admit()
			if !ok {
				if try == 0 {
					c.skip(cand.Target, SkipCircuitOpen)
				}
				break
			}
			lim := cand.upstream.limiter
			if lim != nil && !lim.acquire(ctx) {
				adm.resolve(resultNeutral)
				if ctx.Err() != nil {
					return // the client left while waiting: nobody to answer
				}
				if try == 0 {
					c.skip(cand.Target, SkipQueueFull)
				}
				break
			}
			v := g.limitedAttempt(ctx, c, cand, adm, lim, x)
			if v == verdictDone || ctx.Err() != nil {
				return
			}
		}
	}
	g.allFailed(c)
}

// limitedAttempt runs the attempt holding its limiter slot (lim nil: no
// limit), released however the attempt ends: a panic in it must not cost
// the provider a slot for good.
func (g *Gateway) limitedAttempt(ctx context.Context, c *call, cand *Candidate, adm admission, lim *limiter, x exchange) verdict {
	if lim != nil {
		defer lim.release()
	}
	return g.attempt(ctx, c, cand, adm, x)
}

// skip records a candidate passed over, once per target, on the request's
// server span (the metrics count it from there).
func (c *call) skip(target, reason string) {
	for _, s := range c.skipped {
		if s.target == target {
			return
		}
	}
	c.skipped = append(c.skipped, skip{target: target, reason: reason})
	if c.span != nil {
		c.span.AddEvent(telemetry.EventSkip, trace.WithAttributes(
			attribute.String(string(telemetry.KeyTarget), target),
			attribute.String(string(telemetry.KeySkipReason), reason)))
	}
}

// allFailed answers after every candidate failed over or was skipped: the
// last failure's status (502 transport or unusable answer, 504 timeout; 503
// when nothing could be attempted), with a body naming every attempt.
func (g *Gateway) allFailed(c *call) {
	if c.attempts == 0 && c.untranslatable != nil && c.onlySkipped(SkipUntranslatable) {
		// No provider's format can carry the request: the client's to fix.
		var re *translate.RequestError
		msg := "the request cannot be served by any target of this model"
		if errors.As(c.untranslatable, &re) {
			msg += ": " + re.Message
		}
		setGatewayHeaders(c.w.Header(), c)
		g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "unsupported_parameter", msg)
		return
	}
	status := http.StatusServiceUnavailable
	msg := "no target could be tried:"
	if n := len(c.failures); n > 0 {
		status = c.failures[n-1].status
		msg = "all " + strconv.Itoa(c.attempts) + " attempts failed:"
	}
	extra := []byte(`,"attempts":[`)
	for i, f := range c.failures {
		if i > 0 {
			msg += ";"
			extra = append(extra, ',')
		}
		msg += " attempt " + strconv.Itoa(f.attempt) + " " + f.target + ": " + f.reason
		extra = append(extra, `{"target":`...)
		extra = appendJSONString(extra, f.target)
		extra = append(extra, `,"attempt":`...)
		extra = strconv.AppendInt(extra, int64(f.attempt), 10)
		extra = append(extra, `,"status":`...)
		extra = strconv.AppendInt(extra, int64(f.status), 10)
		extra = append(extra, `,"error":`...)
		extra = appendJSONString(extra, f.reason)
		extra = append(extra, '}')
	}
	extra = append(extra, ']')
	if len(c.skipped) > 0 {
		extra = append(extra, `,"skipped":[`...)
		for i, s := range c.skipped {
			if i > 0 || len(c.failures) > 0 {
				msg += ";"
			}
			if i > 0 {
				extra = append(extra, ',')
			}
			msg += " " + s.target + " skipped: " + s.reason
			extra = append(extra, `{"target":`...)
			extra = appendJSONString(extra, s.target)
			extra = append(extra, `,"reason":`...)
			extra = appendJSONString(extra, s.reason)
			extra = append(extra, '}')
		}
		extra = append(extra, ']')
	}
	setGatewayHeaders(c.w.Header(), c)
	c.status = status
	writeErrorExtra(c.w, c.ep.shape, status, errTypeUpstream, "all_targets_failed", msg, extra)
}

// onlySkipped reports whether every candidate passed over was for reason.
func (c *call) onlySkipped(reason string) bool {
	for _, s := range c.skipped {
		if s.reason != reason {
			return false
		}
	}
	return true
}

func containsCandidate(cs []*Candidate, c *Candidate) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
