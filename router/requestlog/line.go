// Package requestlog is the request's one log line: what was asked, where
// it went and how it ended (Line), never a prompt, completion or key; and
// how an attempt ended in an operator's words (End: its class and short
// reason). The router fills a Line once the answer has gone out.
package requestlog

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/apierror"
)

// Line is one request's log line. A request that is no API call (the
// model list, a path the gateway does not serve) has only its endpoint,
// status and times.
type Line struct {
	Span     trace.SpanContext // the request's SERVER span: its trace id
	Endpoint string
	API      bool // an API call: its routing is told
	// Model is the client's model, when the gateway serves it (a model it
	// does not serve is whatever the client wrote, and left out); Alias,
	// Route and Preference only come with it.
	Model, Alias, Route, Preference string
	Target                          string // of the last attempt ("": none)
	Attempts                        int
	Skipped                         []apierror.Skip
	Hedged, Selection               string
	End                             End // how the last attempt ended
	Status                          int
	TTFB                            time.Duration // when HasTTFB: the answer's first byte left
	HasTTFB                         bool
	Duration                        time.Duration
}

// Write logs l at info level.
func (l *Line) Write(ctx context.Context, log *slog.Logger) {
	attrs := make([]slog.Attr, 0, 12)
	if l.API {
		if l.Span.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", l.Span.TraceID().String()))
		}
		attrs = append(attrs, slog.String("endpoint", l.Endpoint))
		if l.Model != "" {
			attrs = append(attrs, slog.String("model", l.Model))
			if l.Alias != "" {
				attrs = append(attrs, slog.String("alias", l.Alias))
			}
			if l.Route != "" {
				attrs = append(attrs, slog.String("route", l.Route))
			}
			if l.Preference != "" {
				attrs = append(attrs, slog.String("preference", l.Preference))
			}
		}
		if l.Target != "" {
			attrs = append(attrs, slog.String("target", l.Target))
		}
		attrs = append(attrs, slog.Int("attempts", l.Attempts))
		if len(l.Skipped) > 0 {
			names := make([]string, len(l.Skipped))
			for i, s := range l.Skipped {
				names[i] = s.Target + ":" + s.Reason
			}
			attrs = append(attrs, slog.String("skipped", strings.Join(names, ",")))
		}
		if l.Hedged != "" {
			attrs = append(attrs, slog.String("hedged", l.Hedged))
		}
		if l.Selection != "" {
			attrs = append(attrs, slog.String("selection", l.Selection))
		}
		if end := l.End; end.ErrorType != "" {
			attrs = append(attrs, slog.String("error_class", end.Class()))
			if reason := end.Reason(); reason != "" {
				attrs = append(attrs, slog.String("error_reason", reason))
			}
		}
	} else {
		attrs = append(attrs, slog.String("endpoint", l.Endpoint))
	}
	attrs = append(attrs, slog.Int("status", l.Status))
	if l.HasTTFB {
		attrs = append(attrs, slog.Duration("ttfb", l.TTFB))
	}
	attrs = append(attrs, slog.Duration("duration", l.Duration))
	log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// Endpoint names a path that is not an API endpoint: the model
// list, or the path itself cut short (a client's typo is worth seeing; a
// hostile path must not bloat the log).
func Endpoint(path string) string {
	if path == "/v1/models" || strings.HasPrefix(path, "/v1/models/") {
		return "/v1/models"
	}
	const max = 64
	if len(path) > max {
		return path[:max] + "..."
	}
	return path
}

// End is how an attempt ended, as the request log line says it: its
// error.type, the detail the client reads, the upstream status (0: none).
type End struct {
	ErrorType, Detail string
	Status            int
}

// Class is the end's class in the failure model's words: transport,
// timeout, stall, broken_stream, auth, quota, model_access, config,
// invalid_response, ...; an HTTP failure by what its status means
// (rate_limit, server_error, client_error).
func (e End) Class() string {
	n, err := strconv.Atoi(e.ErrorType)
	switch {
	case err != nil:
		return e.ErrorType
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

// Reason is the end's short reason: its detail ("connection refused", the
// part of "transport (connection refused)" the class does not say), else a
// phrase for its error.type, else the upstream status ("upstream 429").
// Never the upstream's message, which may quote the prompt.
func (e End) Reason() string {
	if d := e.Detail; d != "" {
		if rest, ok := strings.CutPrefix(d, e.ErrorType+" ("); ok && strings.HasSuffix(rest, ")") {
			return rest[:len(rest)-1]
		}
		return d
	}
	if p, ok := endPhrases[e.ErrorType]; ok {
		return p
	}
	if e.Status != 0 {
		return "upstream " + strconv.Itoa(e.Status)
	}
	return ""
}
