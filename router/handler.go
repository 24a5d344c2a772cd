package router

import (
	"context"
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

	"github.com/firstbyte-dev/firstbyte/router/mode"
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
	HeaderUpstreamRequestID = "X-Firstbyte-Upstream-Request-Id"
)

// call is one client request in flight: what the client sent, the route
// its attempts take, and what the client got. Attempts read it; only the
// handler and the pipeline driver write it.
type call struct {
	ep     *endpoint
	w      http.ResponseWriter
	r      *http.Request
	body   []byte
	fields requestFields
	span   trace.Span // the request's SERVER span

	route    Route                           // its way through the candidates
	orderBuf [mode.RankedCap]*mode.Candidate // the route's order, without an allocation
	status   int                             // what the client got (0: nothing written, e.g. it went away)
	target   string                          // the target of the last attempt
	// answer is the last failed-over upstream error, for the client when
	// every candidate fails (nil: the last failure had none to show).
	answer       *upstreamAnswer
	upstreamWait time.Duration
	spanEnded    bool
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
	if fault := framingFault(r); fault != "" {
		rw.Header().Set("Connection", "close")
		writeError(rw, shapeForPath(r.URL.Path), http.StatusBadRequest, errTypeInvalidRequest, "invalid_framing", fault)
	} else {
		g.mux.ServeHTTP(rw, r)
	}
	if g.logRequests {
		g.logRequest(r, rw)
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
		ctx := g.propagator.Extract(r.Context(), headerCarrier(r.Header))
		ctx, span := g.tracer.Start(ctx, ep.spanName, trace.WithSpanKind(trace.SpanKindServer), g.timestamp(),
			trace.WithAttributes(semconv.HTTPRequestMethodPost, semconv.HTTPRoute(ep.path)))
		c := &call{ep: ep, w: w, r: r, span: span} // ctx travels as an argument: no request copy
		if rw, ok := w.(*responseWriter); ok {
			rw.call = c
		}
		g.serve(ctx, c)
		c.flush() // the client has its whole answer before the server span ends

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
		if c.status >= 500 || c.status == 0 {
			span.SetStatus(codes.Error, "")
		}
		span.SetAttributes(attrs...)
		span.End(g.timestamp())
		c.spanEnded = true
	})
}

// serve runs one request; every exit writes exactly one response unless the
// client has gone.
func (g *Gateway) serve(ctx context.Context, c *call) {
	if !g.authorized(c.r) {
		g.fail(c, http.StatusUnauthorized, errTypeAuth, "invalid_api_key", "missing or invalid API key")
		return
	}
	if !isJSON(headerValue(c.r.Header, "Content-Type")) {
		g.fail(c, http.StatusUnsupportedMediaType, errTypeInvalidRequest, "unsupported_media_type", "Content-Type must be application/json")
		return
	}
	if c.r.ContentLength > g.maxBody {
		g.fail(c, http.StatusRequestEntityTooLarge, errTypeTooLarge, "request_too_large", "request body exceeds limits.max_body ("+strconv.FormatInt(g.maxBody, 10)+" bytes)")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, g.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			g.fail(c, http.StatusRequestEntityTooLarge, errTypeTooLarge, "request_too_large", "request body exceeds limits.max_body ("+strconv.FormatInt(g.maxBody, 10)+" bytes)")
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// limits.read_timeout ran out mid-body (a client trickling it):
			// say so, and do not keep the connection.
			c.w.Header().Set("Connection", "close")
			g.fail(c, http.StatusRequestTimeout, errTypeInvalidRequest, "request_timeout", "the request body did not arrive within limits.read_timeout")
			return
		}
		g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "invalid_body", "could not read request body")
		return
	}
	c.body = body
	fields, err := scanRequest(body)
	if err != nil {
		g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "invalid_request", err.Error())
		return
	}
	c.fields = fields
	eligible := g.routes[c.ep.family][fields.Model]
	if len(eligible) == 0 {
		g.fail(c, http.StatusNotFound, errTypeNotFound, "model_not_found", "model "+quoteForMessage(fields.Model)+" is not served by this gateway for "+c.ep.path)
		return
	}
	if bad := checkInput(c.ep, &c.fields); bad.msg != "" {
		c.status = http.StatusBadRequest
		writeErrorParam(c.w, c.ep.shape, http.StatusBadRequest, errTypeInvalidRequest, "invalid_request", bad.param, bad.msg, nil)
		return
	}
	if names, ok := c.r.Header[HeaderProviderOrder]; ok {
		order, unknown := manualOrder(c.orderBuf[:0], strings.Join(names, ","), eligible)
		if unknown != "" {
			g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "invalid_provider_order",
				HeaderProviderOrder+" names "+quoteForMessage(unknown)+", which is not a target serving model "+quoteForMessage(fields.Model))
			return
		}
		c.route = Route{order: order, selection: telemetry.SelectionManual}
		if g.keepsPrefixes(c) {
			g.remember(&c.route, fields.Model, prefixOf(&c.fields, c.body))
		}
	} else {
		order, selection, probe := g.order(c.orderBuf[:0], fields.Model, outputLimit(&c.fields), eligible)
		c.route = Route{order: order, selection: selection, probe: probe}
		if g.keepsPrefixes(c) {
			g.prefer(&c.route, fields.Model, prefixOf(&c.fields, c.body), g.now())
		}
	}
	g.homeFirst(c) // a follow-up of a stored response goes where it is stored
	c.route.span, c.route.prep, c.route.maxTokens = c.span, c, outputLimit(&c.fields)
	if c.sideEffect() == "" { // a request that leaves state behind is never sent twice at once
		g.hedgeable(&c.route, fields.Model)
	}
	g.run(ctx, c)
}

// fail answers with the gateway's own error in the caller's shape.
func (g *Gateway) fail(c *call, status int, typ, code, msg string) {
	c.status = status
	writeError(c.w, c.ep.shape, status, typ, code, msg)
}

func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// quoteForMessage quotes a client-supplied model name for an error
// message, cut short so a hostile value cannot bloat responses or logs.
func quoteForMessage(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
