package router

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/attemptspan"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// An attempt is one try of one candidate for a client request, a value
// that owns everything the try uses from the moment it is sent until it
// ends: the upstream request and answer, its timers, its pooled buffers
// and its claim on the answer budget. It reads the client request and
// never writes into it; what happened is its Result, which the pipeline
// (Route.Settle, Route.End) reads.
//
// It runs in two steps. reach sends the request and waits for the first
// byte the client could be given: a stream's first event (translated when
// the formats differ), a unary answer whole and checked, or an upstream
// error the client gets as it is. Nothing reaches the client in reach, so
// a failure there can fail over, and two attempts of one request can
// race it. deliver then sends that answer to the client; a stream is
// relayed to its end. close gives everything back, on every path.

var (
	errFirstByteTimeout = errors.New("first-byte timeout")
	errTotalTimeout     = errors.New("total timeout")
	errIdleTimeout      = errors.New("idle timeout")                 // a stream paused longer than timeout.idle
	errStopping         = errors.New("the gateway is shutting down") // Options.Stop ended
)

// Result is what one attempt did: what its span records and what the
// route decides on (package attemptspan).
type Result = attemptspan.Result

// Details of a timeout: which bound ran out.
const (
	detailFirstByteTimeout = "first-byte timeout"
	detailTotalTimeout     = "total timeout"
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

// answerKind is what reach found for the client.
type answerKind uint8

const (
	answerNone        answerKind = iota // nothing: the attempt failed (or the client left)
	answerUnary                         // a whole, checked unary answer
	answerStream                        // a stream, its first output in hand
	answerPassThrough                   // the upstream's own error, for the client as it is
)

// attempt is one try; see the comment above.
type attempt struct {
	// immutable after newAttempt
	g    *Gateway
	c    *call // the client request: read only
	cand *mode.Candidate
	x    exchange // the body sent, and what the answer goes through

	ctx       context.Context // the client request's
	actx      context.Context // the attempt's: ends with a cause (timeout, stopping, hedge lost)
	cancel    context.CancelCauseFunc
	stopStop  func() bool // detaches the shutdown watch
	firstByte timeout     // armed until the first byte
	total     timeout     // the total-time bound, once a unary answer's headers or a stream's first event came
	idle      timeout     // a stream's bound on the pause between two chunks, once it started
	sent      time.Time
	resp      *http.Response

	res  Result
	kind answerKind
	// stopping: the shutdown grace ended the attempt before an answer; the
	// client gets a 503 saying so.
	stopping bool
	closed   bool // close gave everything back

	// answer is a failed-over upstream error, for the client should it be
	// the last failure (nil: none to show).
	answer *upstreamAnswer

	unary unaryAnswer  // answerUnary
	strm  relay.Stream // answerStream
	pass  passAnswer   // answerPassThrough
}

// newAttempt prepares t's attempt of c's request. Everything it sends
// (URL, body, credentials) comes from t, built for t's candidate alone.
func (g *Gateway) newAttempt(ctx context.Context, c *call, t *Turn) *attempt {
	a := &attempt{g: g, c: c, cand: t.Cand, x: t.x, ctx: ctx}
	a.actx, a.cancel = context.WithCancelCause(ctx)
	if g.stop != nil {
		// The end of the shutdown grace ends the attempt: a stream then
		// closes with an error event, a request still waiting gets a 503.
		a.stopStop = context.AfterFunc(g.stop, func() { a.cancel(errStopping) })
	}
	return a
}

// reach sends the request and waits for what the client could be given
// first. It reports whether there is an answer to deliver; when there is
// none, the Result says why (a failover-safe failure, or the client left).
func (a *attempt) reach() bool {
	c, u := a.c, a.cand.Upstream
	// One timer bounds the wait for the first byte: a unary answer's
	// response headers (its body is then bounded by total, reachUnary), a
	// stream's first event (its total-time timer is armed once it started).
	a.firstByte = a.g.afterFunc(u.FirstByte, func() { a.cancel(errFirstByteTimeout) })

	body := a.x.body
	target := a.x.url
	if cl := u.Cloud; cl != nil {
		target = cl.Target(target, a.cand.Model, c.fields.Stream)
		body = cl.Body(body, upstream.Betas(c.r.Header))
	}
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
	}).WithContext(a.actx)
	relay.CopyRequestHeaders(req.Header, c.r.Header, a.x.conv == convNone)
	for k, v := range u.Headers { // providers.X.headers
		req.Header[k] = v
	}
	u.SetAuth(req.Header)
	if cl := u.Cloud; cl != nil {
		if err := cl.Authorize(req, body, c.fields.Stream); err != nil {
			a.failover(0, fault.ErrorAuth) // logged where the credential was fetched
			return false
		}
	}
	a.g.propagator.Inject(a.actx, relay.HeaderCarrier(req.Header))

	a.sent = a.g.now()
	// The transport directly: a client would only add redirect handling,
	// which a provider's API never needs (a 3xx fails over below).
	resp, err := a.g.transportOf(u).RoundTrip(req)
	if err != nil {
		a.res.Wait += a.g.since(a.sent)
		a.transportFailure(err)
		return false
	}
	a.resp = resp

	s := resp.StatusCode
	if s >= 200 && s < 300 {
		// A success that spent a limit cools the provider until its reset;
		// what remains of its request limit paces the attempts until then.
		// Relative resets count from when the answer came, not from
		// when the attempt was sent: the window turns no earlier.
		sig := upstream.ReadRateSignal(resp.Header, a.g.now())
		a.res.RetryAt = sig.Exhausted
		if sig.Requests >= 0 {
			a.res.Remaining, a.res.HasRemaining, a.res.RemainingReset = sig.Requests, true, sig.RequestsReset
		}
		if c.fields.Stream {
			if u.Cloud != nil {
				u.Cloud.Response(resp)
			}
			return a.reachStream()
		}
		return a.reachUnary()
	}
	if s == http.StatusRequestEntityTooLarge || fault.NeedsBody(s) || u.Cloud != nil && s >= 400 ||
		fault.Classify(s, "") == fault.Full || fault.Disabling(fault.OfAnswer(s, nil)) {
		return a.reachErrorAnswer()
	}
	return a.reachClientError(nil, false)
}

// run is one attempt of the gateway's driver, not raced: reach, then
// deliver what it found to w under route's headers, noting a stored
// response's id before the answer goes out and after; then close. ok is
// whether there was an answer (status: what the client got); when there
// was none, the Result says why.
func (a *attempt) run(w http.ResponseWriter, route *Route) (status int, ok bool) {
	if ok = a.reach(); ok {
		if a.c.stores {
			a.g.noteStored(a) // a client may continue it the moment it has it
		}
		status = a.deliver(w, route)
		if a.c.stores {
			a.g.noteStored(a) // a stream's first event may have come in pieces
		}
	}
	a.close()
	return status, ok
}

// transportOf is what carries u's requests: its own transport (its http2
// and tls settings), else the gateway's.
func (g *Gateway) transportOf(u *upstream.Provider) http.RoundTripper {
	if u.Transport != nil {
		return u.Transport
	}
	return g.transport
}

// deliver sends what reach found to the client, with the routing
// decision's headers (route, the request's route; target, the target
// that served), and returns the status the client got.
func (a *attempt) deliver(w http.ResponseWriter, route *Route) int {
	a.res.Delivered = true
	switch a.kind {
	case answerUnary:
		return a.relayTo(w, route).Unary(a.unary.answer)
	case answerStream:
		return a.deliverStream(w, route)
	case answerPassThrough:
		return a.relayTo(w, route).PassThrough(a.pass.prefix, a.pass.whole, a.x.errorBody)
	}
	return 0
}

// relayTo is what relaying a's answer to w reads, under route's headers.
// Out of line: its Answer would take room in deliver's frame and
// deliverStream's, which a stream holds while it waits (relay.Stream.Relay).
//
//go:noinline
func (a *attempt) relayTo(w http.ResponseWriter, route *Route) *relay.Answer {
	return &relay.Answer{W: w, Resp: a.resp, Converted: a.x.conv != convNone, Renamed: a.x.answerModel != "",
		APIKey: a.cand.Upstream.APIKey, WriteTimeout: a.g.writeTimeout,
		Gateway: func(h http.Header) { a.g.setGatewayHeaders(h, route, a.cand.Target) }}
}

// close gives back everything the attempt holds, however it ended, once.
func (a *attempt) close() {
	if a.closed {
		return
	}
	a.closed = true
	if a.firstByte != nil {
		a.firstByte.Stop()
	}
	if a.total != nil {
		a.total.Stop()
	}
	if a.idle != nil {
		a.idle.Stop()
	}
	if a.stopStop != nil {
		a.stopStop()
	}
	a.cancel(nil)
	if a.resp != nil {
		a.resp.Body.Close()
	}
	a.unary.release()
	a.strm.Release()
}

// failover records a failover-safe failure.
func (a *attempt) failover(status int, reason string) {
	a.setStatus(status)
	a.res.ErrorType, a.res.Outcome = reason, telemetry.OutcomeFailover
	a.res.HasTTFB = false
}

// setStatus records the upstream status only when there was one.
func (a *attempt) setStatus(s int) {
	if s >= 100 {
		a.res.Status = s
	}
}

// canceled records an end that says nothing of the provider: the client
// left, or the gateway is going.
func (a *attempt) canceled() {
	a.res.ErrorType, a.res.Outcome = fault.ErrorCanceled, telemetry.OutcomeCanceled
	a.res.HasTTFB = false
}

// transportFailure classifies err, which ended the attempt before any
// usable answer arrived.
func (a *attempt) transportFailure(err error) {
	switch cause := context.Cause(a.actx); {
	case a.ctx.Err() != nil:
		a.canceled()
	case errors.Is(cause, errStopping):
		// Not the provider's fault, and no other target could answer in
		// time either: the process is going.
		a.canceled()
		a.stopping = true
	case errors.Is(cause, errFirstByteTimeout):
		a.failover(0, fault.ErrorTimeout)
		a.res.Detail = detailFirstByteTimeout
	case errors.Is(cause, errTotalTimeout):
		a.failover(0, fault.ErrorTimeout)
		a.res.Detail = detailTotalTimeout
	case errors.Is(cause, errIdleTimeout):
		a.failover(0, fault.ErrorStall)
	case errors.Is(cause, errHedgeLost):
		a.res.ErrorType, a.res.Outcome, a.res.HasTTFB = fault.ErrorHedgeLost, telemetry.OutcomeHedgeLost, false
	default:
		a.failover(0, fault.ErrorTransport)
		a.res.Detail = relay.TransportReason(err) // "transport (connection refused)": what the client reads
	}
}

// abandon ends an attempt a panic cut short (a bug in the gateway: its
// transport, a translator), on the panic's way to recovered: as for the
// shutdown's cut, the gateway's own bug says nothing of the provider.
func (a *attempt) abandon() { a.canceled() }

// usage puts what the upstream reported on the result.
func (a *attempt) usage(u translate.Usage) {
	if u.Known {
		a.res.InputTokens, a.res.OutputTokens, a.res.HasUsage = u.InputTokens, u.OutputTokens, true
		a.res.CacheHit = u.CacheReadInputTokens > 0
	}
}

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

// The gateway's own headers on an answer (which of the upstream's cross
// is package relay's to say).

// setGatewayHeaders puts the routing decision on a response: the route's
// attempts, selection and skips, and target, the target of the last
// attempt ("": none).
func (g *Gateway) setGatewayHeaders(h http.Header, r *Route, target string) {
	h["Date"] = relay.Date(g.now()) // net/http's, on the gateway's clock, formatted once a second instead of per answer
	if target != "" {
		h[HeaderTarget] = []string{target}
	}
	h[HeaderAttempts] = []string{strconv.Itoa(r.Attempts())}
	h[HeaderSelection] = []string{r.Selection()}
	if r.hedge == HedgeWon || r.hedge == HedgeLost {
		h[HeaderHedged] = []string{r.hedge}
	}
	if skipped := r.Skipped(); len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, s := range skipped {
			names[i] = s.Target
		}
		h[HeaderSkipped] = []string{strings.Join(names, ",")}
	}
}

// The request path's timers: the hedge delay of a race and an attempt's
// timeouts (first byte, total, idle). Both kinds are made by the gateway's
// timer functions (newTimer, afterFunc): the real clock's, or a test's,
// which fires them when the test says rather than when the wall clock
// does.

// hedgeTimer is a timer for the race: the real one, or a test's.
type hedgeTimer interface {
	C() <-chan time.Time
	Stop() bool
}

// timeout is an attempt's timeout: it runs its function once its time is
// up, unless stopped first; Reset re-arms it (a stream's idle bound after
// each chunk). *time.Timer is one.
type timeout interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

func newRealTimer(d time.Duration) hedgeTimer { return realTimer{time.NewTimer(d)} }

func realAfterFunc(d time.Duration, f func()) timeout { return time.AfterFunc(d, f) }
