package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// The process's log: log/slog to stderr, text or JSON (log.format), at
// log.level, which a reload can change. Nothing here ever writes a prompt,
// a completion or a credential: provider URLs are redacted, keys and
// tokens are only said to be set.

// newLogger is the logger serve writes through; level is kept by the
// caller so a reload can move it.
func newLogger(w io.Writer, l config.Log, level *slog.LevelVar) *slog.Logger {
	level.Set(l.SlogLevel())
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// warnInterval is the least time between two lines of one rate-limited
// warning.
const warnInterval = 10 * time.Second

// rateLimitedWarn is a warning that something keeps failing (span export,
// the HTTP server's own errors, ingest rejections) written at most once per
// interval: the first occurrence at once, the ones after it counted and
// written together, with their count, when the interval has passed. A
// timer writes that line, so a burst that stops is still reported. Close
// writes what is pending and stops the timer.
//
// Call note from anywhere, the request path included: it takes a lock and
// at most once per interval writes a line.
type rateLimitedWarn struct {
	// Immutable after newRateLimitedWarn.
	log    *slog.Logger
	msg    string
	amount string // name of the summed amount (e.g. "spans"); "": none
	every  time.Duration

	mu      sync.Mutex // guards the fields below
	last    time.Time  // when the last line was written; zero: never
	count   int        // occurrences not written yet
	sum     int        // their summed amount
	detail  string     // the latest occurrence's detail
	timer   *time.Timer
	stopped bool
}

func newRateLimitedWarn(logger *slog.Logger, msg, amount string, every time.Duration) *rateLimitedWarn {
	return &rateLimitedWarn{log: logger, msg: msg, amount: amount, every: every}
}

// note records one occurrence with an amount (0 if none) and a detail (""
// if none; never a secret: an error's text with URLs redacted, a reason).
func (w *rateLimitedWarn) note(amount int, detail string) {
	w.mu.Lock()
	w.count++
	w.sum += amount
	if detail != "" {
		w.detail = detail
	}
	if w.stopped {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if w.last.IsZero() || now.Sub(w.last) >= w.every {
		attrs := w.takeLocked(now)
		w.mu.Unlock()
		w.log.LogAttrs(context.Background(), slog.LevelWarn, w.msg, attrs...)
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.last.Add(w.every).Sub(now), w.flush)
	}
	w.mu.Unlock()
}

// flush writes the pending count, if any.
func (w *rateLimitedWarn) flush() {
	w.mu.Lock()
	w.timer = nil
	if w.count == 0 {
		w.mu.Unlock()
		return
	}
	attrs := w.takeLocked(time.Now())
	w.mu.Unlock()
	w.log.LogAttrs(context.Background(), slog.LevelWarn, w.msg, attrs...)
}

// takeLocked builds the line of what is pending and starts a new interval.
func (w *rateLimitedWarn) takeLocked(now time.Time) []slog.Attr {
	attrs := []slog.Attr{slog.Int("count", w.count)}
	if w.amount != "" {
		attrs = append(attrs, slog.Int(w.amount, w.sum))
	}
	if w.detail != "" {
		attrs = append(attrs, slog.String("last_error", w.detail))
	}
	if !w.last.IsZero() {
		attrs = append(attrs, slog.Duration("since_last_line", now.Sub(w.last)))
	}
	w.last, w.count, w.sum, w.detail = now, 0, 0, ""
	return attrs
}

// Close writes what is pending and stops the timer; later notes are
// counted but never written.
func (w *rateLimitedWarn) Close() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.stopped = true
	var attrs []slog.Attr
	if w.count > 0 {
		attrs = w.takeLocked(time.Now())
	}
	w.mu.Unlock()
	if attrs != nil {
		w.log.LogAttrs(context.Background(), slog.LevelWarn, w.msg, attrs...)
	}
}

// Writer adapts the warning to a log.Logger's output (http.Server.ErrorLog):
// each line written is one occurrence, its text the detail.
func (w *rateLimitedWarn) Writer() io.Writer { return warnWriter{w} }

type warnWriter struct{ w *rateLimitedWarn }

func (ww warnWriter) Write(p []byte) (int, error) {
	ww.w.note(0, strings.TrimSpace(string(p)))
	return len(p), nil
}

// errorLog is a log.Logger for http.Server.ErrorLog that goes through w.
func errorLog(w *rateLimitedWarn) *log.Logger { return log.New(w.Writer(), "", 0) }

// maxSummaryRows bounds the provider and model lines of the start-up
// summary; the rest are counted.
const maxSummaryRows = 100

// logStartup writes the start-up summary: where it listens, what it routes
// and where its telemetry goes, never a key or token. The first line,
// "firstbyte serving", is the one to wait for.
func logStartup(logger *slog.Logger, s *stack, cfg *config.Config, getenv func(string) string) {
	export := "off"
	if s.SDK.Exporting {
		export = strings.TrimPrefix(exportSummary(cfg, getenv), "to ")
	}
	in := cfg.Telemetry.Ingest
	ingest, foreign := "off", "off"
	if in.Enabled {
		ingest = "on (no token)"
		if in.Token != "" {
			ingest = "on (token set)"
		}
		if in.Foreign.Enabled {
			foreign = "on"
			if len(in.Foreign.Services) > 0 {
				foreign = "on (" + strings.Join(in.Foreign.Services, ",") + ")"
			}
		}
	}
	logger.Info("firstbyte serving", "api", s.APIAddr, "admin", s.AdminAddr, "mode", cfg.Strategy.Mode,
		"models", len(s.current().Models()), "export", export, "ingest", ingest, "foreign", foreign,
		"version", version, "instance", s.SDK.InstanceID)

	auth := "none"
	if n := len(cfg.Auth.Keys); n > 0 {
		auth = fmt.Sprintf("%d key%s", n, plural(n)) // the count says enough; the keys never appear
	}
	adminToken := "none"
	if cfg.Admin.Token != "" {
		adminToken = "set"
	}
	l := cfg.Limits
	logger.Info("settings", "client_auth", auth, "admin_token", adminToken,
		"max_body", l.MaxBody.String(), "max_response", l.MaxResponse.String(), "max_buffered", l.MaxBuffered.String(), "max_connections", l.MaxConnections,
		"read_timeout", l.ReadTimeout, "idle_timeout", l.IdleTimeout,
		"shutdown_delay", cfg.Shutdown.Delay, "shutdown_grace", cfg.Shutdown.Grace,
		"log_level", cfg.Log.Level, "log_format", cfg.Log.Format, "log_requests", cfg.Log.LogRequests())
	if fds, ok := fdLimit(); ok && uint64(2*l.MaxConnections)+fdReserve > fds {
		logger.Warn("limits.max_connections allows more connections than the process may open files",
			"max_connections", l.MaxConnections, "listeners", 2, "fd_limit", fds,
			"hint", "lower limits.max_connections or raise the fd limit (ulimit -n)")
	}

	names := slices.Sorted(maps.Keys(cfg.Providers))
	for i, n := range names {
		if i == maxSummaryRows {
			logger.Info("more providers", "count", len(names)-i)
			break
		}
		p := cfg.Providers[n]
		logger.Info("provider", "name", n, "kind", p.Kind, "base_url", redactURL(p.BaseURL))
	}
	models, routes := modelRoutes(cfg)
	for i, m := range models {
		if i == maxSummaryRows {
			logger.Info("more models", "count", len(models)-i)
			break
		}
		logger.Info("model", "model", m, "targets", strings.Join(routes[m], ", "))
	}
}

// fdReserve is what the process needs besides its client connections:
// upstream connections, span export, its own files.
const fdReserve = 64
