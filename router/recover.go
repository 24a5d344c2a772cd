package router

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"

	"go.opentelemetry.io/otel/codes"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/requestlog"
	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// A panic while serving a request is a bug in the gateway; it must cost
// that one request, never the process or the other requests in flight.
// recovered turns it into the best answer still possible: a 500 in the
// caller's shape when nothing was written yet, an error event when a
// stream had started, and a cut connection when a unary answer was half
// sent (so the client cannot take it for a whole one).

// recovered handles a panic v raised while serving r.
func (g *Gateway) recovered(rw *responseWriter, r *http.Request, v any) {
	if v == http.ErrAbortHandler { // the server's own way to cut a connection: not a bug
		panic(v)
	}
	g.onPanic()
	// The panic's value may hold request data (a formatted error), so only
	// the runtime's own messages are logged, else the value's type; the
	// stack names functions and lines, never contents.
	desc := fmt.Sprintf("%T", v)
	if re, ok := v.(runtime.Error); ok {
		desc = re.Error()
	}
	endpoint := requestlog.Endpoint(r.URL.Path)
	g.log.LogAttrs(r.Context(), slog.LevelError, "panic serving a request",
		slog.String("endpoint", endpoint), slog.String("panic", desc), slog.String("stack", string(debug.Stack())))

	c := rw.call
	if c != nil && !c.spanEnded {
		c.span.SetStatus(codes.Error, "panic")
		c.endSpan(g.timestamp())
	}
	switch {
	case !rw.wrote():
		if c != nil {
			c.answered(http.StatusInternalServerError)
		}
		apierror.Write(rw, shapeForPath(r.URL.Path), http.StatusInternalServerError, "server_error", "internal_error", "internal error in the gateway")
	case c != nil && c.fields.Stream && rw.status < 300:
		_, _ = rw.Write(append([]byte("\n\n"), translate.StreamErrorEvent(c.ep.shape.Format(), "internal error in the gateway")...))
		_ = rw.FlushError()
	default:
		panic(http.ErrAbortHandler) // half a unary answer: cut it, the server logs nothing
	}
	if g.logRequests {
		g.logRequest(r, rw)
	}
}
