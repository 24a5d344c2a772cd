package relay

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// A stream is sent as it comes, flushed chunk by chunk. Until something is
// for the client nothing is committed and the attempt can still fail over;
// after the first byte a failure ends the stream with an error event in
// the client's format: there is no failover once the client has bytes.
//
// Every chunk goes through the converter the attempt set (SetConverter:
// the exchange's stream): a translator when the client speaks the other
// format (its first event is written the moment
// the upstream's first data event is whole, so the time to first byte
// stays honest; comments and pings before it are no first byte), or a pass-through that reads the usage and drops the usage chunk
// the client did not ask for.

// Stream is a stream in flight: its buffers, its converter and where its
// reading stands. The attempt reads it up to the first output the client
// gets (Next, Hold); Relay sends that and the rest.
type Stream struct {
	// bufp and outp (what is read, and what the client gets of it) are
	// pooled and held only while a chunk is in hand: a stream waiting on
	// its upstream holds neither, which is most of a slow stream's life
	// (10,000 streams would hold 160 MB of them for nothing).
	bufp, outp *[]byte
	one        [1]byte // what a wait for the upstream's next bytes reads into
	st         translate.Stream
	first      []byte    // the client's first output, in hand after reach
	rerr, ferr error     // the read's and the converter's state after the first output
	Started    time.Time // when the first data event came
	chunks     int       // the reads that returned bytes
}

// Drop gives the buffers back between two chunks.
func (s *Stream) Drop() {
	if s.bufp != nil {
		PutChunk(s.bufp)
		s.bufp = nil
	}
	if s.outp != nil {
		PutChunk(s.outp)
		s.outp = nil
	}
}

// Release gives everything back, however the stream ended.
func (s *Stream) Release() {
	s.Drop()
	s.first = nil
}

// Out is an empty output buffer.
func (s *Stream) Out() []byte {
	if s.outp == nil {
		s.outp = GetChunk()
	}
	return (*s.outp)[:0]
}

// read waits for the upstream's next bytes holding no pooled buffer (the
// wait reads one byte, into s.one), then takes what came with that byte
// into a pooled one, which holds the bytes returned until drop. The
// transport has those bytes buffered already, so the second read returns
// at once; it waits only when the one byte was all there was.
func (s *Stream) read(r io.Reader) ([]byte, error) {
	n, err := readSome(r, s.one[:])
	return s.rest(r, n, err)
}

// rest is read's second half: n is what the wait read into s.one (0 or
// 1), err its error.
func (s *Stream) rest(r io.Reader, n int, err error) ([]byte, error) {
	if n == 0 {
		return nil, err
	}
	if s.bufp == nil {
		s.bufp = GetChunk()
	}
	buf := *s.bufp
	buf[0] = s.one[0]
	if err != nil {
		return buf[:1], err
	}
	m, err := r.Read(buf[1:])
	return buf[:1+m], err
}

// convert passes p through the exchange's stream; what it returns is what
// the client gets of it (maybe nothing yet: an event is not whole).
func (s *Stream) convert(p []byte) ([]byte, error) {
	if s.st == nil {
		return p, nil
	}
	return s.st.Feed(s.Out(), p)
}

// DataEvents is how many events carrying data the upstream has sent: a
// stream with no converter counts its chunks.
func (s *Stream) DataEvents() int {
	if s.st == nil {
		return s.chunks
	}
	return s.st.DataEvents()
}

// Next reads the upstream's next bytes and converts them; fresh reports
// whether they carried data (a keep-alive does not).
func (s *Stream) Next(r io.Reader) (out []byte, fresh bool, err, ferr error) {
	before := s.DataEvents()
	p, err := s.read(r)
	if len(p) > 0 {
		s.chunks++
		out, ferr = s.convert(p)
	}
	return out, s.DataEvents() > before, err, ferr
}

// SetConverter makes st what every chunk goes through (nil: nothing, the
// chunks go as they came).
func (s *Stream) SetConverter(st translate.Stream) { s.st = st }

// Converter is what every chunk goes through (nil: nothing).
func (s *Stream) Converter() translate.Stream { return s.st }

// Chunks is how many reads returned bytes.
func (s *Stream) Chunks() int { return s.chunks }

// Hold keeps first, the client's first output, and the read's and the
// converter's state after it, for Relay.
func (s *Stream) Hold(first []byte, err, ferr error) { s.first, s.rerr, s.ferr = first, err, ferr }

// Watch is what a stream's relay tells its attempt as it goes: its waits
// on the upstream (added to Wait, on the clock Now), each data event (Data:
// the attempt's idle bound re-arms; keep-alives do not), and an end that
// was not clean (Broken: the attempt says why, and returns the error event
// the client gets, nil for none).
type Watch struct {
	Now    func() time.Time
	Wait   *time.Duration
	Data   func()
	Broken func(ferr error) []byte
}

// Relay sends the first output at once and relays every later chunk as
// it comes, flushing each, until the upstream ends; a failure after the
// first byte ends the stream with the error event watch.Broken gives. It
// returns the status the client got.
//
// A held stream spends its life parked in pump's wait for the upstream's
// next bytes, under every caller's frame (net/http's, the gateway's) and,
// on HTTP/1.1, the transport's body reader, its chunked reader and its
// bufio (1.3 kB of net/http frames). The runtime shrinks a parked
// goroutine's stack only to four times what it uses, so those frames
// together decide whether a held stream's stack is 8 kB or 16 kB: Relay
// and pump keep theirs small, and everything else they do (the headers,
// the first write, a chunk's conversion and write, the end) runs in
// functions of their own whose frames are gone by the time the stream
// waits.
func (s *Stream) Relay(a *Answer, watch Watch) int {
	cw := s.begin(a)
	if cw == nil {
		return a.Resp.StatusCode
	}
	defer cw.wd.Clear()
	s.pump(a.Resp.Body, cw, &watch)
	return a.Resp.StatusCode
}

// begin writes the response's headers and the first output; nil when the
// client is gone (the deadline cleared).
//
//go:noinline
func (s *Stream) begin(a *Answer) *chunkWriter {
	resp, w := a.Resp, a.W
	h := w.Header()
	CopyResponseHeaders(h, resp.Header, true, a.APIKey)
	if a.Converted {
		h.Del("Content-Encoding")
	}
	a.Gateway(h)
	w.WriteHeader(resp.StatusCode)
	cw := newChunkWriter(w, a.WriteTimeout)
	ok := cw.write(s.first)
	s.first = nil
	s.Drop()
	if !ok {
		cw.wd.Clear()
		return nil
	}
	return cw
}

// pump relays every chunk after the first until the upstream ends or the
// client goes. Its one wait, for the upstream's next byte, is in this
// frame; the rest of a chunk is taken and sent by chunk.
//
//go:noinline
func (s *Stream) pump(body io.Reader, cw *chunkWriter, watch *Watch) {
	err, ferr := s.rerr, s.ferr
	for ferr == nil && err == nil {
		t := watch.Now()
		n, rerr := readSome(body, s.one[:])
		var ok bool
		if ok, err, ferr = s.chunk(body, cw, watch, t, n, rerr); !ok {
			return
		}
	}
	s.end(cw, watch, err, ferr)
}

// chunk takes the rest of what came with the n bytes the wait begun at t
// read (rerr: its error), converts it and sends the client its part;
// false when the client is gone.
//
//go:noinline
func (s *Stream) chunk(body io.Reader, cw *chunkWriter, watch *Watch, t time.Time, n int, rerr error) (ok bool, err, ferr error) {
	before := s.DataEvents()
	p, err := s.rest(body, n, rerr)
	*watch.Wait += watch.Now().Sub(t) // the upstream's part: the wait and the rest's read
	var out []byte
	if len(p) > 0 {
		s.chunks++
		out, ferr = s.convert(p)
	}
	if s.DataEvents() > before { // only data shows the stream goes on: keep-alives do not
		watch.Data()
	}
	ok = cw.write(out)
	s.Drop()
	return ok, err, ferr
}

// end closes the client's stream once the upstream's has ended: a
// translated stream's last events when it ended cleanly, the error event
// when it did not.
//
//go:noinline
func (s *Stream) end(cw *chunkWriter, watch *Watch, err, ferr error) {
	if ferr == nil && err == io.EOF && s.st != nil {
		// The upstream ended cleanly: close the client's stream, unless the
		// upstream never said how it stopped (cut short).
		var out []byte
		out, ferr = s.st.Finish(s.Out())
		ok := cw.write(out)
		s.Drop()
		if !ok {
			return
		}
	}
	if ferr == nil && (err == io.EOF || err == ErrStreamFinished) {
		return
	}
	if ev := watch.Broken(ferr); ev != nil {
		// Any partial event is finished first, then the error says so.
		if cw.tail != [2]byte{'\n', '\n'} {
			ev = append([]byte("\n\n"), ev...)
		}
		cw.write(ev)
	}
}

// chunkWriter writes stream chunks to the client, each flushed at once
// and bounded by the write deadline, and remembers the last two bytes
// written (whether an event was left open).
type chunkWriter struct {
	w    http.ResponseWriter
	wd   *WriteDeadline
	tail [2]byte
}

func newChunkWriter(w http.ResponseWriter, timeout time.Duration) *chunkWriter {
	return &chunkWriter{w: w, wd: NewWriteDeadline(w, timeout)}
}

// write sends p and flushes it; false when the client is gone or stopped
// reading.
func (cw *chunkWriter) write(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	cw.wd.Extend()
	if _, err := cw.w.Write(p); err != nil {
		return false
	}
	if err := cw.wd.Flush(); err != nil {
		return false
	}
	if len(p) >= 2 {
		cw.tail[0], cw.tail[1] = p[len(p)-2], p[len(p)-1]
	} else {
		cw.tail[0], cw.tail[1] = cw.tail[1], p[0]
	}
	return true
}

// EventStream reports whether an answer to a streaming request is a
// server-sent event stream, as its Content-Type says.
func EventStream(h http.Header) bool {
	ct := upstream.HeaderValue(h, "Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// ErrStreamFinished marks a stream whose translator was already finished.
var ErrStreamFinished = errors.New("stream finished")

// readSome reads until it has at least one byte or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}
