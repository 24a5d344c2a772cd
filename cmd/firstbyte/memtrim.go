package main

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Memory given back once the gateway is idle. Go returns freed heap to the
// operating system slowly, and only after a collection, which an idle
// process does not run for up to two minutes: the garbage of the last
// requests (up to the heap floor, gcfloor.go), the pooled read blocks of a
// burst of large answers, and the heap goal those answers raised all stay
// resident. Six 200 MB answers one at a time held 1.29 GiB for as long as
// the gateway stayed idle. The trim waits until no request has been in
// flight or started for trimAfter after some were served, then collects
// twice (the first moves sync.Pools' contents to their victim caches, the
// second frees them) and returns every free page (debug.FreeOSMemory).

// A large answer (relay.LargeAnswerHeld) also asks for a trim, at the
// next tick whatever else is in flight: one at a time, six 200 MB answers
// grew RSS to 1.2 GiB before the gateway went idle (each left its copy and
// blocks as garbage, and the heap goal it had raised let the next one's
// pile on top).

// trimAfter is how long the gateway must be idle before it trims.
const trimAfter = 5 * time.Second

// memTrim counts the API's requests and trims memory once they stop.
type memTrim struct {
	inflight atomic.Int64
	started  atomic.Uint64 // requests begun, ever
	large    atomic.Bool   // a large answer was released since the last tick
	stop     chan struct{}
	done     chan struct{}
	// trim is what a trim does (tests count it instead).
	trim func()
}

func newMemTrim() *memTrim {
	return &memTrim{stop: make(chan struct{}), done: make(chan struct{}), trim: trimMemory}
}

// largeAnswerDone asks for a trim at the next tick.
func (m *memTrim) largeAnswerDone() { m.large.Store(true) }

// begin and end bracket every API request.
func (m *memTrim) begin() { m.started.Add(1); m.inflight.Add(1) }
func (m *memTrim) end()   { m.inflight.Add(-1) }

// run watches for idleness every tick until close; it is owned by the
// stack, which starts it and closes it.
func (m *memTrim) run(tick time.Duration, now func() time.Time) {
	defer close(m.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	var (
		seen      uint64    // started at the last look
		quietFrom time.Time // since when nothing was in flight or begun
		dirty     bool      // requests were served since the last trim
	)
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if m.large.Swap(false) {
			m.trim()
		}
		n, at := m.started.Load(), now()
		if n != seen || m.inflight.Load() > 0 {
			seen, quietFrom, dirty = n, at, true
			continue
		}
		if dirty && at.Sub(quietFrom) >= trimAfter {
			m.trim()
			dirty = false
		}
	}
}

func (m *memTrim) close() {
	close(m.stop)
	<-m.done
}

// trimMemory frees what the heap no longer uses, pools included, and
// returns it to the operating system.
func trimMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
