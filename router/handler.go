package router

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/attemptspan"
	"github.com/firstbyte-dev/firstbyte/router/conn"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/preference"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Request and response headers of the client API.
const (
	HeaderTarget        = "X-Firstbyte-Target"
	HeaderAttempts      = "X-Firstbyte-Attempts"
	HeaderSelection     = "X-Firstbyte-Selection"
	HeaderProviderOrder = "X-Firstbyte-Provider-Order"
	HeaderSkipped       = "X-Firstbyte-Skipped"
	// HeaderUpstreamRequestID carries the provider's own id of the answer
	// (x-request-id, request-id, apim-request-id, ...), whatever the
	// provider calls it.
	HeaderUpstreamRequestID = relay.HeaderUpstreamRequestID
)

// request is what the client sent, as decoded: its endpoint, body and the
// fields read from it. It is written once, before the route is built, and
// only read after: the route builds each candidate's exchange from it.
type request struct {
	ep     *endpoint
	body   []byte
	fields reqbody.Fields
	alias  string // the alias the client sent ("" none): fields.Model is its model
	stores bool   // its response is left stored at the provider (reqbody.Stores)
}

// call is one client request in flight: what the client sent, the route
// its attempts take, and what the client got. Attempts read it; only the
// handler and the pipeline driver write it.
type call struct {
	request
	w    http.ResponseWriter
	r    *http.Request
	pref *preference.Preference // the client's provider preferences (nil: none)
	span trace.Span             // the request's SERVER span

	route    Route                           // its way through the candidates
	orderBuf [mode.RankedCap]*mode.Candidate // the route's order, without an allocation
	turn     Turn                            // the attempt run is on: here, not in run's frame, which a stream holds while it waits
	status   int                             // what the client got (0: nothing written, e.g. it went away)
	target   string                          // the target of the last attempt
	// answer is the last failed-over upstream error, for the client when
	// every candidate fails (nil: the last failure had none to show).
	answer       *upstreamAnswer
	upstreamWait time.Duration
	spanEnded    bool
	// ending is the last attempt's span end, held from the route's Settle
	// until the client has its answer (endCall).
	ending attemptspan.End
}

// serveHTTP is the entry of every client request: it refuses a request
// framed two ways, recovers a panic into an answer in the caller's shape,
// and writes the request's log line once the answer has gone out.
func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &responseWriter{ResponseWriter: w, g: g, start: g.now()}
	defer func() {
		if v := recover(); v != nil {
			g.recovered(rw, r, v)
		}
	}()
	if !refuseFraming(rw, r) {
		g.mux.ServeHTTP(rw, r)
	}
	if g.logRequests {
		g.logRequest(r, rw)
	}
}

// refuseFraming answers a request framed two ways (out of serveHTTP's
// frame, which a stream holds while it waits).
//
//go:noinline
func refuseFraming(rw *responseWriter, r *http.Request) bool {
	fault := conn.FramingFault(r)
	if fault == "" {
		return false
	}
	rw.Header().Set("Connection", "close")
	apierror.Write(rw, shapeForPath(r.URL.Path), http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_framing", fault)
	return true
}

// The call's state changes here only: the pipeline's drivers, the
// all-failed answer and the panic handler report through these.

// tried notes that an attempt at target is running (X-Firstbyte-Target).
func (c *call) tried(target string) { c.target = target }

// answered notes the status the client got.
func (c *call) answered(status int) { c.status = status }

// attemptEnded adds what an attempt waited on its upstream to the
// request's upstream wait.
func (c *call) attemptEnded(a *attempt) { c.upstreamWait += a.res.Wait }

// failedOver keeps a failed-over attempt's upstream error, the client's
// answer should it be the last failure (nil: the gateway's own).
func (c *call) failedOver(a *attempt) { c.answer = a.answer }

// attemptSettled takes the span end of an attempt the route settled: the
// last attempt's is held until the client has its answer (endCall), any
// other ends now.
func (c *call) attemptSettled(end attemptspan.End, last bool) {
	if last {
		end, c.ending = c.ending, end // none was held before: one attempt is the last
	}
	end.End()
}

// endSpan ends the request's SERVER span, once, and the last attempt's
// span if it is still held (a panic's way out: recovered).
func (c *call) endSpan(opts ...trace.SpanEndOption) {
	c.ending.End()
	if !c.spanEnded {
		c.span.End(opts...)
		c.spanEnded = true
	}
}

// flush sends what has been written to the client now: before the spans
// end, so telemetry never delays an answer.
func (c *call) flush() {
	if f, ok := c.w.(http.Flusher); ok && c.status != 0 { // nothing written: flushing would send a 200
		f.Flush()
	}
}

// apiHandler decodes a client request, finds and orders its candidates and
// runs the pipeline, all under one SERVER span that continues an incoming
// traceparent.
func (g *Gateway) apiHandler(ep *endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, c := g.startCall(ep, w, r)
		g.serve(ctx, c)
		g.endCall(c)
	})
}

// The frames a stream's goroutine holds while it waits on its upstream
// are every caller's of that wait, net/http's included: the runtime
// shrinks a parked goroutine's stack only to four times what it uses, so
// a held stream's stack is 16 kB once those frames pass 4 kB, 8 kB below.
// The work before and after the pipeline (the span's start and its
// attributes, the request's checks and its route) is therefore done in
// functions of their own, kept out of line, whose frames are gone by the
// time the stream waits.

// startCall starts the request's SERVER span, continuing an incoming
// traceparent, and makes its call; ctx travels as an argument: no
// request copy.
//
//go:noinline
func (g *Gateway) startCall(ep *endpoint, w http.ResponseWriter, r *http.Request) (context.Context, *call) {
	ctx := g.propagator.Extract(r.Context(), relay.HeaderCarrier(r.Header))
	ctx, span := g.tracer.Start(ctx, ep.spanName, trace.WithSpanKind(trace.SpanKindServer), g.timestamp(),
		trace.WithAttributes(semconv.HTTPRequestMethodPost, semconv.HTTPRoute(ep.path)))
	c := &call{request: request{ep: ep}, w: w, r: r, span: span}
	if rw, ok := w.(*responseWriter); ok {
		rw.call = c
	}
	return ctx, c
}

// endCall flushes the answer, then ends the SERVER span with what the
// request came to.
//
//go:noinline
func (g *Gateway) endCall(c *call) {
	span := c.span
	c.flush()      // the client has its whole answer before the spans end
	c.ending.End() // the last attempt's span: the tracker's sample

	attrs := []attribute.KeyValue{
		telemetry.KeyHTTPStatus.Int(c.status),
		telemetry.KeyUpstreamWait.Float64(c.upstreamWait.Seconds()),
	}
	if n := c.route.Attempts(); c.fields.Model != "" && n > 0 {
		attrs = append(attrs, telemetry.KeyRequestedModel.String(c.fields.Model),
			telemetry.KeySelection.String(c.route.Selection()), telemetry.KeyTarget.String(c.target),
			telemetry.KeyAttempt.Int(n))
	}
	if h := c.route.HedgeResult(); h != "" {
		attrs = append(attrs, telemetry.KeyHedge.String(h))
	}
	if a := c.route.AffinityResult(); a != "" {
		attrs = append(attrs, telemetry.KeyAffinity.String(a))
	}
	if c.pref != nil {
		attrs = append(attrs, telemetry.KeyPreference.String(c.pref.Summary()))
	}
	if c.status >= 500 || c.status == 0 {
		span.SetStatus(codes.Error, "")
	}
	span.SetAttributes(attrs...)
	span.End(g.timestamp())
	c.spanEnded = true
}

// serve runs one request; every exit writes exactly one response unless the
// client has gone. It reads as its three steps: the request, checked (read),
// its route (route), and the route driven with real attempts (run).
func (g *Gateway) serve(ctx context.Context, c *call) {
	eligible, ok := g.read(c)
	if ok && g.route(c, eligible) {
		g.run(ctx, c)
	}
}

// read reads and checks c's request: the client's key, its body, its
// model (an alias resolved) and the candidates eligible for it. false: the
// client has its answer (an error). Out of line: see startCall.
//
//go:noinline
func (g *Gateway) read(c *call) (eligible []*mode.Candidate, ok bool) {
	if !g.authorized(c.r) {
		g.fail(c, http.StatusUnauthorized, apierror.TypeAuth, "invalid_api_key", "missing or invalid API key")
		return nil, false
	}
	if !isJSON(upstream.HeaderValue(c.r.Header, "Content-Type")) {
		g.fail(c, http.StatusUnsupportedMediaType, apierror.TypeInvalidRequest, "unsupported_media_type", "Content-Type must be application/json")
		return nil, false
	}
	if c.r.ContentLength > g.maxBody {
		g.fail(c, http.StatusRequestEntityTooLarge, apierror.TypeTooLarge, "request_too_large", "request body exceeds limits.max_body ("+strconv.FormatInt(g.maxBody, 10)+" bytes)")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, g.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			g.fail(c, http.StatusRequestEntityTooLarge, apierror.TypeTooLarge, "request_too_large", "request body exceeds limits.max_body ("+strconv.FormatInt(g.maxBody, 10)+" bytes)")
			return nil, false
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// limits.read_timeout ran out mid-body (a client trickling it):
			// say so, and do not keep the connection.
			c.w.Header().Set("Connection", "close")
			g.fail(c, http.StatusRequestTimeout, apierror.TypeInvalidRequest, "request_timeout", "the request body did not arrive within limits.read_timeout")
			return nil, false
		}
		g.fail(c, http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_body", "could not read request body")
		return nil, false
	}
	c.body = body
	fields, err := reqbody.Scan(body)
	if err != nil {
		g.fail(c, http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_request", err.Error())
		return nil, false
	}
	c.body, c.fields = reqbody.WithoutProvider(body, &fields), fields
	g.resolveAlias(c)
	eligible = g.routes[c.ep.family][c.fields.Model]
	if len(eligible) == 0 {
		g.fail(c, http.StatusNotFound, apierror.TypeNotFound, "model_not_found", "model "+reqbody.Quote(c.fields.Model)+" is not served by this gateway for "+c.ep.path)
		return nil, false
	}
	if bad := reqbody.Check(c.ep.input, &c.fields); bad.Msg != "" {
		c.status = http.StatusBadRequest
		apierror.WriteParam(c.w, c.ep.shape, http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_request", bad.Param, bad.Msg, nil)
		return nil, false
	}
	return eligible, true
}

// route builds c's route over its eligible candidates from what the
// request brings: the stored response's home, whether it may be sent twice
// at once, its output limit, the client's preferences or order, its prompt
// prefix. false: the client has its answer (preferences or an order it got
// wrong, or that leave no target). Out of line: see startCall.
//
//go:noinline
func (g *Gateway) route(c *call, eligible []*mode.Candidate) bool {
	c.stores = reqbody.Stores(c.ep.input, c.body)
	spec := routeSpec{model: c.fields.Model, eligible: eligible, buf: c.orderBuf[:0], req: &c.request, span: c.span,
		hedge:     reqbody.SideEffect(c.ep.input, c.body) == "", // a request that leaves state behind is never sent twice at once
		maxTokens: reqbody.OutputLimit(&c.fields),
	}
	if id := reqbody.PreviousResponseID(c.ep.input, c.body); id != "" {
		spec.home, _ = g.responseHome(id) // a follow-up of a stored response goes where it is stored
	}
	if p, bad := preference.Of(c.r.Header, c.fields.Provider); (p != nil || bad != nil) && !g.preferred(c, p, bad, eligible, &spec) {
		return false
	}
	if g.keepsPrefixes(c) {
		spec.prefix = affinity.Of(&c.fields, c.body)
	}
	if names, ok := c.r.Header[HeaderProviderOrder]; ok && spec.preset == nil { // preferences win over the short form
		spec.names, spec.manual = strings.Join(names, ","), true
	}
	if unknown := g.newRoute(&c.route, spec); unknown != "" {
		g.fail(c, http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_provider_order",
			HeaderProviderOrder+" names "+reqbody.Quote(unknown)+", which is not a target serving model "+reqbody.Quote(c.fields.Model))
		return false
	}
	return true
}

// authorized checks the client key when auth.keys is set, in constant time.
func (g *Gateway) authorized(r *http.Request) bool {
	if len(g.keys) == 0 {
		return true
	}
	key := r.Header.Get("x-api-key")
	if auth := r.Header.Get("Authorization"); key == "" && len(auth) > 7 && (auth[:7] == "Bearer " || auth[:7] == "bearer ") {
		key = auth[7:]
	}
	if key == "" {
		return false
	}
	ok := 0
	for _, k := range g.keys {
		ok |= subtle.ConstantTimeCompare([]byte(key), k)
	}
	return ok == 1
}

// resolveAlias turns an alias into its model, in the fields and in the
// body (so every path sends the model, never the alias, upstream),
// remembering the name the client sent for answers under response_model:
// requested.
func (g *Gateway) resolveAlias(c *call) {
	m, ok := g.aliases[c.fields.Model]
	if !ok {
		return
	}
	alias := c.fields.Model
	body := c.fields.WithModel(nil, c.body, m)
	if fields, err := reqbody.Scan(body); err == nil { // it scanned before; only the model changed
		fields.Provider = c.fields.Provider // stripped from the body already
		c.body, c.fields, c.alias = body, fields, alias
	}
}

// fail answers with the gateway's own error in the caller's shape.
func (g *Gateway) fail(c *call, status int, typ, code, msg string) {
	c.status = status
	apierror.Write(c.w, c.ep.shape, status, typ, code, msg)
}

func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// The gateway's driver of the pipeline (route.go): each Turn the route
// hands out gets a concurrency slot, an attempt (attempt.go) and its
// Result reported back; the route says when the request is done. When no
// candidate is left the client gets the all-failed answer.

// run drives c's route with real attempts, each raced against hedges when
// strategy.hedge is on (race.go, race_gateway.go).
func (g *Gateway) run(ctx context.Context, c *call) {
	t := &c.turn
	for {
		if !nextTurn(&c.route, t) {
			g.allFailed(c)
			return
		}
		lim := t.Cand.Upstream.Limiter
		if lim != nil && !lim.Acquire(ctx) {
			if ctx.Err() != nil {
				c.route.Abandon(t)
				return // the client left while waiting: nobody to answer
			}
			c.route.Skip(t, SkipQueueFull)
			continue
		}
		done := false
		if c.route.hedging != nil {
			done = g.race(ctx, c, t, lim)
		} else {
			done = g.attempt(ctx, c, t, lim)
		}
		if done || ctx.Err() != nil {
			return
		}
	}
}

// nextTurn puts the route's next turn in t: the Turn it returns by value
// takes room of its own in its caller's frame, which here is gone before
// the stream waits.
//
//go:noinline
func nextTurn(r *Route, t *Turn) bool {
	var ok bool
	*t, ok = r.Next()
	return ok
}

// attempt runs t's attempt holding its concurrency slot (lim nil: no
// limit), released however the attempt ends (a panic in it must not cost
// the provider a slot for good), and reports it to the route. What the
// next request must see (the provider's in-flight count, its admission
// and guards, the affinity) is settled before the answer leaves the
// gateway's buffers (apiHandler flushes once the pipeline returns); the
// attempt span's end, its conversion and the tracker's sample follow the
// flush (endCall), out of the client's wait (docs/benchmarks.md, "One
// request's CPU"). A stream's chunks went out as they came.
func (g *Gateway) attempt(ctx context.Context, c *call, t *Turn, lim *upstream.Limiter) (done bool) {
	if lim != nil {
		defer lim.Release()
	}
	a := g.beginAttempt(ctx, c, t)
	ended := false
	defer func() {
		if !ended { // a panic: it goes on to recovered, which answers 500
			a.abandon()
			a.close()
			c.route.End(t, a.res, g.timestamp())
		}
	}()
	if status, ok := a.run(c.w, &c.route); ok {
		c.answered(status)
	} else {
		g.undelivered(c, a)
	}
	c.attemptEnded(a)
	ended = true
	return g.endAttempt(c, t, a)
}

// beginAttempt starts t's span and makes its attempt. It and the two
// below keep their calls' arguments (span options, the Result by value)
// out of attempt's frame, which a stream holds while it waits.
//
//go:noinline
func (g *Gateway) beginAttempt(ctx context.Context, c *call, t *Turn) *attempt {
	c.tried(t.Cand.Target)
	actx := t.StartSpan(ctx, g.tracer, c.ep.operation, c.fields.Model, g.timestamp())
	return g.newAttempt(actx, c, t)
}

// undelivered notes an attempt that gave the client nothing: a failover
// keeps its answer (the client's if this failure is the last); a
// shutdown answers at once.
//
//go:noinline
func (g *Gateway) undelivered(c *call, a *attempt) {
	if a.res.Outcome == telemetry.OutcomeFailover {
		c.failedOver(a)
	} else if a.stopping {
		g.setGatewayHeaders(c.w.Header(), &c.route, c.target)
		g.fail(c, http.StatusServiceUnavailable, apierror.TypeUpstream, "shutting_down", "the gateway is shutting down; retry the request")
	}
}

// endAttempt reports t's attempt to the route: whether the request is
// done. The last attempt's span ends once the client has its answer
// (endCall); a failed-over one's ends now.
//
//go:noinline
func (g *Gateway) endAttempt(c *call, t *Turn, a *attempt) bool {
	done, end := c.route.Settle(t, a.res, g.timestamp())
	c.attemptSettled(end, done)
	return done
}

// keepsPrefixes reports whether c's prompt prefix is worth naming: the
// mode keeps an affinity (the route's end teaches it who served the
// prefix, in the client's order too), and c is a generation with a prompt (the
// prefix's scans of the body are not done for nothing).
func (g *Gateway) keepsPrefixes(c *call) bool {
	return g.affinity != nil && (c.ep.family == familyChat || c.ep.family == familyResponses)
}
