package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// The drain (SIGTERM or SIGINT), in order:
//
//  1. /readyz answers 503 at once, and every response whose headers are
//     written from now on carries "Connection: close" (API and admin), so
//     the server closes its connection after it and clients stop reusing
//     connections.
//  2. Both listeners keep accepting for shutdown.delay, so a load balancer
//     polling /readyz stops sending first.
//  3. Both listeners close (a replacement process can bind the addresses
//     now). No connection is closed by the gateway before the grace is
//     over unless its last answer said close: one whose last answer went
//     out before the signal (or began before it and ended after) may carry
//     a request already on its way, so it stays open until that request
//     comes and is answered with close, its client closes it, or the
//     grace ends. Requests and streams in flight get shutdown.grace; the
//     drain moves on as soon as every connection is closed.
//  4. When the grace is over, what is still open ends cleanly: a stream
//     with an error event in its API's format, a request still waiting for
//     its upstream with a 503. They get endOfGraceWait to write that; then
//     every connection left, idle ones included, is closed.
//  5. Spans are flushed with their own deadline, spanFlushTimeout, not
//     what is left of the grace.
//
// A second signal skips what is left of 2 and 3 and makes 5 short.
//
// http.Server.Shutdown is not used: it closes a connection the moment it
// goes idle, and one goes idle right after an answer without
// "Connection: close", under the next request its client may already have
// sent (see connTracker).

const (
	endOfGraceWait     = 2 * time.Second
	spanFlushTimeout   = 5 * time.Second
	forcedFlushTimeout = time.Second
)

// Drain stops the stack as the config's shutdown section says; force ends
// when a second signal asks to hurry. It reports whether it was forced.
func (s *stack) Drain(force context.Context) (forced bool, err error) {
	cfg := s.config()
	return s.drain(cfg.Shutdown.Delay, cfg.Shutdown.Grace, force, false)
}

// Shutdown stops at once (no delay), giving requests in flight until ctx
// ends: for the demo and tests, whose clients are done, so idle
// connections are closed at once.
func (s *stack) Shutdown(ctx context.Context) error {
	grace := s.config().Shutdown.Grace
	if d, ok := ctx.Deadline(); ok {
		grace = max(0, time.Until(d)-endOfGraceWait)
	}
	_, err := s.drain(0, grace, context.Background(), true)
	return err
}

// drain runs the steps above; closeIdle closes the connections idle
// between requests as soon as the listeners close (and each one after its
// answer) instead of keeping them to the end of the grace.
func (s *stack) drain(delay, grace time.Duration, force context.Context, closeIdle bool) (forced bool, err error) {
	s.reloadMu.Lock() // a reload under way finishes first; none starts after
	s.draining.Store(true)
	s.ready.Store(false)
	s.reloadMu.Unlock()
	s.log.Info("firstbyte draining", "delay", delay, "grace", grace)

	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-force.Done():
			t.Stop()
		}
	}

	if closeIdle {
		// No keep-alive from now on: idle connections close now, the
		// others after their answer.
		s.api.SetKeepAlivesEnabled(false)
		s.admin.SetKeepAlivesEnabled(false)
	}
	// Stop accepting; the connections stay open.
	errs := []error{closeListener(s.apiLn), closeListener(s.adminLn)}

	graceCtx, cancelGrace := context.WithTimeout(force, grace)
	defer cancelGrace()
	if !s.conns.wait(graceCtx, allClosed) {
		why := "grace over"
		if force.Err() != nil {
			why = "second signal"
		}
		errs = append(errs, s.endOpen(why))
	}
	forced = force.Err() != nil

	flush := spanFlushTimeout
	if forced {
		flush = forcedFlushTimeout
	}
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), flush)
	defer cancelFlush()
	if err := s.telemetry(flushCtx); err != nil {
		s.log.Warn("telemetry flush at shutdown", "err", err)
	}

	s.serving.Wait()
	s.endStreams() // releases the context's resources; nothing is open by now
	for _, w := range s.warns {
		w.Close()
	}
	s.log.Info("firstbyte stopped", "forced", forced)
	return forced, errors.Join(errs...)
}

// endOpen ends what is still open at the end of the grace: streams with
// an error event, waiting requests with a 503; after at most
// endOfGraceWait, once no connection is busy, it closes every connection
// left.
func (s *stack) endOpen(why string) error {
	open, busy, _ := s.conns.count()
	if busy > 0 {
		s.log.Warn("ending the requests still open", "why", why, "connections", open, "busy", busy)
	} else {
		s.log.Info("closing the idle connections left", "why", why, "connections", open)
	}
	s.endStreams()
	ctx, cancel := context.WithTimeout(context.Background(), endOfGraceWait)
	defer cancel()
	s.conns.wait(ctx, noneBusy)
	return errors.Join(ignoreClosed(s.api.Close()), ignoreClosed(s.admin.Close()))
}

// closeListener stops ln accepting; a listener already closed is no error.
func closeListener(ln net.Listener) error { return ignoreClosed(ln.Close()) }

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// closingWhileDraining marks every answer of h whose headers are written
// while draining() with "Connection: close", as the router does for the
// API: the server then closes the connection after it.
func closingWhileDraining(h http.Handler, draining func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &closingWriter{ResponseWriter: w, draining: draining}
		h.ServeHTTP(cw, r)
		if !cw.wrote { // the server writes the headers after the handler
			cw.mark()
		}
	})
}

type closingWriter struct {
	http.ResponseWriter
	draining func() bool
	wrote    bool
}

func (w *closingWriter) mark() {
	if !w.wrote && w.draining() {
		w.Header().Set("Connection", "close")
	}
	w.wrote = true
}

func (w *closingWriter) WriteHeader(status int) {
	if status >= 200 { // a 1xx is not the answer
		w.mark()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *closingWriter) Write(p []byte) (int, error) {
	w.mark()
	return w.ResponseWriter.Write(p)
}

// Flush sends what is buffered now.
func (w *closingWriter) Flush() {
	w.mark()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *closingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
