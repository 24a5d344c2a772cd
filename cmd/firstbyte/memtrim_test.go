package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// The trim runs once the gateway has been idle trimAfter after serving,
// once per idle spell, never while a request is in flight, and never in a
// gateway that served nothing.
func TestMemTrimWaitsForIdle(t *testing.T) {
	m := newMemTrim()
	var trims atomic.Int64
	m.trim = func() { trims.Add(1) }
	var ticks atomic.Int64 // each look advances the clock a second
	start := time.Now()
	now := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Second) }
	go m.run(time.Millisecond, now)
	defer m.close()

	waitTicks := func(n int64) {
		t.Helper()
		target := ticks.Load() + n
		for deadline := time.Now().Add(5 * time.Second); ticks.Load() < target; {
			if time.Now().After(deadline) {
				t.Fatal("the trim loop stopped ticking")
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitTicks(10)
	if n := trims.Load(); n != 0 {
		t.Fatalf("%d trims before any request, want 0", n)
	}
	m.begin() // a long request: in flight through many idle seconds
	waitTicks(10)
	if n := trims.Load(); n != 0 {
		t.Fatalf("%d trims with a request in flight, want 0", n)
	}
	m.end()
	waitTicks(int64(trimAfter/time.Second) + 3)
	if n := trims.Load(); n != 1 {
		t.Fatalf("%d trims after %v idle, want 1", n, trimAfter)
	}
	waitTicks(10)
	if n := trims.Load(); n != 1 {
		t.Fatalf("%d trims in one idle spell, want 1", n)
	}
	m.begin()
	m.end()
	waitTicks(int64(trimAfter/time.Second) + 3)
	if n := trims.Load(); n != 2 {
		t.Fatalf("%d trims after a second idle spell, want 2", n)
	}
}

// A large answer's release asks for a trim at the next tick, even with
// requests in flight.
func TestMemTrimAfterALargeAnswer(t *testing.T) {
	m := newMemTrim()
	trimmed := make(chan struct{}, 1)
	m.trim = func() { trimmed <- struct{}{} }
	go m.run(time.Millisecond, time.Now)
	defer m.close()
	m.begin()
	defer m.end()
	m.largeAnswerDone()
	select {
	case <-trimmed:
	case <-time.After(5 * time.Second):
		t.Fatal("no trim after a large answer")
	}
}
