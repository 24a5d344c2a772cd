package router

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// An upstream 4xx that is not failover-safe is the client's to see: its
// status, content type and body, translated into the client's error shape
// when the formats differ. Its first maxErrorHeld bytes are read before it
// is judged (a provider's context-length overflow fails over instead).

// passAnswer is an upstream error held for the client.
type passAnswer struct {
	prefix []byte // what was read of the body (nil: nothing yet)
	whole  bool   // prefix is all of it
}

// reachErrorAnswer reads the start of an upstream error answer to judge
// it: a provider fault (408, 429, 5xx, a 1xx or 3xx, a credential or quota
// failure), the provider's own context overflow or a stored response it
// does not hold (previous_response_not_found) fails over, and is kept
// as the answer the client gets should it be the last failure; anything
// else is the client's to see.
func (a *attempt) reachErrorAnswer() bool {
	resp, s := a.resp, a.resp.StatusCode
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorHeld+1))
	whole := len(body) <= maxErrorHeld
	errType, targetOnly := fault.OfAnswerScoped(s, "", body)
	var hostRetry time.Time // a host's own retry delay, from its body
	var hostDelay time.Duration
	overflow := false
	if cl := a.cand.Upstream.Cloud; cl != nil {
		var e upstream.HostError
		e, hostRetry = cl.Judge(s, resp.Header, body, a.g.now())
		s, errType, targetOnly, overflow = e.Status, e.ErrorType, e.TargetOnly, e.ContextOverflow
		hostDelay = e.RetryAfter
	}
	switch {
	case fault.Classify(s, errType) == fault.Full:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorDrain)) // lets the connection be reused
		a.res.Wait += a.g.since(a.sent)
		if !fault.Disabling(errType) {
			a.res.RetryAt = comeBack(s, upstream.ReadRateSignal(resp.Header, a.g.now()))
			if a.res.RetryAt.IsZero() {
				a.res.RetryAt = hostRetry
			}
		}
		if errType == fault.ErrorConfig {
			a.g.warnWrongEndpoint(a.cand, a.x.url, s)
		}
		a.keepAnswer(body, whole)
		a.answerRetryAfter(hostDelay)
		a.failover(s, errType)
		a.res.TargetOnly = targetOnly
		return false
	case overflow || (s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge) && translate.IsContextOverflow(s, body):
		// The provider's own context limit: another provider may have a
		// larger window. Not the provider's fault.
		a.res.Wait += a.g.since(a.sent)
		a.keepAnswer(body, whole)
		a.failover(s, fault.ErrorContextOverflow)
		return false
	case errType == fault.ErrorPreviousResponseNotFound:
		// The stored response lives on another account (its home was not
		// known, or did not answer): another target may hold it. Not the
		// provider's fault; the client gets this answer if none does.
		a.res.Wait += a.g.since(a.sent)
		a.keepAnswer(body, whole)
		a.failover(s, errType)
		return false
	}
	return a.reachClientError(body, whole)
}

// answerRetryAfter gives the kept answer the Retry-After a host said in
// its body (Google's RetryInfo.retryDelay, d; 0: none), in whole seconds
// rounded up, unless the answer has a Retry-After header of its own: the
// client of a Gemini or Vertex target learns when to come back as a
// client of any other provider does.
func (a *attempt) answerRetryAfter(d time.Duration) {
	if d <= 0 || a.answer == nil || a.answer.header.Get("Retry-After") != "" {
		return
	}
	if v := upstream.RelayedRetryAfter(strconv.FormatFloat(d.Seconds(), 'f', -1, 64)); v != "" {
		a.answer.header.Set("Retry-After", v)
	}
}

// comeBack is when a refusal says the provider takes requests again: a 429
// by any of its headers, a 503 or 529 only by Retry-After (their reset
// headers describe limits the refusal was not about).
func comeBack(status int, sig upstream.RateSignal) time.Time {
	switch status {
	case http.StatusTooManyRequests:
		return sig.RefusedUntil()
	case http.StatusServiceUnavailable, 529:
		return sig.RetryAt
	}
	return time.Time{}
}

// reachClientError hands the client an upstream 4xx that is its own to see.
// body is what was read of it already (nil: nothing), whole if that is all
// of it. An error to translate is read now (its first maxErrorHeld bytes);
// one in the client's own format that is not whole in hand is relayed as
// it comes.
func (a *attempt) reachClientError(body []byte, whole bool) bool {
	if body == nil && a.x.conv != convNone {
		body, _ = io.ReadAll(io.LimitReader(a.resp.Body, maxErrorHeld+1))
		whole = len(body) <= maxErrorHeld
	}
	a.res.Wait += a.g.since(a.sent)
	a.kind = answerPassThrough
	a.pass = passAnswer{prefix: body, whole: whole}
	a.clientError()
	return true
}

// clientError records an upstream error handed to the client.
func (a *attempt) clientError() {
	s := a.resp.StatusCode
	a.res.Status, a.res.Outcome, a.res.ErrorType = s, telemetry.OutcomeClientError, strconv.Itoa(s)
}
