package router

import (
	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A unary answer is checked before a byte of it is sent: it must be valid
// JSON within limits.max_response, or it is a provider fault and fails
// over. It is held whole (relay.Held) within the process-wide budget of
// limits.max_buffered (relay.Budget) from the moment it is read until it has
// been written.

// unaryAnswer is a unary answer held for the client.
type unaryAnswer struct {
	held   relay.Held // the pooled buffer the answer was read into, and what it holds of the budget
	answer []byte     // what the client gets (the upstream's, or its translation)
}

// release gives the buffer and the bytes back.
func (u *unaryAnswer) release() {
	u.held.Release()
	u.answer = nil
}

// reachUnary waits for the whole answer (that moment is the unary TTFB
// sample) and checks it. The headers were the first byte: from them on the
// body is bounded by total, not first_byte, so a slow but valid answer is
// served by the attempt that started (and bills) the work.
func (a *attempt) reachUnary() bool {
	resp := a.resp
	a.firstByte.Stop()
	a.total = a.g.afterFunc(a.cand.Upstream.Total-a.g.since(a.sent), func() { a.cancel(errTotalTimeout) })
	u := &a.unary
	u.held = a.g.budget.Hold()
	limit := a.g.maxResponse
	if resp.ContentLength > limit {
		a.res.Wait += a.g.since(a.sent)
		a.failover(resp.StatusCode, fault.ErrorResponseTooLarge)
		return false
	}
	body, over, err := u.held.Read(resp.Body, resp.ContentLength, limit)
	// The one reading of the moment the whole answer was in: the wait on
	// the upstream, the TTFB sample (not the checks below) and created.
	arrived := a.g.now()
	wait := arrived.Sub(a.sent)
	a.res.Wait += wait
	switch {
	case err == relay.ErrBufferFull:
		a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
		return false
	case err != nil:
		a.setStatus(resp.StatusCode)
		a.transportFailure(err)
		return false
	case over:
		a.failover(resp.StatusCode, fault.ErrorResponseTooLarge)
		return false
	}
	enc := relay.Encoded(resp.Header)
	if enc && a.x.conv != convNone {
		// The gateway cannot translate what it cannot read, and it never
		// asked for an encoding: as unusable as garbage.
		a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
		return false
	}
	if !enc && a.x.conv != convNone && !reqbody.ValidJSON(body) {
		// Cut short or garbage: a fast wrong answer must neither reach the
		// client as a success nor teach the tracker a latency. (An answer
		// relayed as it came is checked by a.x.unary, in the pass that
		// reads its usage; one to translate is checked before the budget
		// holds room for its translation.)
		a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
		return false
	}
	// A translation is a second copy, about the size of the first: the
	// budget holds that much for it (the answer's own allowance covers a
	// small one).
	translated := !enc && (a.x.conv != convNone || a.x.answerModel != "") && len(body) > relay.AnswerBase
	if translated && !u.held.Take(int64(len(body))) {
		a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
		return false
	}
	a.total.Stop()
	answer := body
	if !enc {
		out, usage, err := a.x.unary(a.c, a.cand, answer, arrived.Unix())
		if err != nil {
			// Valid JSON, but not the API's answer: as unusable as garbage.
			a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
			return false
		}
		if more := int64(cap(out) - len(body)); translated && more > 0 && !u.held.Take(more) {
			// It came out larger than the budget held for it, and the rest
			// does not fit: it is held already, but no longer than this.
			a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
			return false
		}
		answer = out
		a.usage(usage)
	}
	a.res.TTFB, a.res.HasTTFB = wait, true
	a.res.Status, a.res.Outcome = resp.StatusCode, telemetry.OutcomeSuccess
	u.answer = answer
	a.kind = answerUnary
	return true
}
