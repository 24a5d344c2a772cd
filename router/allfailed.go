package router

import (
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/relay"

	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
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
	if !whole || encoded(a.resp.Header) {
		return
	}
	ans := &upstreamAnswer{status: a.resp.StatusCode, header: http.Header{}, body: a.x.errorBody(a.resp.StatusCode, body)}
	if _, ok := withMembers(ans.body, nil); !ok {
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
	setGatewayHeaders(h, &c.route, c.target)
	c.answered(http.StatusTooManyRequests)
	writeErrorExtra(c.w, c.ep.shape, http.StatusTooManyRequests, errTypeRateLimit, "rate_limited",
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
	body, _ := withMembers(ans.body, c.route.summary())
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	setGatewayHeaders(h, &c.route, c.target)
	c.answered(ans.status)
	c.w.WriteHeader(ans.status)
	_, _ = c.w.Write(body)
}

// gatewayFailure is the gateway's own answer when the last failure had no
// upstream answer to show: its status (502 transport or unusable answer,
// 504 timeout; 503 when nothing could be attempted), with a message
// naming every attempt.
func (g *Gateway) gatewayFailure(c *call) {
	r := &c.route
	status := http.StatusServiceUnavailable
	msg := "no target could be tried:"
	failures, skipped := r.Failures(), r.Skipped()
	if n := len(failures); n > 0 {
		status = failures[n-1].Status
		msg = "all " + strconv.Itoa(r.Attempts()) + " attempts failed:"
	}
	for i, f := range failures {
		if i > 0 {
			msg += ";"
		}
		msg += " attempt " + strconv.Itoa(f.Attempt) + " " + f.Target + ": " + cmp.Or(f.Detail, f.Reason)
	}
	for i, s := range skipped {
		if i > 0 || len(failures) > 0 {
			msg += ";"
		}
		msg += " " + s.Target + " skipped: " + s.Reason
	}
	setGatewayHeaders(c.w.Header(), r, c.target)
	c.answered(status)
	writeErrorExtra(c.w, c.ep.shape, status, errTypeUpstream, "all_targets_failed", msg, r.summary())
}

// summary is the attempts and skips as members of an error object:
// ,"firstbyte_attempts":[...],"firstbyte_skipped":[...].
func (r *Route) summary() []byte {
	extra := []byte(`,"firstbyte_attempts":[`)
	for i, f := range r.failures {
		if i > 0 {
			extra = append(extra, ',')
		}
		extra = append(extra, `{"target":`...)
		extra = jsonscan.AppendString(extra, f.Target)
		extra = append(extra, `,"attempt":`...)
		extra = strconv.AppendInt(extra, int64(f.Attempt), 10)
		extra = append(extra, `,"status":`...)
		extra = strconv.AppendInt(extra, int64(f.Status), 10)
		extra = append(extra, `,"error":`...)
		extra = jsonscan.AppendString(extra, f.Reason)
		if f.Detail != "" {
			extra = append(extra, `,"detail":`...)
			extra = jsonscan.AppendString(extra, f.Detail)
		}
		extra = append(extra, '}')
	}
	extra = append(extra, ']')
	if len(r.skipped) > 0 {
		extra = append(extra, `,"firstbyte_skipped":[`...)
		for i, s := range r.skipped {
			if i > 0 {
				extra = append(extra, ',')
			}
			extra = append(extra, `{"target":`...)
			extra = jsonscan.AppendString(extra, s.Target)
			extra = append(extra, `,"reason":`...)
			extra = jsonscan.AppendString(extra, s.Reason)
			extra = append(extra, '}')
		}
		extra = append(extra, ']')
	}
	return extra
}

// withMembers appends members (",\"k\":v,...") to the "error" object of an
// error body ({"error":{...}} or {"type":"error","error":{...}}), keeping
// every byte of it; ok is false (and body is returned as it is) when the
// body has no such object.
func withMembers(body, members []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return body, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return body, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return body, false
		}
		if key != "error" || len(v) < 2 || v[0] != '{' {
			continue
		}
		end := int(dec.InputOffset()) - 1 // the error object's closing brace
		if end < 0 || end >= len(body) || body[end] != '}' {
			return body, false
		}
		if len(members) > 0 && len(bytes.TrimSpace(v[1:len(v)-1])) == 0 {
			members = members[1:] // an empty object: no comma before the first member
		}
		out = make([]byte, 0, len(body)+len(members))
		out = append(out, body[:end]...)
		out = append(out, members...)
		return append(out, body[end:]...), true
	}
	return body, false
}
