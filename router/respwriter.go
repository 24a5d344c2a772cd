package router

import (
	"net/http"
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/requestlog"
)

// responseWriter is what every client request writes through. It notes the
// moment the answer's first byte leaves (the request log's TTFB) and
// whether anything has been written (what a recovered panic may still
// send), and it marks every response whose headers are written while the
// process drains with "Connection: close": the server then closes the
// connection after it, so no client reuses a connection that is about to
// close, whether the request began before the drain or after.
type responseWriter struct {
	http.ResponseWriter
	g         *Gateway
	start     time.Time
	firstByte time.Time // zero: nothing written yet
	status    int
	call      *call // the API request being served, for the request log; nil for other routes
}

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 { // a 1xx is not the answer
		w.status = status
		w.firstByte = w.g.now()
		if w.g.draining() {
			w.ResponseWriter.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends what is buffered now (SSE chunks).
func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// FlushError is Flush that reports a connection that failed (a client
// gone, a write deadline passed); http.ResponseController.Flush calls it.
func (w *responseWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(interface{ FlushError() error }); ok { // the server's own writer
		return f.FlushError()
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines, flushes that report errors).
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrote reports whether the response's headers have gone out (then a
// panic can no longer become a clean 500).
func (w *responseWriter) wrote() bool { return w.status != 0 }

// logRequest writes the request's one line (package requestlog): what was
// asked, where it went and how it ended.
func (g *Gateway) logRequest(r *http.Request, rw *responseWriter) {
	l := requestlog.Line{Endpoint: r.Method + " " + requestlog.Endpoint(r.URL.Path), Status: rw.status,
		TTFB: rw.firstByte.Sub(rw.start), HasTTFB: !rw.firstByte.IsZero(), Duration: g.since(rw.start)}
	if c := rw.call; c != nil {
		l.API, l.Span, l.Endpoint = true, c.span.SpanContext(), c.ep.path
		if _, served := slices.BinarySearch(g.models, c.fields.Model); served {
			l.Model, l.Alias, l.Route = c.fields.Model, c.alias, g.policyFor(c.fields.Model).route
			if c.pref != nil {
				l.Preference = c.pref.Summary()
			}
		}
		l.Target, l.Attempts, l.Skipped, l.Hedged, l.Selection, l.End = c.target, c.route.Attempts(), c.route.Skipped(),
			c.route.HedgeResult(), c.route.Selection(), c.route.lastEnd
	}
	l.Write(r.Context(), g.log)
}
