package router

import (
	"io"
	"net/http"
	"time"
)

// Writing to a client that may stop reading: every write that could block
// is bounded by a deadline, so a stalled client cannot hold its handler
// (and the upstream behind it) forever.

// writeDeadline bounds each write to a client by timeout, so a client that
// stops reading cannot hold its handler (and the upstream behind it)
// forever. It moves the connection's deadline forward at most once a
// second, not on every chunk.
type writeDeadline struct {
	rc      *http.ResponseController
	timeout time.Duration
	set     time.Time // when the deadline was last moved
}

func newWriteDeadline(w http.ResponseWriter, timeout time.Duration) *writeDeadline {
	return &writeDeadline{rc: http.NewResponseController(w), timeout: timeout}
}

func (d *writeDeadline) extend() {
	now := time.Now() // wall clock: the deadline is the socket's
	if now.Sub(d.set) < time.Second {
		return
	}
	d.set = now
	_ = d.rc.SetWriteDeadline(now.Add(d.timeout))
}

// clear lifts the deadline: a kept-alive connection's next answer must
// not inherit it.
func (d *writeDeadline) clear() { _ = d.rc.SetWriteDeadline(time.Time{}) }

// flushingCopy sends prefix, then relays r to w as it comes, each read
// flushed, so nothing the upstream sent waits in the gateway's buffers for
// what it has not; each write is bounded by timeout, so a client that stops
// reading cannot hold the handler.
func flushingCopy(w http.ResponseWriter, prefix []byte, r io.Reader, timeout time.Duration) {
	wd := newWriteDeadline(w, timeout)
	defer wd.clear()
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		wd.extend()
		_, err := w.Write(b)
		return err == nil && rc.Flush() == nil
	}
	if !send(prefix) {
		return
	}
	bufp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bufp)
	for {
		n, err := r.Read(*bufp)
		if n > 0 && !send((*bufp)[:n]) {
			return
		}
		if err != nil {
			return
		}
	}
}
