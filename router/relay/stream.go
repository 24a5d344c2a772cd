package router

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A stream is sent as it comes, flushed chunk by chunk. Until something is
// for the client nothing is committed and the attempt can still fail over;
// after the first byte a failure ends the stream with an error event in
// the client's format: there is no failover once the client has bytes.
//
// Every chunk goes through the exchange's stream: a translator when the
// client speaks the other format (its first event is written the moment
// the upstream's first data event is whole, so the time to first byte
// stays honest; comments and pings before it are no first byte), or a pass-through that reads the usage and drops the usage chunk
// the client did not ask for.

// streamAnswer is a stream in flight: its buffers, its converter and where
// its reading stands.
type streamAnswer struct {
	// bufp and outp (what is read, and what the client gets of it) are
	// pooled and held only while a chunk is in hand: a stream waiting on
	// its upstream holds neither, which is most of a slow stream's life
	// (10,000 streams would hold 160 MB of them for nothing).
	bufp, outp *[]byte
	one        [1]byte // what a wait for the upstream's next bytes reads into
	st         translate.Stream
	first      []byte    // the client's first output, in hand after reach
	rerr, ferr error     // the read's and the converter's state after the first output
	started    time.Time // when the first data event came
	chunks     int       // the reads that returned bytes
}

// drop gives the buffers back between two chunks.
func (s *streamAnswer) drop() {
	if s.bufp != nil {
		relay.PutChunk(s.bufp)
		s.bufp = nil
	}
	if s.outp != nil {
		relay.PutChunk(s.outp)
		s.outp = nil
	}
}

func (s *streamAnswer) release() {
	s.drop()
	s.first = nil
}

// out is an empty output buffer.
func (s *streamAnswer) out() []byte {
	if s.outp == nil {
		s.outp = relay.GetChunk()
	}
	return (*s.outp)[:0]
}

// read waits for the upstream's next bytes holding no pooled buffer (the
// wait reads one byte, into s.one), then takes what came with that byte
// into a pooled one, which holds the bytes returned until drop. The
// transport has those bytes buffered already, so the second read returns
// at once; it waits only when the one byte was all there was.
func (s *streamAnswer) read(r io.Reader) ([]byte, error) {
	n, err := readSome(r, s.one[:])
	if n == 0 {
		return nil, err
	}
	if s.bufp == nil {
		s.bufp = relay.GetChunk()
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
func (s *streamAnswer) convert(p []byte) ([]byte, error) {
	if s.st == nil {
		return p, nil
	}
	return s.st.Feed(s.out(), p)
}

// dataEvents is how many events carrying data the upstream has sent: a
// stream with no converter counts its chunks.
func (s *streamAnswer) dataEvents() int {
	if s.st == nil {
		return s.chunks
	}
	return s.st.DataEvents()
}

// next reads the upstream's next bytes and converts them; fresh reports
// whether they carried data (a keep-alive does not).
func (s *streamAnswer) next(r io.Reader) (out []byte, fresh bool, err, ferr error) {
	before := s.dataEvents()
	p, err := s.read(r)
	if len(p) > 0 {
		s.chunks++
		out, ferr = s.convert(p)
	}
	return out, s.dataEvents() > before, err, ferr
}

// deliverStream sends the first output at once and relays every later
// chunk as it comes, flushing each, until the upstream ends; a failure
// after the first byte ends the stream with an error event.
func (a *attempt) deliverStream(w http.ResponseWriter, route *Route) int {
	resp, s := a.resp, &a.strm
	h := w.Header()
	relay.CopyResponseHeaders(h, resp.Header, true, a.cand.Upstream.APIKey)
	if a.x.conv != convNone {
		h.Del("Content-Encoding")
	}
	setGatewayHeaders(h, route, a.cand.Target)
	w.WriteHeader(resp.StatusCode)
	cw := newChunkWriter(w, a.g.writeTimeout)
	defer cw.wd.Clear()
	defer func() {
		if s.st != nil {
			a.usage(s.st.Usage())
			a.outputRate(a.g.since(s.started))
		}
	}()
	// The upstream did its part whenever the client leaves first.
	a.res.Outcome = telemetry.OutcomeSuccess
	ok := cw.write(s.first)
	s.first = nil
	s.drop()
	if !ok {
		return resp.StatusCode
	}
	err, ferr := s.rerr, s.ferr
	var out []byte
	idle := a.cand.Upstream.Idle
	for ferr == nil && err == nil {
		t := a.g.now()
		var fresh bool
		out, fresh, err, ferr = s.next(resp.Body)
		a.res.Wait += a.g.since(t)
		if fresh { // only data shows the stream goes on: keep-alives do not
			a.idle.Reset(idle)
		}
		ok := cw.write(out)
		s.drop()
		if !ok {
			return resp.StatusCode
		}
	}
	if ferr == nil && err == io.EOF && s.st != nil {
		// The upstream ended cleanly: close the client's stream, unless the
		// upstream never said how it stopped (cut short).
		out, ferr = s.st.Finish(s.out())
		ok := cw.write(out)
		s.drop()
		if !ok {
			return resp.StatusCode
		}
	}
	if ferr == nil && (err == io.EOF || err == errStreamFinished) {
		return resp.StatusCode
	}
	if a.ctx.Err() != nil { // the client left mid-stream
		return resp.StatusCode
	}
	if errors.Is(ferr, translate.ErrStreamError) {
		// The provider ended its stream with its own error event, which the
		// client has: broken, with nothing to add.
		a.res.Outcome, a.res.ErrorType = telemetry.OutcomeBroken, fault.ErrorStreamBroken
		return resp.StatusCode
	}
	a.brokenStream(cw, ferr != nil)
	return resp.StatusCode
}

// brokenStream ends a stream the upstream broke mid-way (or sent what is
// not its API's stream, or stopped without saying how), or the shutdown
// grace ended: it finishes any partial event, then says so.
func (a *attempt) brokenStream(cw *chunkWriter, invalid bool) {
	a.res.Outcome, a.res.ErrorType = telemetry.OutcomeBroken, fault.ErrorStreamBroken
	msg := "upstream stream interrupted after the first byte"
	switch cause := context.Cause(a.actx); {
	case invalid:
		msg = "upstream stream ended early or was not a valid stream of its API"
	case errors.Is(cause, errTotalTimeout):
		msg = "upstream exceeded its total timeout mid-stream"
	case errors.Is(cause, errIdleTimeout):
		a.res.ErrorType = fault.ErrorStall
		msg = "upstream stalled mid-stream: no chunk within its idle timeout (" + a.cand.Upstream.Idle.String() + ")"
	case errors.Is(cause, errStopping):
		a.res.Outcome, a.res.ErrorType = telemetry.OutcomeSuccess, "" // the upstream did its part
		msg = "the gateway is shutting down and its grace period for open streams ended; the stream is incomplete"
	}
	var ev []byte
	if cw.tail != [2]byte{'\n', '\n'} {
		ev = append(ev, "\n\n"...)
	}
	ev = append(ev, translate.StreamErrorEvent(a.c.ep.shape.Format(), msg)...)
	cw.write(ev)
}

// chunkWriter writes stream chunks to the client, each flushed at once
// and bounded by the write deadline, and remembers the last two bytes
// written (whether an event was left open).
type chunkWriter struct {
	w    http.ResponseWriter
	wd   *relay.WriteDeadline
	tail [2]byte
}

func newChunkWriter(w http.ResponseWriter, timeout time.Duration) *chunkWriter {
	return &chunkWriter{w: w, wd: relay.NewWriteDeadline(w, timeout)}
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

// eventStream reports whether an answer to a streaming request is a
// server-sent event stream, as its Content-Type says.
func eventStream(h http.Header) bool {
	ct := upstream.HeaderValue(h, "Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// errStreamFinished marks a stream whose translator was already finished.
var errStreamFinished = errors.New("stream finished")

// readSome reads until it has at least one byte or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}
