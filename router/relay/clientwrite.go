package relay

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// Writing to a client that may stop reading: every write that could block
// is bounded by a deadline, so a stalled client cannot hold its handler
// (and the upstream behind it) forever.

// WriteDeadline bounds each write to a client by timeout, so a client that
// stops reading cannot hold its handler (and the upstream behind it)
// forever. It moves the connection's deadline forward at most once a
// second, not on every chunk.
type WriteDeadline struct {
	rc      *http.ResponseController
	timeout time.Duration
	set     time.Time // when the deadline was last moved
}

// NewWriteDeadline bounds the writes to w by timeout each.
func NewWriteDeadline(w http.ResponseWriter, timeout time.Duration) *WriteDeadline {
	return &WriteDeadline{rc: http.NewResponseController(w), timeout: timeout}
}

// Extend moves the deadline to timeout from now before a write (at most
// once a second).
func (d *WriteDeadline) Extend() {
	now := time.Now() // wall clock: the deadline is the socket's
	if now.Sub(d.set) < time.Second {
		return
	}
	d.set = now
	_ = d.rc.SetWriteDeadline(now.Add(d.timeout))
}

// Flush sends what was written to the client so far.
func (d *WriteDeadline) Flush() error { return d.rc.Flush() }

// Clear lifts the deadline: a kept-alive connection's next answer must
// not inherit it.
func (d *WriteDeadline) Clear() { _ = d.rc.SetWriteDeadline(time.Time{}) }

// FlushingCopy sends prefix, then relays r to w as it comes, each read
// flushed, so nothing the upstream sent waits in the gateway's buffers for
// what it has not; each write is bounded by timeout, so a client that stops
// reading cannot hold the handler.
func FlushingCopy(w http.ResponseWriter, prefix []byte, r io.Reader, timeout time.Duration) {
	wd := NewWriteDeadline(w, timeout)
	defer wd.Clear()
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		wd.Extend()
		_, err := w.Write(b)
		return err == nil && rc.Flush() == nil
	}
	if !send(prefix) {
		return
	}
	bufp := GetChunk()
	defer PutChunk(bufp)
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

// chunkPool holds stream relay buffers: 8 KiB holds any SSE event a
// provider sends in one read, and keeps 1,000 open streams small.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// GetChunk is a stream relay buffer from the pool; PutChunk gives it back.
func GetChunk() *[]byte { return chunkPool.Get().(*[]byte) }

// PutChunk gives a buffer from GetChunk back to the pool.
func PutChunk(p *[]byte) { chunkPool.Put(p) }
