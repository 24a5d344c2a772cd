package main

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// connTracker follows every connection of the servers it tracks through
// their states, so that the drain knows what is still open without asking
// a server to close anything. http.Server.Shutdown closes each connection
// the moment it goes idle, which is right after an answer that did not say
// "Connection: close": a client that has already sent its next request on
// it gets an unexpected EOF. The drain waits instead for each connection to
// be closed after an answer that said close (every answer written while
// draining does), by its client, or at the end of the grace.
type connTracker struct {
	mu      sync.Mutex                  // guards the fields below
	states  map[net.Conn]http.ConnState // every connection not yet closed or hijacked
	changed chan struct{}               // nil, or closed at the next change: made by a waiter
}

func newConnTracker() *connTracker {
	return &connTracker{states: map[net.Conn]http.ConnState{}}
}

// track installs the tracker on srv, after any ConnState hook already set.
// One tracker may track several servers. Call it before srv serves.
func (t *connTracker) track(srv *http.Server) {
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if prev != nil {
			prev(c, st)
		}
		t.note(c, st)
	}
}

func (t *connTracker) note(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked: // hijacked: no longer the server's to close
		delete(t.states, c)
	default:
		t.states[c] = st
	}
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// count is how many connections are open and how many of them are busy:
// new (a request may be on its way) or active (one is being read or
// answered), not idle between two requests. changed closes at the next
// change.
func (t *connTracker) count() (open, busy int, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, st := range t.states {
		if st != http.StateIdle {
			busy++
		}
	}
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return len(t.states), busy, t.changed
}

// wait waits until done holds for the open and busy counts, or ctx ends;
// it reports whether done held.
func (t *connTracker) wait(ctx context.Context, done func(open, busy int) bool) bool {
	for {
		open, busy, changed := t.count()
		if done(open, busy) {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// allClosed and noneBusy are what the drain waits for: every connection
// closed, or every one idle between requests (closing it then cuts no
// request that was read).
func allClosed(open, _ int) bool { return open == 0 }
func noneBusy(_, busy int) bool  { return busy == 0 }
