package router

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// An attempt's stream: the attempt reads it up to the first output the
// client can get, deciding what a failure then is, and says why a stream
// that started ended badly; relay.Stream reads and sends the bytes.

// reachStream waits for the first event that carries data (that moment
// is the TTFB sample: comments, pings and empty events before it are no
// first byte, and the first-byte timeout runs on while only they come),
// then reads on until the client has something to get.
func (a *attempt) reachStream() bool {
	resp, s, u := a.resp, &a.strm, a.cand.Upstream
	if !relay.EventStream(resp.Header) {
		// Not a stream at all (an HTML error page, a JSON answer): nothing
		// the client asked for, and nothing a stream parser should see.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorDrain))
		a.res.Wait += a.g.since(a.sent)
		a.failover(resp.StatusCode, fault.ErrorStreamBroken)
		return false
	}
	s.SetConverter(a.x.streamFor(a.c, a.cand, a.g.now().Unix()))

	var (
		out       []byte
		fresh     bool
		err, ferr error
	)
	for !fresh && err == nil && ferr == nil {
		s.Drop() // the converter keeps what it needs of a partial event
		out, fresh, err, ferr = s.Next(resp.Body)
	}
	wait := a.g.since(a.sent) // one reading: the upstream wait and the TTFB sample
	a.res.Wait += wait
	if st, et, only, ok := hostException(err); ok && s.DataEvents() == 0 {
		a.failover(st, et) // a cloud host's exception frame before the first byte
		a.res.TargetOnly = only
		return false
	}
	if s.Chunks() == 0 {
		// A 2xx with no body at all is a transport failure too.
		a.setStatus(resp.StatusCode)
		a.transportFailure(err)
		return false
	}
	if fresh {
		a.streamStarted(wait)
	}
	for len(out) == 0 && ferr == nil && err == nil {
		// Data the client gets nothing of yet (a usage chunk it did not
		// ask for): read on, watched for a stall.
		s.Drop()
		t := a.g.now()
		out, fresh, err, ferr = s.Next(resp.Body)
		a.res.Wait += a.g.since(t)
		if fresh {
			a.idle.Reset(u.Idle)
		}
	}
	if len(out) == 0 && ferr == nil && err == io.EOF && s.Converter() != nil {
		out, ferr = s.Converter().Finish(s.Out())
		err = relay.ErrStreamFinished
	}
	if len(out) == 0 || s.DataEvents() == 0 {
		// The upstream's stream ended, broke or was not the API's before a
		// byte of it was the client's: fail over.
		if ferr != nil || err == io.EOF || err == relay.ErrStreamFinished {
			a.failover(resp.StatusCode, fault.ErrorStreamBroken)
		} else {
			a.setStatus(resp.StatusCode)
			a.transportFailure(err)
		}
		return false
	}
	a.streamStarted(wait) // its one data event was the last, cut short
	a.res.TTFB, a.res.HasTTFB = wait, true
	s.Hold(out, err, ferr)
	a.kind = answerStream
	return true
}

// hostException is what a cloud host's event-stream exception frame
// stands for (upstream.StreamExceptionVerdict), when err is one: its
// status, error.type and whether a disabling one is the target's only.
func hostException(err error) (status int, errorType string, targetOnly, ok bool) {
	var ex *upstream.StreamException
	if !errors.As(err, &ex) {
		return 0, "", false, false
	}
	status, errorType, targetOnly = upstream.StreamExceptionVerdict(ex.Type)
	return status, errorType, targetOnly, true
}

// streamStarted marks the stream's first data event, wait after the
// request went: the first-byte timer stops, the total and idle timers
// start.
func (a *attempt) streamStarted(wait time.Duration) {
	if a.idle != nil {
		return
	}
	u := a.cand.Upstream
	a.firstByte.Stop()
	a.res.Status = a.resp.StatusCode
	a.strm.Started = a.g.now()
	a.total = a.g.afterFunc(u.Total-wait, func() { a.cancel(errTotalTimeout) })
	a.idle = a.g.afterFunc(u.Idle, func() { a.cancel(errIdleTimeout) })
}

// deliverStream relays the stream to the client (relay.Stream.Relay): the
// upstream did its part whenever the client leaves first; the usage and
// output rate it reported are read at its end, however it ended.
func (a *attempt) deliverStream(w http.ResponseWriter, route *Route) int {
	s := &a.strm
	defer func() {
		if st := s.Converter(); st != nil {
			a.usage(st.Usage())
			a.outputRate(a.g.since(s.Started))
		}
	}()
	a.res.Outcome = telemetry.OutcomeSuccess
	return s.Relay(a.relayTo(w, route), relay.Watch{Now: a.g.now, Wait: &a.res.Wait,
		Data: func() { a.idle.Reset(a.cand.Upstream.Idle) }, Broken: a.streamBroken})
}

// streamBroken says how a stream that started ended when it did not end
// cleanly, and returns the error event the client gets (nil: none). The
// client left: nothing to say. The provider ended it with its own error
// event, which the client has: broken, with nothing to add. Else the
// upstream broke it mid-way (or sent what is not its API's stream, ferr
// set, or stopped without saying how), or the shutdown grace ended it.
func (a *attempt) streamBroken(ferr error) []byte {
	if a.ctx.Err() != nil { // the client left mid-stream
		return nil
	}
	a.res.Outcome, a.res.ErrorType = telemetry.OutcomeBroken, fault.ErrorStreamBroken
	if errors.Is(ferr, translate.ErrStreamError) {
		return nil
	}
	msg := "upstream stream interrupted after the first byte"
	switch cause := context.Cause(a.actx); {
	case ferr != nil:
		msg = "upstream stream ended early or was not a valid stream of its API"
	case errors.Is(cause, errTotalTimeout):
		msg = "upstream exceeded its total timeout mid-stream"
	case errors.Is(cause, errIdleTimeout):
		a.res.ErrorType = fault.ErrorStall
		msg = "upstream stalled mid-stream: no chunk within its idle timeout (" + a.cand.Upstream.Idle.String() + ")"
	case errors.Is(cause, errStopping):
		a.res.Outcome, a.res.ErrorType = telemetry.OutcomeSuccess, "" // the upstream did its part
		msg = "the gateway is shutting down and its grace period for open streams ended; the stream is incomplete"
	}
	return translate.StreamErrorEvent(a.c.ep.shape.Format(), msg)
}

// outputRate puts the stream's output tokens per second on the result:
// the output tokens the upstream reported over the time since its first
// chunk (none when it reported none).
func (a *attempt) outputRate(elapsed time.Duration) {
	if a.res.HasUsage && a.res.OutputTokens > 0 && elapsed > 0 {
		a.res.OutputRate = float64(a.res.OutputTokens) / elapsed.Seconds()
	}
}
