package main

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The drain (SIGTERM or SIGINT), in order:
//
//  1. /readyz answers 503 at once, and every response whose headers are
//     written from now on carries "Connection: close", so clients stop
//     reusing connections: those idle in their pools included, which are
//     left open and served if a request comes (closing them now would race
//     a request already on its way and lose it).
//  2. Both listeners keep accepting for shutdown.delay, so a load balancer
//     polling /readyz stops sending first.
//  3. Both listeners close (a replacement process can bind the addresses
//     now); idle connections are closed; requests and streams in flight
//     get shutdown.grace.
//  4. When the grace is over, what is still open ends cleanly: a stream
//     with an error event in its API's format, a request still waiting for
//     its upstream with a 503. They get endOfGraceWait to write that; then
//     any connection left is closed.
//  5. Spans are flushed with their own deadline, spanFlushTimeout, not
//     what is left of the grace.
//
// A second signal skips what is left of 2 and 3 and makes 5 short.

const (
	endOfGraceWait      = 2 * time.Second
	spanFlushTimeout    = 5 * time.Second
	forcedFlushTimeout  = time.Second
	adminShutdownBudget = 5 * time.Second
)

// Drain stops the stack as the config's shutdown section says; force ends
// when a second signal asks to hurry. It reports whether it was forced.
func (s *stack) Drain(force context.Context) (forced bool, err error) {
	cfg := s.config()
	return s.drain(cfg.Shutdown.Delay, cfg.Shutdown.Grace, force)
}

// Shutdown stops at once (no delay), giving requests in flight until ctx
// ends: for the demo and tests.
func (s *stack) Shutdown(ctx context.Context) error {
	grace := s.config().Shutdown.Grace
	if d, ok := ctx.Deadline(); ok {
		grace = max(0, time.Until(d)-endOfGraceWait)
	}
	_, err := s.drain(0, grace, context.Background())
	return err
}

func (s *stack) drain(delay, grace time.Duration, force context.Context) (forced bool, err error) {
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

	// Stop accepting. Shutdown closes both listeners first thing, then
	// waits for the connections in use to finish.
	apiCtx, cancelAPI := context.WithCancel(context.Background())
	defer cancelAPI()
	apiDone := make(chan error, 1)
	go func() { apiDone <- s.api.Shutdown(apiCtx) }()
	adminCtx, cancelAdmin := context.WithTimeout(context.Background(), adminShutdownBudget)
	defer cancelAdmin()
	adminDone := make(chan error, 1)
	go func() { adminDone <- s.admin.Shutdown(adminCtx) }()

	var errs []error
	graceOver := time.NewTimer(grace)
	select {
	case err := <-apiDone:
		graceOver.Stop()
		errs = append(errs, err)
	case <-graceOver.C:
		errs = append(errs, s.endOpen("grace over", apiDone, cancelAPI))
	case <-force.Done():
		graceOver.Stop()
		errs = append(errs, s.endOpen("second signal", apiDone, cancelAPI))
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

	if err := <-adminDone; err != nil {
		_ = s.admin.Close()
		errs = append(errs, err)
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
// an error event, waiting requests with a 503; after endOfGraceWait it
// closes whatever connection is left.
func (s *stack) endOpen(why string, apiDone <-chan error, cancelAPI context.CancelFunc) error {
	s.log.Warn("ending the requests still open", "why", why)
	s.endStreams()
	t := time.NewTimer(endOfGraceWait)
	defer t.Stop()
	select {
	case err := <-apiDone:
		return err
	case <-t.C:
	}
	cancelAPI()
	<-apiDone
	if err := s.api.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
