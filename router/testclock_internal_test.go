package router

import (
	"sync/atomic"
	"testing"
	"time"
)

// The router tests' one clock and one wait. Both are exported from this
// internal test file so the external tests (package router_test) share
// them: nothing here is part of the package's API.

// FakeClock is the tests' clock. It stands still at its start and moves
// only by Advance; an offset clock (NewOffsetClock) runs with the wall
// clock instead, moved forward by Advance, for tests whose latencies are
// real but whose cooldowns and probes must come due at once.
type FakeClock struct {
	start time.Time // zero: the wall clock
	off   atomic.Int64
}

// NewFakeClock is a clock standing at 2026-11-29 12:00 UTC.
func NewFakeClock() *FakeClock { return NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)) }

// NewFakeClockAt is a clock standing at t.
func NewFakeClockAt(t time.Time) *FakeClock { return &FakeClock{start: t} }

// NewOffsetClock is the wall clock, moved forward by Advance.
func NewOffsetClock() *FakeClock { return &FakeClock{} }

// Now is the clock's time.
func (c *FakeClock) Now() time.Time {
	base := c.start
	if base.IsZero() {
		base = time.Now()
	}
	return base.Add(time.Duration(c.off.Load()))
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// waitLimit bounds every wait of the tests.
const waitLimit = 5 * time.Second

// WaitUntil polls cond every millisecond until it holds, failing the test
// after 5 s: for what a test must wait for but cannot be told of (a count
// on an upstream, a log line written after the answer left). Where the
// code under test can signal, wait on that instead (WaitFor).
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitLimit, what)
		}
		time.Sleep(time.Millisecond) // a poll's interval, not a settle wait
	}
}

// WaitFor waits for an event on c, failing the test after 5 s.
func WaitFor(t testing.TB, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(waitLimit):
		t.Fatalf("waited %v for %s", waitLimit, what)
	}
}
