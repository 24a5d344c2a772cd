package router

import (
	"io"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
)

// An attempt's stream, up to its first byte: the attempt reads on until
// the client has something to get, deciding what a failure then is; the
// relay (relay_stream.go) sends it on.

// reachStream waits for the first event that carries data (that moment
// is the TTFB sample: comments, pings and empty events before it are no
// first byte, and the first-byte timeout runs on while only they come),
// then reads on until the client has something to get.
func (a *attempt) reachStream() bool {
	resp, s, u := a.resp, &a.strm, a.cand.Upstream
	if !eventStream(resp.Header) {
		// Not a stream at all (an HTML error page, a JSON answer): nothing
		// the client asked for, and nothing a stream parser should see.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorDrain))
		a.res.Wait += a.g.since(a.sent)
		a.failover(resp.StatusCode, fault.ErrorStreamBroken)
		return false
	}
	s.st = a.x.streamFor(a.c, a.cand, a.g.now().Unix())

	var (
		out       []byte
		fresh     bool
		err, ferr error
	)
	for !fresh && err == nil && ferr == nil {
		s.drop() // the converter keeps what it needs of a partial event
		out, fresh, err, ferr = s.next(resp.Body)
	}
	wait := a.g.since(a.sent) // one reading: the upstream wait and the TTFB sample
	a.res.Wait += wait
	if st, et, only, ok := hostException(err); ok && s.dataEvents() == 0 {
		a.failover(st, et) // a cloud host's exception frame before the first byte
		a.res.TargetOnly = only
		return false
	}
	if s.chunks == 0 {
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
		s.drop()
		t := a.g.now()
		out, fresh, err, ferr = s.next(resp.Body)
		a.res.Wait += a.g.since(t)
		if fresh {
			a.idle.Reset(u.Idle)
		}
	}
	if len(out) == 0 && ferr == nil && err == io.EOF && s.st != nil {
		out, ferr = s.st.Finish(s.out())
		err = errStreamFinished
	}
	if len(out) == 0 || s.dataEvents() == 0 {
		// The upstream's stream ended, broke or was not the API's before a
		// byte of it was the client's: fail over.
		if ferr != nil || err == io.EOF || err == errStreamFinished {
			a.failover(resp.StatusCode, fault.ErrorStreamBroken)
		} else {
			a.setStatus(resp.StatusCode)
			a.transportFailure(err)
		}
		return false
	}
	a.streamStarted(wait) // its one data event was the last, cut short
	a.res.TTFB, a.res.HasTTFB = wait, true
	s.first, s.rerr, s.ferr = out, err, ferr
	a.kind = answerStream
	return true
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
	a.strm.started = a.g.now()
	a.total = a.g.afterFunc(u.Total-wait, func() { a.cancel(errTotalTimeout) })
	a.idle = a.g.afterFunc(u.Idle, func() { a.cancel(errIdleTimeout) })
}

// outputRate puts the stream's output tokens per second on the result:
// the output tokens the upstream reported over the time since its first
// chunk (none when it reported none).
func (a *attempt) outputRate(elapsed time.Duration) {
	if a.res.HasUsage && a.res.OutputTokens > 0 && elapsed > 0 {
		a.res.OutputRate = float64(a.res.OutputTokens) / elapsed.Seconds()
	}
}
