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

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The pipeline (SPEC section 5): try candidates in order, each 1 +
// retry.attempts times; move on after a failover-safe failure; hand any
// other 4xx to the client; never fail over once a byte reached the client.
//
// Each attempt has three moments, and its CLIENT span marks them: start
// (the request is sent), first byte (the first chunk of a stream, or the
// whole body of a unary answer) and end.

var (
	errFirstByteTimeout = errors.New("first-byte timeout")
	errTotalTimeout     = errors.New("total timeout")
)

// attemptFailure is a failover-safe failure, kept for the all-failed answer.
type attemptFailure struct {
	target  string
	attempt int
	status  int    // what the client gets if this is the last failure
	reason  string // error.type: an HTTP status, "timeout", "transport", ...
}

// verdict says what the pipeline does after an attempt.
type verdict uint8

const (
	verdictDone       verdict = iota // a response went to the client, or the client left
	verdictRetry                     // failover-safe: try again (this target if tries remain)
	verdictNextTarget                // failover-safe, and retrying this target is pointless (open circuit, full queue)
)

// Failure reasons that are not HTTP statuses (error.type values).
const (
	reasonTimeout      = "timeout"
	reasonTransport    = "transport"
	reasonCircuitOpen  = "circuit_open"
	reasonQueueFull    = "queue_full"
	reasonCanceled     = "canceled"
	reasonStreamBroken = "stream_interrupted"
	reasonOverflow     = "context_length_exceeded"
)

// maxErrorBody bounds how much of an upstream error body is read: to find
// a context-overflow marker, or to drain it so the connection is reused.
const maxErrorBody = 1 << 20

func (g *Gateway) runPipeline(ctx context.Context, c *call, order []*Candidate) {
	for _, cand := range order {
		for try := 0; try < cand.Tries; try++ {
			v := g.attempt(ctx, c, cand)
			if v == verdictDone {
				return
			}
			if ctx.Err() != nil { // the client left: nobody to answer
				return
			}
			if v == verdictNextTarget {
				break
			}
		}
	}
	g.allFailed(c)
}

// attempt makes one upstream try and, unless it fails over, answers the
// client.
func (g *Gateway) attempt(ctx context.Context, c *call, cand *Candidate) verdict {
	c.attempts++
	c.target = cand.Target
	u := cand.upstream
	selection := c.selection
	if c.attempts > 1 {
		selection = telemetry.SelectionFailover
	}
	ctx, span := g.tracer.Start(ctx, cand.spanName(c.ep.operation), trace.WithSpanKind(trace.SpanKindClient), g.timestamp(),
		trace.WithAttributes(
			telemetry.KeyOperationName.String(c.ep.operation),
			telemetry.KeyProviderName.String(u.kind),
			telemetry.KeyRequestModel.String(cand.Model),
			telemetry.KeyServerAddress.String(u.host),
			telemetry.KeyServerPort.Int(u.port),
			telemetry.KeyTarget.String(cand.Target),
			telemetry.KeyRequestedModel.String(c.fields.Model),
			telemetry.KeyAttempt.Int(c.attempts),
			telemetry.KeySelection.String(selection),
		))
	a := attemptRun{g: g, c: c, cand: cand, span: span}
	v := a.run(ctx)
	a.finish()
	return v
}

// attemptRun is the state of one attempt, ended into its span by finish.
type attemptRun struct {
	g    *Gateway
	c    *call
	cand *Candidate
	span trace.Span

	status  int           // upstream HTTP status (0: none)
	reason  string        // error.type ("" on success)
	outcome string        // firstbyte.outcome
	ttfb    time.Duration // set on a 2xx that reached its first byte
	hasTTFB bool
}

func (a *attemptRun) finish() {
	attrs := make([]attribute.KeyValue, 0, 4)
	if a.status != 0 {
		attrs = append(attrs, telemetry.KeyHTTPStatus.Int(a.status))
	}
	if a.reason != "" {
		attrs = append(attrs, telemetry.KeyErrorType.String(a.reason))
	}
	if a.hasTTFB {
		attrs = append(attrs, telemetry.KeyTimeToFirstByte.Float64(a.ttfb.Seconds()))
	}
	attrs = append(attrs, telemetry.KeyOutcome.String(a.outcome))
	a.span.SetAttributes(attrs...)
	if a.outcome != telemetry.OutcomeSuccess && a.outcome != telemetry.OutcomeClientError {
		a.span.SetStatus(codes.Error, a.reason)
	}
	a.span.End(a.g.timestamp())
}

// failover records a failover-safe failure.
func (a *attemptRun) failover(status int, reason string, countsAgainstProvider bool) verdict {
	a.status2(status)
	a.reason, a.outcome = reason, telemetry.OutcomeFailover
	if countsAgainstProvider {
		a.cand.upstream.breaker.record(false)
	}
	clientStatus := status
	switch {
	case reason == reasonTimeout:
		clientStatus = http.StatusGatewayTimeout
	case reason == reasonTransport:
		clientStatus = http.StatusBadGateway
	case reason == reasonCircuitOpen || reason == reasonQueueFull:
		clientStatus = http.StatusServiceUnavailable
	case status < 400:
		clientStatus = http.StatusBadGateway
	}
	a.c.failures = append(a.c.failures, attemptFailure{target: a.cand.Target, attempt: a.c.attempts, status: clientStatus, reason: reason})
	if reason == reasonCircuitOpen || reason == reasonQueueFull {
		return verdictNextTarget
	}
	return verdictRetry
}

// status2 records the upstream status only when there was one.
func (a *attemptRun) status2(s int) {
	if s >= 100 {
		a.status = s
	}
}

func (a *attemptRun) run(ctx context.Context) verdict {
	c, u := a.c, a.cand.upstream
	if !u.breaker.allow() {
		return a.failover(0, reasonCircuitOpen, false)
	}
	if u.limiter != nil {
		if !u.limiter.acquire(ctx) {
			if ctx.Err() != nil {
				a.reason, a.outcome = reasonCanceled, telemetry.OutcomeCanceled
				return verdictDone
			}
			return a.failover(0, reasonQueueFull, false)
		}
		defer u.limiter.release()
	}

	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// One timer bounds the wait for the first byte (for a unary answer, the
	// whole of it: first_byte <= total, so total never matters there); a
	// stream arms its total-time timer only once it has started.
	firstByte := time.AfterFunc(u.firstByte, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()

	body := c.fields.withModel(nil, c.body, a.cand.Model)
	target := u.endpointURL(c.ep)
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           target, // shared, never modified: built once per provider and endpoint
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        make(http.Header, 8),
		Body:          io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
		Host:          target.Host,
	}).WithContext(actx)
	copyRequestHeaders(req.Header, c.r.Header)
	u.setAuth(req.Header)
	a.g.propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))

	sent := a.g.now()
	// The transport directly: a client would only add redirect handling,
	// which a provider's API never needs (a 3xx fails over below).
	resp, err := a.g.transport.RoundTrip(req)
	if err != nil {
		c.upstreamWait += a.g.since(sent)
		return a.transportFailure(ctx, actx)
	}
	defer resp.Body.Close()

	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		if c.fields.Stream {
			return a.relayStream(ctx, actx, cancel, resp, sent, firstByte)
		}
		return a.relayUnary(ctx, actx, resp, sent, firstByte)
	case failoverStatus(s):
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody)) // lets the connection be reused
		c.upstreamWait += a.g.since(sent)
		return a.failover(s, strconv.Itoa(s), true)
	case s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge:
		errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		c.upstreamWait += a.g.since(sent)
		if isContextOverflow(s, errBody) {
			// The provider's own context limit: another provider may have a
			// larger window. Not the provider's fault, so no breaker strike.
			return a.failover(s, reasonOverflow, false)
		}
		return a.passThrough(resp, errBody)
	case s >= 400 && s < 500:
		return a.passThrough(resp, nil)
	default: // 1xx, 3xx: nothing a client could use
		c.upstreamWait += a.g.since(sent)
		return a.failover(s, strconv.Itoa(s), true)
	}
}

// transportFailure classifies an error before any response byte arrived.
func (a *attemptRun) transportFailure(ctx, actx context.Context) verdict {
	if ctx.Err() != nil {
		a.reason, a.outcome = reasonCanceled, telemetry.OutcomeCanceled
		return verdictDone
	}
	if errors.Is(context.Cause(actx), errFirstByteTimeout) || errors.Is(context.Cause(actx), errTotalTimeout) {
		return a.failover(0, reasonTimeout, true)
	}
	return a.failover(0, reasonTransport, true)
}

// failoverStatus: statuses after which another try may succeed.
func failoverStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500
}

// isContextOverflow recognises the providers' "prompt too long for this
// model" answers (OpenAI's context_length_exceeded, Anthropic's "prompt is
// too long", a 413 request_too_large).
func isContextOverflow(status int, body []byte) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	for _, marker := range overflowMarkers {
		if bytes.Contains(body, marker) {
			return true
		}
	}
	return false
}

var overflowMarkers = [][]byte{
	[]byte("context_length_exceeded"),
	[]byte("prompt is too long"),
	[]byte("maximum context length"),
	[]byte("context window"),
}

// relayUnary waits for the whole answer (that moment is the unary TTFB
// sample), then sends it.
func (a *attemptRun) relayUnary(ctx, actx context.Context, resp *http.Response, sent time.Time, firstByte *time.Timer) verdict {
	buf := getBuffer()
	defer putBuffer(buf)
	_, err := buf.ReadFrom(resp.Body)
	a.c.upstreamWait += a.g.since(sent)
	if err != nil {
		a.status2(resp.StatusCode)
		return a.transportFailure(ctx, actx)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = a.g.since(sent), true
	a.status, a.outcome = resp.StatusCode, telemetry.OutcomeSuccess
	a.cand.upstream.breaker.record(true)
	h := a.c.w.Header()
	copyResponseHeaders(h, resp.Header, false)
	a.setGatewayHeaders(h)
	a.c.status = resp.StatusCode
	a.c.w.WriteHeader(resp.StatusCode)
	_, _ = a.c.w.Write(buf.Bytes())
	return verdictDone
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
		a.status2(resp.StatusCode)
		if err == io.EOF && ctx.Err() == nil && context.Cause(actx) == nil {
			return a.failover(resp.StatusCode, reasonTransport, true) // a 2xx with no body at all
		}
		return a.transportFailure(ctx, actx)
	}
	firstByte.Stop()
	a.ttfb, a.hasTTFB = a.g.since(sent), true
	a.status = resp.StatusCode
	a.cand.upstream.breaker.record(true)
	total := time.AfterFunc(a.cand.upstream.total-a.ttfb, func() { cancel(errTotalTimeout) })
	defer total.Stop()

	h := c.w.Header()
	copyResponseHeaders(h, resp.Header, true)
	a.setGatewayHeaders(h)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	flusher, _ := c.w.(http.Flusher)
	tail := [2]byte{}
	write := func(p []byte) bool {
		if _, werr := c.w.Write(p); werr != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
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
	// The upstream broke mid-stream: finish any partial event, then say so.
	a.outcome, a.reason = telemetry.OutcomeBroken, reasonStreamBroken
	a.cand.upstream.breaker.record(false)
	msg := "upstream stream interrupted after the first byte"
	if errors.Is(context.Cause(actx), errTotalTimeout) {
		msg = "upstream exceeded its total timeout mid-stream"
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
	a.cand.upstream.breaker.record(true) // the provider answered; the request was at fault
	h := c.w.Header()
	copyResponseHeaders(h, resp.Header, prefix == nil)
	if prefix != nil {
		h.Set("Content-Length", strconv.Itoa(len(prefix)))
	}
	a.setGatewayHeaders(h)
	c.status = resp.StatusCode
	c.w.WriteHeader(resp.StatusCode)
	if prefix != nil {
		_, _ = c.w.Write(prefix)
		return verdictDone
	}
	_, _ = io.Copy(c.w, resp.Body)
	return verdictDone
}

func (a *attemptRun) setGatewayHeaders(h http.Header) {
	setGatewayHeaders(h, a.c)
}

func setGatewayHeaders(h http.Header, c *call) {
	h[HeaderTarget] = []string{c.target}
	h[HeaderAttempts] = []string{strconv.Itoa(c.attempts)}
	h[HeaderSelection] = []string{c.selection}
}

// allFailed answers after every candidate failed over: the last failure's
// status (502 transport, 504 timeout, 503 circuit open or queue full),
// with a body naming every attempt.
func (g *Gateway) allFailed(c *call) {
	last := c.failures[len(c.failures)-1]
	msg := "all " + strconv.Itoa(c.attempts) + " attempts failed:"
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
	setGatewayHeaders(c.w.Header(), c)
	c.status = last.status
	writeErrorExtra(c.w, c.ep.shape, last.status, errTypeUpstream, "all_targets_failed", msg, extra)
}

// Request headers passed upstream. Everything else stays behind: above all
// the client's own Authorization and x-api-key, which are for the gateway.
var forwardedRequestHeaders = []string{
	"Accept", "User-Agent", "Anthropic-Version", "Anthropic-Beta", "Openai-Beta", "X-Stainless-Lang",
}

func copyRequestHeaders(dst, src http.Header) {
	dst["Content-Type"] = []string{"application/json"}
	for _, k := range forwardedRequestHeaders {
		if v, ok := src[k]; ok {
			dst[k] = v
		}
	}
}

// hopHeaders are per-connection and never relayed (RFC 9110 section 7.6.1).
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// accountHeaders identify the operator's provider account or set its
// cookies; a gateway client has no business seeing them.
var accountHeaders = map[string]bool{
	"Set-Cookie": true, "Openai-Organization": true, "Openai-Project": true, "Anthropic-Organization-Id": true,
}

func copyResponseHeaders(dst, src http.Header, dropLength bool) {
	for k, v := range src {
		if hopHeaders[k] || accountHeaders[k] || (dropLength && k == "Content-Length") {
			continue
		}
		dst[k] = v
	}
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
