package router

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
)

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
