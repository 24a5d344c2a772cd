package router

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Relaying an upstream answer to the client. A unary answer is checked
// before a byte of it is sent (it must be valid JSON within
// limits.max_response, or it is a provider fault and fails over); a stream
// is sent as it comes, flushed chunk by chunk, and a failure after its first
// byte ends it with an error event in the client's format.

// relayUnary waits for the whole answer (that moment is the unary TTFB
// sample), checks it, then sends it.
func (a *attemptRun) relayUnary(ctx, actx context.Context, resp *http.Response, sent time.Time, firstByte *time.Timer) verdict {
	buf := getBuffer()
	defer putBuffer(buf)
	limit := a.g.maxResponse
	if resp.ContentLength > limit {
		a.c.upstreamWait += a.g.since(sent)
		return a.failover(resp.StatusCode, telemetry.ErrorResponseTooLarge)
	}
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	a.c.upstreamWait += a.g.since(sent)
	if err != nil {
		a.setStatus(resp.StatusCode)
		return a.transportFailure(ctx, actx)
	}
	if int64(buf.Len()) > limit {
		return a.failover(resp.StatusCode, telemetry.ErrorResponseTooLarge)
	}
	if !encoded(resp.Header) && !validJSON(buf.Bytes()) {
		// Cut short or garbage: a fast wrong answer must neither reach the
		// client as a success nor teach the tracker a latency.
		return a.failover(resp.StatusCode, telemetry.ErrorInvalidResponse)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = a.g.since(sent), true
	a.status, a.outcome = resp.StatusCode, telemetry.OutcomeSuccess
	h := a.c.w.Header()
	copyResponseHeaders(h, resp.Header, false, a.cand.upstream.apiKey)
	setGatewayHeaders(h, a.c)
	a.c.status = resp.StatusCode
	a.c.w.WriteHeader(resp.StatusCode)
	if buf.Len() > largeAnswer {
		// More than the socket buffers hold: a client that stops reading
		// would block the write for good without a deadline.
		wd := newWriteDeadline(a.c.w, a.g.writeTimeout)
		defer wd.clear()
		wd.extend()
	}
	_, _ = a.c.w.Write(buf.Bytes())
	return verdictDone
}

// largeAnswer is the unary answer size above which its write gets a
// deadline; smaller ones fit the kernel's buffers and never block long.
const largeAnswer = 256 << 10

// writeDeadline bounds each write to a client by timeout, so a client that
// stops reading cannot hold its handler (and the upstream behind it)
// forever. It moves the connection's deadline forward at most once a
// second, not on every chunk.
type writeDeadline struct {
	rc      *http.ResponseController
	timeout time.Duration
	set     time.Time // when the deadline was last moved
}

func newWriteDeadline(w http.ResponseWriter, timeout time.Duration) *writeDeadline {
	return &writeDeadline{rc: http.NewResponseController(w), timeout: timeout}
}

func (d *writeDeadline) extend() {
	now := time.Now() // wall clock: the deadline is the socket's
	if now.Sub(d.set) < time.Second {
		return
	}
	d.set = now
	_ = d.rc.SetWriteDeadline(now.Add(d.timeout))
}

// clear lifts the deadline: a kept-alive connection's next answer must
// not inherit it.
func (d *writeDeadline) clear() { _ = d.rc.SetWriteDeadline(time.Time{}) }

// encoded reports whether the body comes content-encoded (then it is
// relayed as it is, unchecked: the gateway never asks for an encoding, so
// only a provider that sends one unasked does this).
func encoded(h http.Header) bool {
	ce := h.Get("Content-Encoding")
	return ce != "" && ce != "identity"
}

// relayStream waits for the first chunk (failover is still possible until
// then), sends it at once, and relays every later chunk as it comes,
// flushing each. A failure after the first byte ends the stream with an
// error event: there is no failover once the client has bytes.
func (a *attemptRun) relayStream(ctx, actx context.Context, cancel context.CancelCauseFunc, resp *http.Response, sent time.Time, firstByte *time.Timer) verdict {
	c := a.c
	bufp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bufp)
	buf := *bufp

	n, err := readSome(resp.Body, buf)
	c.upstreamWait += a.g.since(sent)
	if n == 0 {
		a.setStatus(resp.StatusCode)
		if err == io.EOF && ctx.Err() == nil && context.Cause(actx) == nil {
			return a.failover(resp.StatusCode, telemetry.ErrorTransport) // a 2xx with no body at all
		}
		return a.transportFailure(ctx, actx)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = a.g.since(sent), true
	a.status = resp.StatusCode
	total := time.AfterFunc(a.cand.upstream.total-a.ttfb, func() { cancel(errTotalTimeout) })
	defer total.Stop()

	h := c.w.Header()
	copyResponseHeaders(h, resp.Header, true, a.cand.upstream.apiKey)
	setGatewayHeaders(h, c)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	tail := [2]byte{}
	wd := newWriteDeadline(c.w, a.g.writeTimeout)
	defer wd.clear()
	write := func(p []byte) bool {
		wd.extend()
		if _, werr := c.w.Write(p); werr != nil {
			return false
		}
		if werr := wd.rc.Flush(); werr != nil { // the client is gone or stopped reading
			return false
		}
		if len(p) >= 2 {
			tail[0], tail[1] = p[len(p)-2], p[len(p)-1]
		} else {
			tail[0], tail[1] = tail[1], p[0]
		}
		return true
	}
	if !write(buf[:n]) {
		a.outcome = telemetry.OutcomeSuccess // the upstream did its part; the client left
		return verdictDone
	}
	for {
		if err != nil {
			break
		}
		t := a.g.now()
		n, err = readSome(resp.Body, buf)
		c.upstreamWait += a.g.since(t)
		if n > 0 && !write(buf[:n]) {
			a.outcome = telemetry.OutcomeSuccess
			return verdictDone
		}
	}
	if err == io.EOF {
		a.outcome = telemetry.OutcomeSuccess
		return verdictDone
	}
	if ctx.Err() != nil { // the client left mid-stream
		a.outcome = telemetry.OutcomeSuccess
		return verdictDone
	}
	// The upstream broke mid-stream, or the shutdown grace ended it:
	// finish any partial event, then say so.
	a.outcome, a.reason = telemetry.OutcomeBroken, telemetry.ErrorStreamBroken
	msg := "upstream stream interrupted after the first byte"
	switch cause := context.Cause(actx); {
	case errors.Is(cause, errTotalTimeout):
		msg = "upstream exceeded its total timeout mid-stream"
	case errors.Is(cause, errStopping):
		a.outcome, a.reason = telemetry.OutcomeSuccess, "" // the upstream did its part
		msg = "the gateway is shutting down and its grace period for open streams ended; the stream is incomplete"
	}
	var ev []byte
	if tail != [2]byte{'\n', '\n'} {
		ev = append(ev, "\n\n"...)
	}
	ev = append(ev, streamErrorEvent(c.ep.shape, msg)...)
	write(ev)
	return verdictDone
}

// readSome reads until it has at least one byte or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// passThrough hands a non-failover 4xx to the client unchanged: status,
// content type and body. prefix is what was already read of the body.
func (a *attemptRun) passThrough(resp *http.Response, prefix []byte) verdict {
	c := a.c
	a.status, a.outcome, a.reason = resp.StatusCode, telemetry.OutcomeClientError, strconv.Itoa(resp.StatusCode)
	h := c.w.Header()
	copyResponseHeaders(h, resp.Header, prefix == nil, a.cand.upstream.apiKey)
	if prefix != nil {
		h.Set("Content-Length", strconv.Itoa(len(prefix)))
	}
	setGatewayHeaders(h, c)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	if prefix != nil {
		_, _ = c.w.Write(prefix)
	} else {
		_, _ = io.Copy(c.w, resp.Body)
	}
	return verdictDone
}

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 4<<20 { // do not keep the odd huge answer alive
		return
	}
	b.Reset()
	bufferPool.Put(b)
}

// chunkPool holds stream relay buffers: 8 KiB holds any SSE event a
// provider sends in one read, and keeps 1,000 open streams small.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}
