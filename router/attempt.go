package router

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Each attempt has three moments, and its CLIENT span marks them: start
// (the request is sent), first byte (the first chunk of a stream, or the
// whole body of a unary answer) and end. At the end the failure model
// (fault.Classify) judges it once; the span carries the verdict
// (firstbyte.fault) and the breaker is told the same.

var (
	errFirstByteTimeout = errors.New("first-byte timeout")
	errTotalTimeout     = errors.New("total timeout")
	errStopping         = errors.New("the gateway is shutting down") // Options.Stop ended
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
	verdictDone  verdict = iota // a response went to the client, or the client left
	verdictRetry                // failover-safe: try again (this target if tries remain)
)

// maxErrorDrain bounds how much of a failed-over error body is read and
// thrown away, so its connection can be reused.
const maxErrorDrain = 1 << 20

// maxErrorHeld bounds how much of an error body the client will get is
// held at once: enough to find a context-overflow marker or translate the
// error (providers' errors are a few hundred bytes), small enough that
// many at once stay small. A longer body in the client's own format is
// relayed past it as it comes.
const maxErrorHeld = 64 << 10

// attempt makes one upstream try, admitted by the provider's breaker, and,
// unless it fails over, answers the client.
func (g *Gateway) attempt(ctx context.Context, c *call, cand *Candidate, adm admission, x exchange) verdict {
	c.attempts++
	c.target = cand.Target
	selection := c.selection
	if c.attempts > 1 {
		selection = telemetry.SelectionFailover
	}
	a := attemptRun{g: g, c: c, cand: cand, x: x}
	ended := false
	defer func() {
		if !ended { // a panic: it goes on to recovered, which answers 500
			a.abandon(adm)
		}
	}()
	ctx, a.span = g.tracer.Start(ctx, cand.spanName(c.ep.operation), trace.WithSpanKind(trace.SpanKindClient), g.timestamp(),
		trace.WithAttributes(cand.attemptAttributes(c.ep.operation, c.fields.Model, c.attempts, selection)...))
	v := a.run(ctx)
	// The attempt span ends first: the tracker learns from it at once, so
	// the next request is ordered knowing this one. Only then does the
	// answer leave (apiHandler flushes it the moment the pipeline returns),
	// ahead of the request's own span and everything else telemetry does.
	// A stream's chunks went out as they came.
	ended = true
	a.finish(adm)
	return v
}

// attemptRun is the state of one attempt, ended into its span by finish.
type attemptRun struct {
	g    *Gateway
	c    *call
	cand *Candidate
	span trace.Span

	x     exchange        // the body sent, and what the answer goes through
	usage translate.Usage // the tokens the upstream reported

	status  int           // upstream HTTP status (0: none)
	reason  string        // error.type ("" on success)
	outcome string        // firstbyte.outcome
	ttfb    time.Duration // set on a 2xx that reached its first byte
	hasTTFB bool
}

// finish judges the attempt's end once, tells the breaker, and ends the
// span with the verdict on it.
func (a *attemptRun) finish(adm admission) {
	end := AttemptEnd{Status: a.status, ErrorType: a.reason, Outcome: a.outcome, TTFB: a.ttfb, HasTTFB: a.hasTTFB}
	if a.usage.Known {
		end.InputTokens, end.OutputTokens, end.HasUsage = a.usage.InputTokens, a.usage.OutputTokens, true
	}
	adm.resolve(end.breakerResult())
	end.endSpan(a.span, a.g.timestamp())
}

// abandon ends an attempt a panic cut short (a bug in the gateway: its
// transport, a translator), on the panic's way to recovered. The breaker
// hears neutral, as for the shutdown's cut (canceled): the gateway's own bug
// says nothing of the provider, so it must neither open nor close the
// circuit, yet the admission must be resolved, or a half-open probe would
// stay in flight for good and the provider be skipped for ever after.
func (a *attemptRun) abandon(adm admission) {
	if a.span == nil { // the panic came before the span began
		adm.resolve(resultNeutral)
		return
	}
	a.reason, a.outcome = fault.ErrorCanceled, telemetry.OutcomeCanceled
	a.finish(adm)
}

// failover records a failover-safe failure.
func (a *attemptRun) failover(status int, reason string) verdict {
	a.setStatus(status)
	a.reason, a.outcome = reason, telemetry.OutcomeFailover
	clientStatus := status
	switch {
	case reason == fault.ErrorTimeout:
		clientStatus = http.StatusGatewayTimeout
	case reason == fault.ErrorResponseBufferFull:
		// The gateway's own answer buffers are full for now: unavailable,
		// worth a retry, and not the upstream's bad answer a 502 would say.
		clientStatus = http.StatusServiceUnavailable
	case status < 400:
		clientStatus = http.StatusBadGateway // transport, or an unusable answer
	}
	a.c.failures = append(a.c.failures, attemptFailure{target: a.cand.Target, attempt: a.c.attempts, status: clientStatus, reason: reason})
	if a.g.log.Enabled(context.Background(), slog.LevelDebug) {
		a.g.log.LogAttrs(context.Background(), slog.LevelDebug, "attempt failed over",
			slog.String("target", a.cand.Target), slog.String("upstream_model", a.cand.Model),
			slog.Int("attempt", a.c.attempts), slog.Int("status", status), slog.String("error_type", reason))
	}
	return verdictRetry
}

// setStatus records the upstream status only when there was one.
func (a *attemptRun) setStatus(s int) {
	if s >= 100 {
		a.status = s
	}
}

func (a *attemptRun) run(ctx context.Context) verdict {
	c, u := a.c, a.cand.upstream
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// One timer bounds the wait for the first byte (for a unary answer, the
	// whole of it: first_byte <= total, so total never matters there); a
	// stream arms its total-time timer only once it has started.
	firstByte := time.AfterFunc(u.firstByte, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()
	if a.g.stop != nil {
		// The end of the shutdown grace ends the attempt: relayStream then
		// closes the stream with an error event, transportFailure answers
		// a request still waiting with a 503.
		defer context.AfterFunc(a.g.stop, func() { cancel(errStopping) })()
	}

	body := a.x.body
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
	copyRequestHeaders(req.Header, c.r.Header, a.x.conv == convNone)
	u.setAuth(req.Header)
	a.g.propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))

	sent := a.g.now()
	// The transport directly: a client would only add redirect handling,
	// which a provider's API never needs (a 3xx fails over below).
	resp, err := a.g.transport.RoundTrip(req)
	if err != nil {
		c.upstreamWait += a.g.since(sent)
		defer c.explainTransport(c.attempts, err) // "transport (connection refused)" for the client
		return a.transportFailure(ctx, actx)
	}
	defer resp.Body.Close()

	s := resp.StatusCode
	if s >= 200 && s < 300 {
		if c.fields.Stream {
			return a.relayStream(ctx, actx, cancel, resp, sent, firstByte)
		}
		return a.relayUnary(ctx, actx, resp, sent, firstByte)
	}
	if fault.Classify(s, "") == fault.Full { // 408, 429, 5xx, and a 1xx or 3xx no client could use
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorDrain)) // lets the connection be reused
		c.upstreamWait += a.g.since(sent)
		return a.failover(s, strconv.Itoa(s))
	}
	if s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge || a.x.conv != convNone {
		errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorHeld+1))
		whole := len(errBody) <= maxErrorHeld // else there is more to come
		c.upstreamWait += a.g.since(sent)
		if (s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge) && translate.IsContextOverflow(s, errBody) {
			// The provider's own context limit: another provider may have a
			// larger window. Not the provider's fault.
			return a.failover(s, fault.ErrorContextOverflow)
		}
		return a.passThrough(resp, errBody, whole)
	}
	return a.passThrough(resp, nil, false)
}

// transportFailure classifies an error before any usable answer arrived.
func (a *attemptRun) transportFailure(ctx, actx context.Context) verdict {
	if ctx.Err() != nil {
		a.reason, a.outcome = fault.ErrorCanceled, telemetry.OutcomeCanceled
		return verdictDone
	}
	if errors.Is(context.Cause(actx), errStopping) {
		// Not the provider's fault, and no other target could answer in
		// time either: the process is going.
		a.reason, a.outcome = fault.ErrorCanceled, telemetry.OutcomeCanceled
		c := a.c
		setGatewayHeaders(c.w.Header(), c)
		a.g.fail(c, http.StatusServiceUnavailable, errTypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
		return verdictDone
	}
	if errors.Is(context.Cause(actx), errFirstByteTimeout) || errors.Is(context.Cause(actx), errTotalTimeout) {
		return a.failover(0, fault.ErrorTimeout)
	}
	return a.failover(0, fault.ErrorTransport)
}
