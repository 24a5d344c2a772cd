package upstream

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"sync"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// The AWS event stream (application/vnd.amazon.eventstream) of Bedrock's
// InvokeModelWithResponseStream, turned back into the Anthropic SSE
// stream it carries, so the relay and the translators read an Anthropic
// stream whatever the host. Each message is a binary frame
//
//	total length (4) | headers length (4) | prelude CRC (4) | headers | payload | message CRC (4)
//
// decoded here in place, both CRCs checked, the message's length bounded
// before anything is read (aws-sdk-go-v2's decoder allocates every header
// name and value of every frame, tens of allocations and microseconds a
// chunk; this one allocates nothing once its buffer has grown). A
// message is:
//
//	:message-type event, :event-type chunk: payload {"bytes":"<base64 Anthropic event>","p":"<padding>"}
//	:message-type exception, :exception-type throttlingException (payload {"message":...})
//	:message-type error, :error-code ...
//
// A chunk becomes "event: TYPE\ndata: JSON\n\n"; an exception or error
// ends the stream with a *StreamException.
//
// ConverseStream's event stream carries its events unwrapped: each event
// message's :event-type (messageStart, contentBlockDelta, ..., metadata)
// names its JSON payload. A reader made with NewConverseStreamReader
// yields each as "data: {"TYPE":PAYLOAD}\n\n", the form the neutral
// model's stream reads a Converse event in.

// MaxEventStreamMessage is the largest event-stream message read: an
// Anthropic event is a few KiB at most (a tool call's arguments arrive in
// pieces), so anything near this is a corrupt length.
const MaxEventStreamMessage = 1 << 20

// Event-stream failures (the stream is broken: a provider fault).
var (
	ErrEventStreamTooLarge = errors.New("event stream: message longer than the limit")
	ErrEventStreamCorrupt  = errors.New("event stream: malformed message")
)

// StreamException is an exception or error frame: the host ended the
// stream with an error of Type (its :exception-type or :error-code, e.g.
// throttlingException, modelStreamErrorException). Its message is not
// kept: it may quote the request.
type StreamException struct {
	Type string
}

func (e *StreamException) Error() string { return "event stream exception: " + e.Type }

// EventStreamReader reads an event stream and yields the Anthropic SSE
// events its chunks carry. Not safe for concurrent use.
type EventStreamReader struct {
	bufs    *esBufs // pooled; nil once the stream has ended and they went back
	src     *bufio.Reader
	max     int
	msg     []byte // the message being decoded, reused
	scratch []byte // a chunk's decoded bytes
	out     []byte // SSE bytes not yet read
	off     int
	err     error // sticky
	// converse: events are ConverseStream's, not InvokeModel's chunks.
	converse bool
	closer   io.Closer // what Close closes (nil: nothing)
}

// Close closes the reader's source when it was made by Cloud.Response (an
// answer's body); the buffers are not touched: Close may come from
// another goroutine while Read waits.
func (r *EventStreamReader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// esBufs are a reader's buffers, kept between streams: a stream's reader
// takes them when it is made and gives them back when its stream ends (the
// error Read then returns is the last thing it does with them), so a
// stream costs no buffer allocation. A stream left before its end keeps
// them for the garbage collector.
type esBufs struct {
	src               *bufio.Reader
	msg, scratch, out []byte
}

// maxPooledESBuf bounds a buffer given back: one grown by a rare large
// message is dropped rather than kept.
const maxPooledESBuf = 64 << 10

var esPool = sync.Pool{New: func() any {
	// A chunk frame and its event are a few hundred bytes: buffers that
	// fit them from the start spare a growth or two per frame size seen,
	// and one grown (the SSE of every frame that arrived together) comes
	// back grown.
	b := make([]byte, 3<<10)
	return &esBufs{src: bufio.NewReaderSize(nil, 4<<10),
		msg: b[: 1<<10 : 1<<10], scratch: b[1<<10 : 2<<10 : 2<<10], out: b[2<<10 : 2<<10 : 3<<10]}
}}

// NewEventStreamReader reads r; max bounds one message (<= 0:
// MaxEventStreamMessage).
func NewEventStreamReader(r io.Reader, max int) *EventStreamReader {
	if max <= 0 {
		max = MaxEventStreamMessage
	}
	b := esPool.Get().(*esBufs)
	b.src.Reset(r)
	return &EventStreamReader{bufs: b, src: b.src, max: max, msg: b.msg, scratch: b.scratch, out: b.out[:0]}
}

// NewConverseStreamReader reads r, a ConverseStream event stream.
func NewConverseStreamReader(r io.Reader, max int) *EventStreamReader {
	es := NewEventStreamReader(r, max)
	es.converse = true
	return es
}

// release gives the buffers back (the stream has ended: r.err is set and
// every byte of r.out was read).
func (r *EventStreamReader) release() {
	b := r.bufs
	if b == nil {
		return
	}
	r.bufs = nil
	b.src.Reset(nil)
	if cap(r.msg) <= maxPooledESBuf {
		b.msg = r.msg[:0]
	}
	if cap(r.scratch) <= maxPooledESBuf {
		b.scratch = r.scratch[:0]
	}
	if cap(r.out) <= maxPooledESBuf {
		b.out = r.out[:0]
	}
	r.src, r.msg, r.scratch, r.out, r.off = nil, nil, nil, nil, 0
	esPool.Put(b)
}

// Read yields SSE bytes; at a clean end of the event stream io.EOF, at an
// exception frame a *StreamException, at a bad frame another error.
func (r *EventStreamReader) Read(p []byte) (int, error) {
	for r.off == len(r.out) {
		if r.err != nil {
			r.release()
			return 0, r.err
		}
		r.out, r.off = r.out[:0], 0
		r.err = r.next()
		// Every message that has already arrived whole is decoded now,
		// so that frames that came together are read (and relayed) at
		// once, as SSE events that came together are.
		for r.err == nil && r.whole() {
			r.err = r.next()
		}
	}
	n := copy(p, r.out[r.off:])
	r.off += n
	return n, nil
}

// whole reports whether a whole message is buffered already.
func (r *EventStreamReader) whole() bool {
	n := r.src.Buffered()
	if n < 4 {
		return false
	}
	head, _ := r.src.Peek(4)
	return uint64(binary.BigEndian.Uint32(head)) <= uint64(n)
}

// Header value types of the event-stream encoding, and the length of the
// fixed-size ones.
const (
	esBytes  = 6
	esString = 7
)

var esFixedLen = [...]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

// next decodes one message into r.out (possibly nothing).
func (r *EventStreamReader) next() error {
	head, err := r.src.Peek(8)
	if err != nil {
		if err == io.EOF && len(head) == 0 {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	total, headers := binary.BigEndian.Uint32(head), binary.BigEndian.Uint32(head[4:])
	if total > uint32(r.max) {
		return ErrEventStreamTooLarge
	}
	if total < 16 || headers > total-16 {
		return ErrEventStreamCorrupt
	}
	if cap(r.msg) < int(total) {
		r.msg = make([]byte, total)
	}
	m := r.msg[:total]
	if _, err := io.ReadFull(r.src, m); err != nil {
		return io.ErrUnexpectedEOF
	}
	if crc32.ChecksumIEEE(m[:8]) != binary.BigEndian.Uint32(m[8:]) ||
		crc32.ChecksumIEEE(m[:total-4]) != binary.BigEndian.Uint32(m[total-4:]) {
		return ErrEventStreamCorrupt
	}
	var msgType, eventType, exceptionType, errorCode []byte
	for h := m[12 : 12+headers]; len(h) > 0; {
		nameLen := int(h[0])
		if len(h) < 2+nameLen {
			return ErrEventStreamCorrupt
		}
		name, typ := h[1:1+nameLen], h[1+nameLen]
		h = h[2+nameLen:]
		var val []byte
		switch {
		case typ == esBytes || typ == esString:
			if len(h) < 2 || len(h) < 2+int(binary.BigEndian.Uint16(h)) {
				return ErrEventStreamCorrupt
			}
			n := int(binary.BigEndian.Uint16(h))
			val, h = h[2:2+n], h[2+n:]
		case int(typ) < len(esFixedLen) && (typ < esBytes || typ > esString):
			if len(h) < esFixedLen[typ] {
				return ErrEventStreamCorrupt
			}
			h = h[esFixedLen[typ]:]
			continue // no header this reader reads is of these types
		default:
			return ErrEventStreamCorrupt
		}
		if typ != esString {
			continue
		}
		switch string(name) {
		case ":message-type":
			msgType = val
		case ":event-type":
			eventType = val
		case ":exception-type":
			exceptionType = val
		case ":error-code":
			errorCode = val
		}
	}
	payload := m[12+headers : total-4]
	switch string(msgType) {
	case "event":
		if r.converse {
			return r.converseEvent(eventType, payload)
		}
		if string(eventType) == "chunk" {
			return r.chunk(payload)
		}
		return nil // initial-response and the like carry no content
	case "exception":
		return &StreamException{Type: string(exceptionType)}
	case "error":
		return &StreamException{Type: string(errorCode)}
	}
	return ErrEventStreamCorrupt
}

// chunk appends the SSE event a chunk's payload carries.
func (r *EventStreamReader) chunk(payload []byte) error {
	b64 := chunkBytes(payload)
	if b64 == nil {
		return ErrEventStreamCorrupt
	}
	need := base64.StdEncoding.DecodedLen(len(b64))
	if cap(r.scratch) < need {
		r.scratch = make([]byte, max(need, 2*cap(r.scratch)))
	}
	n, err := base64.StdEncoding.Decode(r.scratch[:need], b64)
	if err != nil {
		return ErrEventStreamCorrupt
	}
	event := r.scratch[:n]
	typ := eventType(event)
	if typ == nil {
		return ErrEventStreamCorrupt
	}
	r.out = append(r.out, "event: "...)
	r.out = append(r.out, typ...)
	r.out = append(r.out, "\ndata: "...)
	if bytes.IndexByte(event, '\n') >= 0 || bytes.IndexByte(event, '\r') >= 0 {
		// One data line: an event written over lines is made compact.
		buf := bytes.NewBuffer(r.out)
		if json.Compact(buf, event) != nil {
			return ErrEventStreamCorrupt
		}
		r.out = buf.Bytes()
	} else {
		r.out = append(r.out, event...)
	}
	r.out = append(r.out, "\n\n"...)
	return nil
}

// chunkBytes is the base64 text of a chunk's "bytes" member, as it stands
// between its quotes (nil when the payload is no JSON object with such a
// string). Bedrock writes the payload as {"bytes":"...","p":"..."}, with
// base64 and letters in the strings: that shape is read at a glance; any
// other goes through the JSON scanner, and both give the same answer for
// every payload. Base64 has no quote, backslash or control character, so
// neither can hide in the fast path's strings; the one thing the decoder
// would let through that JSON would not is a raw line break (base64
// skips them), which sends the payload to the scanner too.
func chunkBytes(payload []byte) []byte {
	const head, pad = `{"bytes":"`, `","p":"`
	if rest, ok := bytes.CutPrefix(payload, []byte(head)); ok {
		i := bytes.IndexByte(rest, '"')
		if i >= 0 && bytes.IndexByte(rest[:i], '\n') < 0 && bytes.IndexByte(rest[:i], '\r') < 0 &&
			bytes.IndexByte(rest[:i], '\\') < 0 && plainPadding(rest[i:], pad) {
			return rest[:i:i]
		}
	}
	var b64 []byte
	ok := jsonscan.Object(payload, func(name, val []byte) {
		if string(name) == "bytes" && len(val) >= 2 && val[0] == '"' {
			b64 = val[1 : len(val)-1]
		}
	})
	if !ok {
		return nil
	}
	return b64
}

// plainPadding reports whether tail is `"}` or pad, letters and digits,
// and `"}`: the end of a chunk payload after its base64.
func plainPadding(tail []byte, pad string) bool {
	if string(tail) == `"}` {
		return true
	}
	rest, ok := bytes.CutPrefix(tail, []byte(pad))
	if !ok || len(rest) < 2 || string(rest[len(rest)-2:]) != `"}` {
		return false
	}
	for _, c := range rest[:len(rest)-2] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// converseEvent appends a ConverseStream event as {"TYPE":PAYLOAD}.
func (r *EventStreamReader) converseEvent(typ, payload []byte) error {
	if len(typ) == 0 || !plainName(typ) {
		return ErrEventStreamCorrupt
	}
	r.out = append(r.out, `data: {"`...)
	r.out = append(r.out, typ...)
	r.out = append(r.out, `":`...)
	if bytes.ContainsAny(payload, "\r\n") {
		buf := bytes.NewBuffer(r.out)
		if json.Compact(buf, payload) != nil {
			return ErrEventStreamCorrupt
		}
		r.out = buf.Bytes()
	} else {
		r.out = append(r.out, payload...)
	}
	r.out = append(r.out, "}\n\n"...)
	return nil
}

// eventType is an Anthropic event's "type" value, unquoted (nil when it
// has none or is not an object).
func eventType(event []byte) []byte {
	var typ []byte
	ok := jsonscan.Object(event, func(name, val []byte) {
		if string(name) == "type" && len(val) >= 2 && val[0] == '"' && typ == nil {
			typ = val[1 : len(val)-1]
		}
	})
	if !ok || len(typ) == 0 || !plainName(typ) {
		return nil
	}
	return typ
}

// plainName reports whether an event type can be written into an SSE
// line and a JSON string as it is.
func plainName(typ []byte) bool {
	for _, c := range typ {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}
