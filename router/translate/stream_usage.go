package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// passThrough relays a stream in the client's own format, reading its
// usage and holding it to its API; it changes bytes only when asked: the
// OpenAI usage-only chunk the gateway asked for on the client's behalf is
// left out (strip), and the model the stream names is replaced (model).
type passThrough struct {
	// Immutable after construction.
	format Format
	strip  bool
	model  []byte // a string token; nil: the model is left as it came

	dec   sseDecoder
	usage Usage
	id    string // a Responses stream's response id, from its first response.* event ("": none yet)
	end   string // the event that ended the stream ("": none yet); what follows is relayed unread
	err   error
	buf   []byte // scratch for a rewritten event
	held  []byte // what the client gets of the keep-alives before the first data event
	data  int    // the data events read, each its API's
}

// maxHeldKeepAlives bounds the keep-alives held before a stream's first
// data event: past it, the whole ones held are dropped (a comment or a
// ping tells the client nothing).
const maxHeldKeepAlives = 64 << 10

// NewPassThrough relays a stream of format f (Chat, Messages or Responses)
// as it came and records its usage: an OpenAI chat stream's final usage
// chunk, an Anthropic stream's message_start and message_delta, a
// Responses stream's final response. With stripUsage (Chat only) the
// usage-only chunk is left out of what the client gets; with a model, the
// stream names that model instead of the upstream's (every chunk of a chat
// stream, message_start, the response object of the response.* events).
// Without either, Feed appends p as it came; with one, it holds back an
// incomplete event until the rest arrives. Either way, what comes before
// the first event that carries data (comments, pings, empty events) is
// held, and relayed with that event: until an answer has begun there is
// nothing for the client, and nothing the gateway is committed to.
//
// The stream is held to its API: an event whose data is not one JSON value
// (nor a chat stream's [DONE]) is an error (ErrInvalidUpstream). Finish
// appends what was held back and reports ErrTruncated when the stream never
// said how it ended ([DONE]; message_stop; response.completed or
// response.incomplete), and ErrStreamError when it ended with the
// provider's own error event (Anthropic's error; the Responses API's
// response.failed or error), which the client has already: a cut or failed
// stream is never passed off as whole.
func NewPassThrough(f Format, stripUsage bool, model string) Stream {
	p := &passThrough{format: f, strip: stripUsage && f == Chat}
	if model != "" {
		p.model = jsonscan.AppendString(nil, model)
	}
	return p
}

// NewChatUsageFilter is NewPassThrough for an OpenAI chat stream whose
// model is left as it came.
func NewChatUsageFilter(strip bool) Stream { return NewPassThrough(Chat, strip, "") }

// NewMessagesUsageScanner is NewPassThrough for an Anthropic stream left as
// it came.
func NewMessagesUsageScanner() Stream { return NewPassThrough(Messages, false, "") }

// NewResponsesCheck is NewPassThrough for a Responses stream left as it
// came.
func NewResponsesCheck() Stream { return NewPassThrough(Responses, false, "") }

func (f *passThrough) Usage() Usage { return f.usage }

// ResponseID is the id of the response a Responses stream carries, read
// from its first response.* event (response.created); "" for the other
// formats, or before that event was whole.
func (f *passThrough) ResponseID() string { return f.id }

// verbatim reports whether every byte is relayed as it came.
func (f *passThrough) verbatim() bool { return !f.strip && f.model == nil }

func (f *passThrough) DataEvents() int { return f.data }

func (f *passThrough) Feed(dst, p []byte) ([]byte, error) {
	if f.data > 0 {
		return f.feed(dst, p)
	}
	start := len(dst)
	dst, err := f.feed(dst, p)
	return f.hold(dst, start, err)
}

func (f *passThrough) Finish(dst []byte) ([]byte, error) {
	if f.data > 0 {
		return f.finish(dst)
	}
	start := len(dst)
	dst, err := f.finish(dst)
	return f.hold(dst, start, err)
}

// hold keeps what dst[start:] holds while no event has carried data, and
// puts what it kept before dst[start:] once one has. A stream that breaks
// before its first data event gives nothing of it: nothing of it has
// reached the client, so the attempt can still fail over.
func (f *passThrough) hold(dst []byte, start int, err error) ([]byte, error) {
	switch {
	case f.data > 0:
		f.held = append(f.held, dst[start:]...)
		dst = append(dst[:start], f.held...)
		f.held = nil
		return dst, err
	case err != nil:
		f.held = nil
		return dst[:start], err
	}
	f.held = append(f.held, dst[start:]...)
	if len(f.held) > maxHeldKeepAlives {
		keep := 0 // an incomplete event, relayed as it came, stays
		if f.verbatim() {
			keep = len(f.dec.pending)
		}
		f.held = append(f.held[:0], f.held[len(f.held)-keep:]...)
	}
	return dst[:start], nil
}

func (f *passThrough) feed(dst, p []byte) ([]byte, error) {
	if f.verbatim() {
		dst = append(dst, p...)
	}
	if f.err != nil {
		return dst, f.err
	}
	f.dec.begin(p)
	for {
		ev, ok := f.dec.next()
		if !ok {
			break
		}
		if dst, f.err = f.event(dst, ev); f.err != nil {
			return dst, f.err
		}
	}
	if err := f.dec.end(); err != nil {
		f.err = err
	}
	return dst, f.err
}

func (f *passThrough) finish(dst []byte) ([]byte, error) {
	if f.err != nil {
		return dst, f.err
	}
	if ev, ok := f.dec.finishEvent(); ok {
		if dst, f.err = f.event(dst, ev); f.err != nil {
			return dst, f.err
		}
	}
	switch f.end {
	case "[DONE]", "message_stop", "response.completed", "response.incomplete":
		return dst, nil
	case "error", "response.failed":
		return dst, ErrStreamError
	}
	return dst, ErrTruncated
}

// event checks one event, notes whether it ends the stream, and relays it.
func (f *passThrough) event(dst []byte, ev sseEvent) ([]byte, error) {
	if !ev.isData || f.end != "" { // a keep-alive, or after the end
		if !f.verbatim() {
			dst = append(dst, ev.raw...) // after the end: relayed unread
		}
		return dst, nil
	}
	if f.format == Chat && string(ev.data) == "[DONE]" {
		f.end = "[DONE]"
		f.data++
		return f.relay(dst, ev), nil
	}
	if err := checkEventJSON(ev); err != nil {
		return dst, err
	}
	f.data++
	if f.format != Chat {
		name := ev.name
		if len(name) == 0 { // providers that name events only in their data
			if typ := jsonscan.Field(trimmed(ev.data), "type"); isString(typ) {
				name = typ[1 : len(typ)-1]
			}
		}
		switch string(name) {
		case "message_stop", "error", "response.completed", "response.incomplete", "response.failed":
			f.end = string(name)
		}
	}
	return f.relay(dst, ev), nil
}

// relay reads one event and, unless every byte goes as it came, appends
// what the client gets of it.
func (f *passThrough) relay(dst []byte, ev sseEvent) []byte {
	var drop bool
	var model []byte // the model member's value in ev.data, when it is to change
	switch f.format {
	case Chat:
		drop = f.chatUsage(ev)
		if f.model != nil && !drop && ev.hasData {
			model = jsonscan.Field(trimmed(ev.data), "model") // checked by event
		}
	case Messages:
		model = f.messagesUsage(ev)
	case Responses:
		model = f.responsesUsage(ev)
	}
	switch {
	case f.verbatim():
		return dst
	case drop && f.strip:
		return dst
	case f.model == nil || !isString(model):
		return append(dst, ev.raw...)
	}
	// The event again, with the model's value replaced.
	at := jsonscan.Offset(ev.data, model)
	f.buf = append(f.buf[:0], ev.data[:at]...)
	f.buf = append(f.buf, f.model...)
	f.buf = append(f.buf, ev.data[at+len(model):]...)
	if len(ev.name) > 0 {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	for _, c := range f.buf { // a data line holds no newline: JSON reads one as a space
		if c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, "\n\n"...)
}

// trimmed is an event's data, checked to be one JSON value, without the
// whitespace before it (the walkers start at the value).
func trimmed(data []byte) []byte { return data[jsonscan.SkipSpace(data, 0):] }

// chatUsage records the usage an OpenAI chunk carries and reports whether
// it is the usage-only chunk. Most chunks carry no usage object
// ("usage":null at most), which a byte search rules out without parsing.
func (f *passThrough) chatUsage(ev sseEvent) bool {
	if !ev.hasData || !hasObjectMember(ev.data, `"usage"`) {
		return false
	}
	var usage, choices []byte
	if !jsonscan.Object(ev.data, func(k, val []byte) {
		switch string(k) {
		case "usage":
			usage = val
		case "choices":
			choices = val
		}
	}) {
		return false
	}
	u := chatUsage(usage)
	if !u.Known {
		return false
	}
	f.usage = u
	return isArray(choices) && emptyArray(choices)
}

// messagesUsage reads usage from the two Anthropic events that carry it
// (the event name, which Anthropic always sends, spares parsing every
// other event) and returns message_start's model member.
func (f *passThrough) messagesUsage(ev sseEvent) (model []byte) {
	if !ev.hasData {
		return nil
	}
	switch string(ev.name) {
	case "message_start", "message_delta", "":
	default:
		return nil
	}
	var typ, message, usage []byte
	if !jsonscan.Object(ev.data, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = val
		case "message":
			message = val
		case "usage":
			usage = val
		}
	}) {
		return nil
	}
	switch {
	case stringIs(typ, "message_start"):
		f.usage = messagesUsage(f.usage, jsonscan.Field(message, "usage"))
		return jsonscan.Field(message, "model")
	case stringIs(typ, "message_delta"):
		f.usage = messagesUsage(f.usage, usage)
	}
	return nil
}

// responsesUsage reads usage from the event that ends a Responses stream
// and returns the model member of the response object a response.* event
// carries.
func (f *passThrough) responsesUsage(ev sseEvent) (model []byte) {
	switch string(ev.name) {
	case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed", "":
	default:
		return nil
	}
	var response []byte
	if !jsonscan.Object(ev.data, func(k, val []byte) {
		if string(k) == "response" {
			response = val
		}
	}) || !isObject(response) {
		return nil
	}
	if u := responsesUsage(jsonscan.Field(response, "usage")); u.Known {
		f.usage = u
	}
	if f.id == "" {
		if id := jsonscan.Field(response, "id"); isString(id) {
			f.id = jsonscan.Unquote(id)
		}
	}
	return jsonscan.Field(response, "model")
}

func emptyArray(v []byte) bool {
	e := jsonscan.ElementsOf(v)
	_, ok := e.Next()
	return !ok
}

// hasObjectMember reports whether data holds key followed by ':' and an
// object, anywhere: a cheap test before parsing.
func hasObjectMember(data []byte, key string) bool {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(key))
		if j < 0 {
			return false
		}
		i += j + len(key)
		k := jsonscan.SkipSpace(data, i)
		if k < len(data) && data[k] == ':' {
			if k = jsonscan.SkipSpace(data, k+1); k < len(data) && data[k] == '{' {
				return true
			}
		}
	}
}

// WithAnswerModel returns a unary answer relayed as it came (valid JSON:
// the gateway has checked it) with its top-level model member naming model
// instead; a body without one comes back as it was.
func WithAnswerModel(body []byte, model string) []byte {
	v := body[jsonscan.SkipSpace(body, 0):]
	if !isObject(v) {
		return body
	}
	old := jsonscan.Field(v, "model")
	if !isString(old) {
		return body
	}
	at := jsonscan.Offset(body, old)
	out := make([]byte, 0, len(body)+len(model))
	out = append(out, body[:at]...)
	out = jsonscan.AppendString(out, model)
	return append(out, body[at+len(old):]...)
}
