package router

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Relaying an upstream answer to the client. A unary answer is checked
// before a byte of it is sent (it must be valid JSON within
// limits.max_response, or it is a provider fault and fails over), and held
// within the process-wide budget of limits.max_buffered (budget.go); a stream
// is sent as it comes, flushed chunk by chunk, and a failure after its first
// byte ends it with an error event in the client's format.

// relayUnary waits for the whole answer (that moment is the unary TTFB
// sample), checks it, then sends it.
func (a *attemptRun) relayUnary(ctx, actx context.Context, resp *http.Response, sent time.Time, firstByte *time.Timer) verdict {
	bufp := answerPool.Get().(*[]byte)
	// What the answer holds of the budget, all of it given back however
	// this returns (a panic included) and before the buffer goes back to
	// the pool (where it is nobody's).
	cl := claim{b: a.g.budget}
	defer func() {
		cl.release()
		if cap(*bufp) <= maxReadBlock { // do not keep the odd huge answer alive
			answerPool.Put(bufp)
		}
	}()
	limit := a.g.maxResponse
	if resp.ContentLength > limit {
		a.c.upstreamWait += a.g.since(sent)
		return a.failover(resp.StatusCode, fault.ErrorResponseTooLarge)
	}
	body, over, err := readAnswer(bufp, resp.Body, resp.ContentLength, limit, &cl)
	// The one reading of the moment the whole answer was in: the wait on
	// the upstream, the TTFB sample (not the checks below) and created.
	arrived := a.g.now()
	wait := arrived.Sub(sent)
	a.c.upstreamWait += wait
	if err == errBufferFull {
		return a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
	}
	if err != nil {
		a.setStatus(resp.StatusCode)
		return a.transportFailure(ctx, actx)
	}
	if over {
		return a.failover(resp.StatusCode, fault.ErrorResponseTooLarge)
	}
	enc := encoded(resp.Header)
	if enc && a.x.conv != convNone {
		// The gateway cannot translate what it cannot read, and it never
		// asked for an encoding: as unusable as garbage.
		return a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
	}
	if !enc && a.x.conv != convNone && !validJSON(body) {
		// Cut short or garbage: a fast wrong answer must neither reach the
		// client as a success nor teach the tracker a latency. (An answer
		// relayed as it came is checked by a.x.unary, in the pass that
		// reads its usage; one to translate is checked before the budget
		// holds room for its translation.)
		return a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
	}
	// A translation is a second copy, about the size of the first: the
	// budget holds that much for it (the answer's own allowance covers a
	// small one).
	translated := !enc && a.x.conv != convNone && len(body) > answerBase
	if translated && !cl.take(int64(len(body))) {
		return a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = wait, true
	answer := body
	if !enc {
		out, usage, err := a.x.unary(a.c, a.cand, answer, arrived.Unix())
		if err != nil {
			// Valid JSON, but not the API's answer: as unusable as garbage.
			a.hasTTFB = false
			return a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
		}
		if more := int64(cap(out) - len(body)); translated && more > 0 && !cl.take(more) {
			// It came out larger than the budget held for it, and the rest
			// does not fit: it is held already, but no longer than this.
			a.hasTTFB = false
			return a.failover(resp.StatusCode, fault.ErrorResponseBufferFull)
		}
		answer, a.usage = out, usage
	}
	a.status, a.outcome = resp.StatusCode, telemetry.OutcomeSuccess
	h := a.c.w.Header()
	copyResponseHeaders(h, resp.Header, a.x.conv != convNone, a.cand.upstream.apiKey)
	if a.x.conv != convNone {
		h.Del("Content-Encoding")
		h["Content-Type"] = jsonContentType
		h["Content-Length"] = []string{strconv.Itoa(len(answer))}
	}
	setGatewayHeaders(h, a.c)
	a.c.status = resp.StatusCode
	a.c.w.WriteHeader(resp.StatusCode)
	if len(answer) > largeAnswer {
		// More than the socket buffers hold: a client that stops reading
		// would block the write for good without a deadline.
		wd := newWriteDeadline(a.c.w, a.g.writeTimeout)
		defer wd.clear()
		wd.extend()
	}
	_, _ = a.c.w.Write(answer)
	return verdictDone
}

var jsonContentType = []string{"application/json"}

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

// readAnswer reads a unary answer of contentLength bytes (-1: unknown) from
// r, up to limit bytes (over: more came), into *bufp, a pooled buffer it
// may replace with a larger one. Every byte it holds beyond answerBase is
// reserved from cl first; err is errBufferFull when that did not fit.
func readAnswer(bufp *[]byte, r io.Reader, contentLength, limit int64, cl *claim) (body []byte, over bool, err error) {
	switch {
	case contentLength > 0 && int64(cap(*bufp)) <= contentLength:
		// One byte past the answer: the read that finds the end has room,
		// else readAtMost would take a block only to be told EOF.
		if !cl.take(contentLength + 1) {
			return nil, false, errBufferFull
		}
		*bufp = make([]byte, 0, contentLength+1)
	case cap(*bufp) > answerBase:
		// A larger answer left this buffer in the pool: this answer holds
		// it now, or, when the budget has no room for it, a small one.
		if !cl.take(int64(cap(*bufp) - answerBase)) {
			*bufp = make([]byte, 0, answerBase)
		}
	}
	body, over, err = readAtMost((*bufp)[:0], r, limit+1, cl)
	if cap(body) <= maxReadBlock {
		*bufp = body[:0]
	}
	return body, over, err
}

// readAtMost appends r to dst until EOF, or until n bytes have come (then
// over is true and the bytes are dropped). Past dst's capacity it reads into
// pooled blocks of growing size, joined once at the end when the whole is
// within n: an answer over the limit costs the limit in memory and no copy
// (growing one slice by doubling would hold one and a half times it while it
// copies, and leave the rest as garbage). Each block, and the joined copy,
// is reserved from cl before it is taken; every block is back in its pool,
// its bytes given back to cl, when readAtMost returns, so the caller's claim
// holds the joined copy only (a panic skips that, and the caller's release
// of the whole claim gives the bytes back). A reservation that does not fit
// ends the read with errBufferFull; any error returns no body.
func readAtMost(dst []byte, r io.Reader, n int64, cl *claim) (body []byte, over bool, err error) {
	var spare [24]*[]byte // a 64 MiB answer takes 22
	blocks := spare[:0]   // after dst, in order
	total := int64(len(dst))
	cur := &dst
	for total < n {
		if len(*cur) == cap(*cur) {
			// Twice the last block (or dst, or answerBase), at most
			// maxReadBlock, and no larger than what may still come.
			c := blockClass(min(2*max(int64(cap(*cur)), answerBase), maxReadBlock, n-total))
			if !cl.take(minReadBlock << c) {
				dropBlocks(blocks, cl)
				return dst[:0], false, errBufferFull
			}
			blocks = append(blocks, getBlock(c))
			cur = blocks[len(blocks)-1]
		}
		room := (*cur)[len(*cur):min(int64(cap(*cur)), int64(len(*cur))+n-total)]
		m, err := r.Read(room)
		*cur = (*cur)[:len(*cur)+m]
		total += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			dropBlocks(blocks, cl)
			return dst[:0], false, err
		}
	}
	if total >= n {
		dropBlocks(blocks, cl)
		return dst[:0], true, nil
	}
	if int64(len(dst)) == total {
		// Empty blocks (the last one may have been taken only to be told
		// EOF) are no reason to copy.
		dropBlocks(blocks, cl)
		return dst, false, nil
	}
	// One slice of the whole, with a byte to spare, so an answer of the
	// same size read into it again (it goes back to answerPool) sees its
	// end without a block.
	if !cl.take(total + 1) {
		dropBlocks(blocks, cl)
		return dst[:0], false, errBufferFull
	}
	out := make([]byte, 0, total+1)
	out = append(out, dst...)
	for _, p := range blocks {
		out = append(out, *p...)
	}
	dropBlocks(blocks, cl)
	return out, false, nil
}

// dropBlocks puts blocks back in their pools and gives their bytes back.
func dropBlocks(blocks []*[]byte, cl *claim) {
	for _, p := range blocks {
		cl.give(int64(cap(*p)))
		putBlock(blockClass(int64(cap(*p))), p)
	}
}

// answerBase is the buffer each unary answer starts with (answerPool's
// New): the answer's own, not taken from the budget.
const answerBase = 32 << 10

// answerPool holds unary answer buffers.
var answerPool = sync.Pool{New: func() any { b := make([]byte, 0, answerBase); return &b }}

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
//
// Every chunk goes through the exchange's stream: a translator when the
// client speaks the other format (its first event is written the moment
// the upstream's first event is whole, so the time to first byte stays
// honest), or a pass-through that reads the usage and drops the usage chunk
// the client did not ask for.
func (a *attemptRun) relayStream(ctx, actx context.Context, cancel context.CancelCauseFunc, resp *http.Response, sent time.Time, firstByte *time.Timer) verdict {
	c := a.c
	bufp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bufp)
	buf := *bufp
	outp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(outp)
	st := a.x.streamFor(c, a.cand, a.g.now().Unix())
	// convert passes p through the exchange's stream; out is what the
	// client gets of it (maybe nothing yet: an event is not whole).
	convert := func(p []byte) ([]byte, error) {
		if st == nil {
			return p, nil
		}
		return st.Feed((*outp)[:0], p)
	}

	n, err := readSome(resp.Body, buf)
	wait := a.g.since(sent) // one reading: the upstream wait and the TTFB sample
	c.upstreamWait += wait
	if n == 0 {
		// A 2xx with no body at all is a transport failure too.
		a.setStatus(resp.StatusCode)
		return a.transportFailure(ctx, actx)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = wait, true
	a.status = resp.StatusCode
	total := time.AfterFunc(a.cand.upstream.total-a.ttfb, func() { cancel(errTotalTimeout) })
	defer total.Stop()

	// Until something is for the client, nothing is committed: the stream
	// can still fail over.
	out, ferr := convert(buf[:n])
	for len(out) == 0 && ferr == nil && err == nil {
		t := a.g.now()
		n, err = readSome(resp.Body, buf)
		c.upstreamWait += a.g.since(t)
		if n > 0 {
			out, ferr = convert(buf[:n])
		}
	}
	if len(out) == 0 && ferr == nil && err == io.EOF && st != nil {
		out, ferr = st.Finish((*outp)[:0])
		err = errStreamFinished
	}
	if len(out) == 0 {
		// The upstream's stream ended, broke or was not the API's before a
		// byte of it was the client's: fail over.
		a.hasTTFB = false
		if ferr != nil || err == io.EOF || err == errStreamFinished {
			return a.failover(resp.StatusCode, fault.ErrorInvalidResponse)
		}
		return a.transportFailure(ctx, actx)
	}

	h := c.w.Header()
	copyResponseHeaders(h, resp.Header, true, a.cand.upstream.apiKey)
	if a.x.conv != convNone {
		h.Del("Content-Encoding")
	}
	setGatewayHeaders(h, c)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	tail := [2]byte{}
	wd := newWriteDeadline(c.w, a.g.writeTimeout)
	defer wd.clear()
	write := func(p []byte) bool {
		if len(p) == 0 {
			return true
		}
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
	defer func() {
		if st != nil {
			a.usage = st.Usage()
		}
	}()
	if !write(out) {
		a.outcome = telemetry.OutcomeSuccess // the upstream did its part; the client left
		return verdictDone
	}
	for ferr == nil && err == nil {
		t := a.g.now()
		n, err = readSome(resp.Body, buf)
		c.upstreamWait += a.g.since(t)
		if n > 0 {
			if out, ferr = convert(buf[:n]); !write(out) {
				a.outcome = telemetry.OutcomeSuccess
				return verdictDone
			}
		}
	}
	if ferr == nil && err == io.EOF && st != nil {
		// The upstream ended cleanly: close the client's stream, unless the
		// upstream never said how it stopped (cut short).
		out, ferr = st.Finish((*outp)[:0])
		if !write(out) {
			a.outcome = telemetry.OutcomeSuccess
			return verdictDone
		}
	}
	if ferr == nil && (err == io.EOF || err == errStreamFinished) {
		a.outcome = telemetry.OutcomeSuccess
		return verdictDone
	}
	if ctx.Err() != nil { // the client left mid-stream
		a.outcome = telemetry.OutcomeSuccess
		return verdictDone
	}
	// The upstream broke mid-stream (or sent what is not its API's stream,
	// or stopped without saying how), or the shutdown grace ended it:
	// finish any partial event, then say so.
	a.outcome, a.reason = telemetry.OutcomeBroken, fault.ErrorStreamBroken
	msg := "upstream stream interrupted after the first byte"
	switch cause := context.Cause(actx); {
	case ferr != nil:
		msg = "upstream stream ended early or was not a valid stream of its API"
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
	ev = append(ev, translate.StreamErrorEvent(c.ep.shape.format(), msg)...)
	write(ev)
	return verdictDone
}

// errStreamFinished marks a stream whose translator was already finished.
var errStreamFinished = errors.New("stream finished")

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
// content type and body. prefix is what was already read of the body
// (nil: nothing), whole if it is all of it. A body in the client's own
// format that is not whole in hand is relayed as it comes, after the
// prefix, with the upstream's own framing; a translated error is made from
// the prefix alone.
func (a *attemptRun) passThrough(resp *http.Response, prefix []byte, whole bool) verdict {
	c := a.c
	a.status, a.outcome, a.reason = resp.StatusCode, telemetry.OutcomeClientError, strconv.Itoa(resp.StatusCode)
	h := c.w.Header()
	relayed := a.x.conv == convNone && !whole
	copyResponseHeaders(h, resp.Header, !relayed, a.cand.upstream.apiKey)
	if a.x.conv != convNone {
		// The other API's error, in the client's shape: status, type and
		// message kept. A compressed body cannot be read (the gateway never
		// asked for one): its bytes must not become the message.
		if encoded(resp.Header) {
			prefix = []byte("upstream answered " + strconv.Itoa(resp.StatusCode) + " with a compressed body (Content-Encoding) the gateway cannot translate")
		}
		prefix = a.x.errorBody(resp.StatusCode, prefix)
		h.Del("Content-Encoding")
		h["Content-Type"] = jsonContentType
	}
	if !relayed {
		h.Set("Content-Length", strconv.Itoa(len(prefix)))
	}
	setGatewayHeaders(h, c)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	if relayed {
		flushingCopy(c.w, prefix, resp.Body, a.g.writeTimeout)
	} else {
		_, _ = c.w.Write(prefix)
	}
	return verdictDone
}

// flushingCopy sends prefix, then relays r to w as it comes, each read
// flushed, so nothing the upstream sent waits in the gateway's buffers for
// what it has not; each write is bounded by timeout, so a client that stops
// reading cannot hold the handler.
func flushingCopy(w http.ResponseWriter, prefix []byte, r io.Reader, timeout time.Duration) {
	wd := newWriteDeadline(w, timeout)
	defer wd.clear()
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		wd.extend()
		_, err := w.Write(b)
		return err == nil && rc.Flush() == nil
	}
	if !send(prefix) {
		return
	}
	bufp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bufp)
	for {
		n, err := r.Read(*bufp)
		if n > 0 && !send((*bufp)[:n]) {
			return
		}
		if err != nil {
			return
		}
	}
}

// chunkPool holds stream relay buffers: 8 KiB holds any SSE event a
// provider sends in one read, and keeps 1,000 open streams small.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}
