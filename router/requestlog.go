package router

import (
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
)

// logRequest writes the request's one line: what was asked, where it went
// and how it ended, never a prompt, completion or key. A model the
// gateway does not serve is left out (it is whatever the client wrote).
func (g *Gateway) logRequest(r *http.Request, rw *responseWriter) {
	attrs := make([]slog.Attr, 0, 12)
	c := rw.call
	if c != nil {
		if sc := c.span.SpanContext(); sc.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
		}
		attrs = append(attrs, slog.String("endpoint", c.ep.path))
		if _, served := slices.BinarySearch(g.models, c.fields.Model); served {
			attrs = append(attrs, slog.String("model", c.fields.Model))
			attrs = g.routeAttrs(attrs, c)
		}
		if c.target != "" {
			attrs = append(attrs, slog.String("target", c.target))
		}
		attrs = append(attrs, slog.Int("attempts", c.route.Attempts()))
		if skipped := c.route.Skipped(); len(skipped) > 0 {
			names := make([]string, len(skipped))
			for i, s := range skipped {
				names[i] = s.Target + ":" + s.Reason
			}
			attrs = append(attrs, slog.String("skipped", strings.Join(names, ",")))
		}
		if h := c.route.HedgeResult(); h != "" {
			attrs = append(attrs, slog.String("hedged", h))
		}
		if sel := c.route.Selection(); sel != "" {
			attrs = append(attrs, slog.String("selection", sel))
		}
		if end := c.route.lastEnd; end.errorType != "" {
			attrs = append(attrs, slog.String("error_class", end.class()))
			if reason := end.reason(); reason != "" {
				attrs = append(attrs, slog.String("error_reason", reason))
			}
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

// attemptEnd is how an attempt ended, as the request log line says it:
// its error.type, the detail the client reads, the upstream status (0:
// none).
type attemptEnd struct {
	errorType, detail string
	status            int
}

// class is the end's class in the failure model's words: transport,
// timeout, stall, broken_stream, auth, quota, model_access, config,
// invalid_response, ...; an HTTP failure by what its status means
// (rate_limit, server_error, client_error).
func (e attemptEnd) class() string {
	n, err := strconv.Atoi(e.errorType)
	switch {
	case err != nil:
		return e.errorType
	case n == http.StatusTooManyRequests:
		return "rate_limit"
	case n == http.StatusRequestTimeout:
		return fault.ErrorTimeout
	case n >= 500:
		return "server_error"
	}
	return "client_error"
}

// endPhrases say in a few words what an error.type without a detail
// means.
var endPhrases = map[string]string{
	fault.ErrorStall:            "stream paused past timeout.idle",
	fault.ErrorStreamBroken:     "stream cut, unterminated or malformed",
	fault.ErrorInvalidResponse:  "answer not valid JSON",
	fault.ErrorResponseTooLarge: "answer over limits.max_response",
	fault.ErrorCanceled:         "client went away",
}

// reason is the end's short reason: its detail ("connection refused", the
// part of "transport (connection refused)" the class does not say), else a
// phrase for its error.type, else the upstream status ("upstream 429").
// Never the upstream's message, which may quote the prompt.
func (e attemptEnd) reason() string {
	if d := e.detail; d != "" {
		if rest, ok := strings.CutPrefix(d, e.errorType+" ("); ok && strings.HasSuffix(rest, ")") {
			return rest[:len(rest)-1]
		}
		return d
	}
	if p, ok := endPhrases[e.errorType]; ok {
		return p
	}
	if e.status != 0 {
		return "upstream " + strconv.Itoa(e.status)
	}
	return ""
}
