package router

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Request and response headers of the client API.
const (
	HeaderTarget        = "X-Firstbyte-Target"
	HeaderAttempts      = "X-Firstbyte-Attempts"
	HeaderSelection     = "X-Firstbyte-Selection"
	HeaderProviderOrder = "X-Firstbyte-Provider-Order"
	HeaderSkipped       = "X-Firstbyte-Skipped"
)

// call is one client request in flight through the pipeline.
type call struct {
	ep        *endpoint
	w         http.ResponseWriter
	r         *http.Request
	body      []byte
	fields    requestFields
	selection string
	span      trace.Span // the request's SERVER span

	// filled as the pipeline runs
	status   int    // what the client got (0: nothing written, e.g. it went away)
	attempts int    // upstream requests actually sent
	target   string // the last attempt's target
	failures []attemptFailure
	skipped  []skip
	// untranslatable is why the request could not be translated for a
	// candidate of the other wire format (a *translate.RequestError inside).
	untranslatable error
	upstreamWait   time.Duration
	spanEnded      bool
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
	if conflictingFraming(r) {
		rw.Header().Set("Connection", "close")
		writeError(rw, shapeForPath(r.URL.Path), http.StatusBadRequest, errTypeInvalidRequest, "invalid_framing",
			"a request must not carry both Transfer-Encoding and Content-Length")
	} else {
		g.mux.ServeHTTP(rw, r)
	}
	if g.logRequests {
		g.logRequest(r, rw)
	}
}

// logRequest writes the request's one line: what was asked, where it went
// and how it ended, never a prompt, completion or key. A model the
// gateway does not serve is left out (it is whatever the client wrote).
func (g *Gateway) logRequest(r *http.Request, rw *responseWriter) {
	attrs := make([]slog.Attr, 0, 10)
	c := rw.call
	if c != nil {
		if sc := c.span.SpanContext(); sc.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
		}
		attrs = append(attrs, slog.String("endpoint", c.ep.path))
		if _, served := slices.BinarySearch(g.models, c.fields.Model); served {
			attrs = append(attrs, slog.String("model", c.fields.Model))
		}
		if c.target != "" {
			attrs = append(attrs, slog.String("target", c.target))
		}
		attrs = append(attrs, slog.Int("attempts", c.attempts))
		if len(c.skipped) > 0 {
			names := make([]string, len(c.skipped))
			for i, s := range c.skipped {
				names[i] = s.target + ":" + s.reason
			}
			attrs = append(attrs, slog.String("skipped", strings.Join(names, ",")))
		}
		if c.selection != "" {
			attrs = append(attrs, slog.String("selection", c.selection))
		}
	} else {
		attrs = append(attrs, slog.String("endpoint", r.Method+" "+endpointForLog(r.URL.Path)))
	}
	attrs = append(attrs, slog.Int("status", rw.status))
	if !rw.firstByte.IsZero() {
		attrs = append(attrs, slog.Duration("ttfb", rw.firstByte.Sub(rw.start)))
	}
	attrs = append(attrs, slog.Duration("duration", g.since(rw.start)))
	g.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// endpointForLog names a path that is not an API endpoint: the model
// list, or the path itself cut short (a client's typo is worth seeing; a
// hostile path must not bloat the log).
func endpointForLog(path string) string {
	if path == "/v1/models" || strings.HasPrefix(path, "/v1/models/") {
		return "/v1/models"
	}
	const max = 64
	if len(path) > max {
		return path[:max] + "..."
	}
	return path
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
		ctx := g.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
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
		if c.fields.Model != "" && c.attempts > 0 {
			attrs = append(attrs, telemetry.KeyRequestedModel.String(c.fields.Model),
				telemetry.KeySelection.String(c.selection), telemetry.KeyTarget.String(c.target),
				telemetry.KeyAttempt.Int(c.attempts))
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
	if !isJSON(c.r.Header.Get("Content-Type")) {
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
	var buf [rankedCap]*Candidate
	var order []*Candidate
	if names, ok := c.r.Header[HeaderProviderOrder]; ok {
		var unknown string
		order, unknown = manualOrder(buf[:0], strings.Join(names, ","), eligible)
		if unknown != "" {
			g.fail(c, http.StatusBadRequest, errTypeInvalidRequest, "invalid_provider_order",
				HeaderProviderOrder+" names "+quoteForMessage(unknown)+", which is not a target serving model "+quoteForMessage(fields.Model))
			return
		}
		c.selection = telemetry.SelectionManual
	} else {
		order, c.selection = g.order(buf[:0], fields.Model, eligible)
	}
	g.runPipeline(ctx, c, order)
}

// manualOrder puts the targets named in the order header first, in that
// order, then the other eligible ones as declared, so naming targets never
// loses a request that another target could serve. It returns the first
// name that is not an eligible target ("" when all are), and an empty
// header is such a name.
func manualOrder(dst []*Candidate, names string, eligible []*Candidate) ([]*Candidate, string) {
	base := len(dst)
	for name := range strings.SplitSeq(names, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, c := range eligible {
			if c.Target == name {
				found = true
				if !containsCandidate(dst[base:], c) {
					dst = append(dst, c)
				}
			}
		}
		if !found {
			return dst, cmp.Or(name, "(empty)")
		}
	}
	for _, c := range eligible {
		if !containsCandidate(dst[base:], c) {
			dst = append(dst, c)
		}
	}
	return dst, ""
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
