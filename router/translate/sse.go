package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Stream turns an upstream's server-sent event stream into the client's, one
// read at a time. It is not safe for concurrent use; one belongs to one
// attempt.
type Stream interface {
	// Feed takes the next bytes read from the upstream, cut anywhere, and
	// appends to dst what the client can be sent now: every event completed so
	// far, translated. It may append nothing (p ended mid-event). An error
	// means the upstream broke its format; dst then holds what came before, and
	// the stream must be ended with the client format's error event
	// ([StreamErrorEvent]). Every later call returns the same error.
	Feed(dst, p []byte) ([]byte, error)
	// Finish is called once the upstream's body has ended cleanly (EOF). It
	// appends what closes the client's stream if the upstream's final events
	// left it open. It returns ErrTruncated when the upstream never said how
	// its answer stopped: the client must then get an error event instead.
	Finish(dst []byte) ([]byte, error)
	// Usage is the usage the upstream has reported so far; Known is false
	// until it reports any.
	Usage() Usage
	// DataEvents is how many events carrying data the upstream has sent so
	// far: a message's start, its content, its end or an error. Comments,
	// keep-alive pings (Anthropic's ping) and events with no data are not
	// counted: they say the connection is alive, not that an answer has
	// begun or goes on, so a stream's first byte is its first data event,
	// and only data events show it has not stalled.
	DataEvents() int
}

// maxBlocks bounds the content block and tool call indexes a stream may use:
// far more than any answer has, few enough that a hostile index cannot make
// the translator allocate much.
const maxBlocks = 1 << 16

// maxPending bounds an incomplete event held between reads: no provider
// sends an event anywhere near this size, so a stream that does is broken.
const maxPending = 16 << 20

// sseDecoder cuts a byte stream into server-sent events as the EventSource
// standard reads them: lines end in \n, \r\n or \r; an empty line ends an
// event; "data:" lines join with \n, "event:" names the event, lines starting
// with ':' are comments. The bytes of an incomplete event are kept until the
// rest arrives, so an event cut anywhere by the network decodes as if it had
// come whole.
type sseDecoder struct {
	pending []byte // the start of an incomplete event, kept between calls
	in      []byte // what is being decoded: p itself, or pending+p
	off     int    // start of the first undecoded event in in
	data    []byte // scratch for an event of several data lines
	events  int    // the events decoded that carry data (carriesData)
}

// sseEvent is one event; its slices are valid until the decoder's next call.
type sseEvent struct {
	name    []byte
	data    []byte
	hasData bool   // a data line was present (an event without one is not dispatched)
	isData  bool   // it carries data: not a keep-alive (carriesData)
	raw     []byte // the event's own bytes, the blank line ending it included
}

// begin starts decoding p, after whatever an earlier call left incomplete.
func (d *sseDecoder) begin(p []byte) {
	d.off = 0
	if len(d.pending) == 0 {
		d.in = p
		return
	}
	d.pending = append(d.pending, p...)
	d.in = d.pending
}

// next returns the next complete event, if there is one.
func (d *sseDecoder) next() (sseEvent, bool) {
	ev, n := parseEvent(d.in[d.off:], &d.data)
	if n == 0 {
		return sseEvent{}, false
	}
	ev.raw = d.in[d.off : d.off+n]
	d.off += n
	if ev.isData = carriesData(ev); ev.isData {
		d.events++
	}
	return ev, true
}

// maxPingSize bounds the data of an event that may be a ping ({"type":
// "ping"} and some room): a chunk of an answer is not searched for one.
const maxPingSize = 64

// carriesData reports whether ev is part of an answer rather than a
// keep-alive: it has data, not blank, and is not a ping (Anthropic names
// its pings; a ping named only in its data counts as one too).
func carriesData(ev sseEvent) bool {
	if !ev.hasData || len(bytes.TrimSpace(ev.data)) == 0 {
		return false
	}
	switch {
	case string(ev.name) == "ping":
		return false
	case len(ev.name) == 0 && len(ev.data) <= maxPingSize && bytes.Contains(ev.data, []byte(`"ping"`)):
		var typ []byte
		valid := jsonscan.Object(ev.data, func(k, v []byte) {
			if string(k) == "type" {
				typ = v
			}
		})
		return !valid || !stringIs(typ, "ping")
	case bytes.Contains(ev.data, []byte(`"prompt_filter_results"`)) || bytes.Contains(ev.data, []byte(`"content_filter_offsets"`)):
		return !azureFilterOnly(ev.data)
	}
	return true
}

// azureFilterOnly reports whether data is one of Azure OpenAI's
// content-filter annotations, which carry no part of the answer: the
// first frame's empty choices with prompt_filter_results, or choices that
// hold only content_filter_results (no delta, no finish). Like a ping,
// it is no first byte.
func azureFilterOnly(data []byte) bool {
	v, valid := jsonscan.Valid(data)
	if !valid || len(v) == 0 || v[0] != '{' {
		return false
	}
	choices := jsonscan.Field(v, "choices")
	if len(choices) < 2 || choices[0] != '[' {
		return false
	}
	for _, c := range jsonscan.Each(choices) {
		if jsonscan.Field(c, "delta") != nil || jsonscan.Field(c, "message") != nil || jsonscan.Field(c, "text") != nil {
			return false
		}
		if f := jsonscan.Field(c, "finish_reason"); f != nil && string(f) != "null" {
			return false
		}
	}
	return true
}

// errEventTooLarge: an incomplete event past maxPending.
var errEventTooLarge = invalidUpstream("an event larger than any provider sends")

// end keeps what is left for the next call. It fails when that is more than
// any event can be.
func (d *sseDecoder) end() error {
	rest := d.in[d.off:]
	d.in = nil
	if len(rest) > maxPending {
		d.pending = nil
		return errEventTooLarge
	}
	// rest may lie inside pending: append moves overlapping bytes correctly.
	d.pending = append(d.pending[:0], rest...)
	return nil
}

// finishEvent decodes what the stream's end left incomplete as if a blank line
// had followed it: a last event whose final newlines were lost is still read.
// It is the last call.
func (d *sseDecoder) finishEvent() (sseEvent, bool) {
	if len(d.pending) == 0 {
		return sseEvent{}, false
	}
	raw := d.pending
	buf := append(append([]byte(nil), raw...), '\n', '\n')
	d.pending = nil
	var ev sseEvent
	for off := 0; off < len(buf); {
		e, n := parseEvent(buf[off:], &d.data)
		if n == 0 {
			break
		}
		off += n
		if e.hasData {
			ev = e
		}
	}
	ev.raw = raw
	if ev.isData = carriesData(ev); ev.isData {
		d.events++
	}
	return ev, true
}

// parseEvent decodes one event at the start of b and returns the bytes it
// spans, or 0 when b holds no complete event yet.
func parseEvent(b []byte, scratch *[]byte) (sseEvent, int) {
	var ev sseEvent
	joined := false
	i := 0
	for {
		lineLen, termLen := lineEnd(b[i:])
		if termLen == 0 {
			return sseEvent{}, 0
		}
		line := b[i : i+lineLen]
		i += lineLen + termLen
		if lineLen == 0 {
			return ev, i
		}
		name, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			name, value = line[:c], line[c+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			switch {
			case !ev.hasData:
				ev.data, ev.hasData = value, true
			case !joined: // a second data line: join them in the scratch buffer
				*scratch = append(append(append((*scratch)[:0], ev.data...), '\n'), value...)
				ev.data, joined = *scratch, true
			default:
				*scratch = append(append(*scratch, '\n'), value...)
				ev.data = *scratch
			}
		case "event":
			ev.name = value
		}
	}
}

// lineEnd finds the end of the first line of b: its length and its
// terminator's (\n, \r\n or \r). termLen 0 means the line is not complete;
// a \r at the very end could still be the start of \r\n.
func lineEnd(b []byte) (lineLen, termLen int) {
	n := bytes.IndexByte(b, '\n')
	seg := b
	if n >= 0 {
		seg = b[:n]
	}
	if r := bytes.IndexByte(seg, '\r'); r >= 0 {
		switch {
		case r+1 >= len(b):
			return 0, 0
		case b[r+1] == '\n':
			return r, 2
		}
		return r, 1
	}
	if n >= 0 {
		return n, 1
	}
	return 0, 0
}

// appendNamedEvent starts an Anthropic event: "event: NAME", then "data: ".
func appendNamedEvent(dst []byte, name string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	return append(dst, "\ndata: "...)
}

// eventStream is what the two format translators share: decoding the
// upstream's events out of the bytes as they arrive, a sticky error, and the
// end of the client's stream.
type eventStream struct {
	dec  sseDecoder
	done bool  // the client's stream has ended (its end or an error event is out): nothing more is written
	err  error // sticky: the upstream broke its format
}

// DataEvents is Stream.DataEvents.
func (e *eventStream) DataEvents() int { return e.dec.events }

// eventTranslator translates one upstream event's data onto dst.
type eventTranslator interface {
	event(dst, data []byte) ([]byte, error)
}

// feed hands t every whole event in p (with what earlier calls left
// incomplete), until the client's stream ends.
func (e *eventStream) feed(t eventTranslator, dst, p []byte) ([]byte, error) {
	if e.err != nil {
		return dst, e.err
	}
	if e.done {
		return dst, nil // whatever follows the stream's end is not the client's
	}
	e.dec.begin(p)
	for !e.done {
		ev, ok := e.dec.next()
		if !ok {
			break
		}
		if ev.isData { // keep-alives are not the client's: pings may be dropped
			if dst, e.err = t.event(dst, ev.data); e.err != nil {
				return dst, e.err
			}
		}
	}
	if err := e.dec.end(); err != nil {
		e.err = err
	}
	if e.done {
		e.dec = sseDecoder{events: e.dec.events}
	}
	return dst, e.err
}

// finishLast hands t the last event when the upstream ended without the
// blank line after it. The caller then ends the client's stream, or reports
// it truncated.
func (e *eventStream) finishLast(t eventTranslator, dst []byte) ([]byte, error) {
	if e.err != nil {
		return dst, e.err
	}
	if ev, ok := e.dec.finishEvent(); ok && ev.isData && !e.done {
		dst, e.err = t.event(dst, ev.data)
	}
	return dst, e.err
}

// streamEnder is a translator whose client's stream
// [eventStream.finishStream] ends.
type streamEnder interface {
	eventTranslator
	// sawStop reports whether the upstream has said how its answer stopped.
	sawStop() bool
	// end writes what ends the client's stream.
	end(dst []byte) []byte
}

// finishStream is a translator's Stream.Finish: the last event, then the end of
// the client's stream unless it has ended already; ErrTruncated when the
// upstream never said how its answer stopped.
func (e *eventStream) finishStream(t streamEnder, dst []byte) ([]byte, error) {
	dst, err := e.finishLast(t, dst)
	switch {
	case err != nil || e.done:
		return dst, err
	case !t.sawStop():
		return dst, ErrTruncated
	}
	return t.end(dst), nil
}
