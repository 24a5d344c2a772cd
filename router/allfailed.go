package router

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/relay"
)

// When every candidate failed over or was skipped, the client gets the
// last failure as it was: the upstream's status, its retry-after and
// rate-limit headers, and its error (type, message, code) in the client's
// format, translated when the formats differ, with the attempts summarised
// beside it (X-Firstbyte-Attempts, X-Firstbyte-Skipped, and a
// firstbyte_attempts member in the error object), never instead of it.
// Only a failure with no upstream answer (a transport error, a timeout, an
// unusable 2xx) gets the gateway's own error: 502, or 504 for a timeout.

// upstreamAnswer is a failed-over upstream error, held for the client in
// case it is the last failure.
type upstreamAnswer struct {
	status int
	header http.Header // the headers that cross (copyResponseHeaders), framing aside
	body   []byte      // in the client's format
}

// keepAnswer holds the upstream's error answer for the client, should this
// failure be the last: body is the start of it, whole if that is all. An
// answer cut short or compressed cannot be shown as it was; the gateway's
// own error stands in for it.
func (a *attempt) keepAnswer(body []byte, whole bool) {
	if !whole || relay.Encoded(a.resp.Header) {
		return
	}
	ans := &upstreamAnswer{status: a.resp.StatusCode, header: http.Header{}, body: a.x.errorBody(a.resp.StatusCode, body)}
	if _, ok := apierror.WithMembers(ans.body, nil); !ok {
		return // not an error in the client's API shape: nothing to show as it was
	}
	relay.CopyResponseHeaders(ans.header, a.resp.Header, true, a.cand.Upstream.APIKey)
	delete(ans.header, "Content-Type") // the answer's own, set when it is sent
	a.answer = ans
}

// allFailed answers after every candidate failed over or was skipped.
func (g *Gateway) allFailed(c *call) {
	r := &c.route
	switch {
	case r.Attempts() == 0 && r.untranslatable != nil && r.onlySkipped(SkipUntranslatable):
		g.refuseUntranslatable(c)
	case r.Attempts() == 0 && len(r.Skipped()) > 0 && r.onlySkipped(SkipRateLimited):
		g.allCooled(c)
	case c.answer != nil && len(r.Failures()) > 0:
		g.lastAnswer(c)
	default:
		g.gatewayFailure(c)
	}
}

// allCooled answers 429 when every candidate is cooled by its rate limits:
// the providers said when to come back, and the earliest of their times is
// the client's Retry-After.
func (g *Gateway) allCooled(c *call) {
	now := g.now()
	var earliest time.Time
	for _, cand := range c.route.order {
		if t := cand.Guard.CooledUntil(now); !t.IsZero() && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	secs := int64(math.Ceil(max(earliest.Sub(now).Seconds(), 1)))
	h := c.w.Header()
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
	g.setGatewayHeaders(h, &c.route, c.target)
	c.answered(http.StatusTooManyRequests)
	apierror.WriteExtra(c.w, c.ep.shape, http.StatusTooManyRequests, apierror.TypeRateLimit, "rate_limited",
		"every target of this model is rate limited by its provider; retry after "+strconv.FormatInt(secs, 10)+"s",
		c.route.summary())
}

// lastAnswer sends the last failure's upstream answer, the attempts
// summarised beside it.
func (g *Gateway) lastAnswer(c *call) {
	ans := c.answer
	h := c.w.Header()
	for k, v := range ans.header {
		h[k] = v
	}
	body, _ := apierror.WithMembers(ans.body, c.route.summary())
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	g.setGatewayHeaders(h, &c.route, c.target)
	c.answered(ans.status)
	c.w.WriteHeader(ans.status)
	_, _ = c.w.Write(body)
}

// gatewayFailure is the gateway's own answer when the last failure had no
// upstream answer to show (apierror.FailureMessage).
func (g *Gateway) gatewayFailure(c *call) {
	r := &c.route
	status, msg := apierror.FailureMessage(r.Attempts(), r.Failures(), r.Skipped())
	g.setGatewayHeaders(c.w.Header(), r, c.target)
	c.answered(status)
	apierror.WriteExtra(c.w, c.ep.shape, status, apierror.TypeUpstream, "all_targets_failed", msg, r.summary())
}

// summary is the route's attempts and skips as members of an error object.
func (r *Route) summary() []byte { return apierror.Summary(r.failures, r.skipped) }
