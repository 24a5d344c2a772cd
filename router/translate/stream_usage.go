package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// chatUsageFilter relays an OpenAI stream byte for byte, reading its usage;
// with strip it leaves out the usage-only chunk (choices [] with usage) that
// the gateway asked for on the client's behalf.
type chatUsageFilter struct {
	strip bool // immutable after NewChatUsageFilter
	dec   sseDecoder
	usage Usage
	done  bool // [DONE] came: the stream is whole
	err   error
}

// NewChatUsageFilter passes an OpenAI chunk stream through unchanged and
// records the usage of its final usage chunk. The gateway asks every OpenAI
// upstream for that chunk (WithStreamUsage); strip (the client had not asked)
// removes it, and only it, from what the client gets. Without strip, Feed
// appends p as it came; with strip, it holds back an incomplete event until
// the rest arrives, so Feed may append nothing. The stream is held to its
// API: an event whose data is neither one JSON value nor [DONE] is an error
// (ErrInvalidUpstream), and Finish appends what was held back and reports
// ErrTruncated when [DONE] never came, so a cut stream is never passed off
// as whole.
func NewChatUsageFilter(strip bool) Stream { return &chatUsageFilter{strip: strip} }

func (f *chatUsageFilter) Usage() Usage { return f.usage }

func (f *chatUsageFilter) Feed(dst, p []byte) ([]byte, error) {
	if f.err != nil {
		return dst, f.err
	}
	if !f.strip {
		dst = append(dst, p...)
	}
	f.dec.begin(p)
	for {
		ev, ok := f.dec.next()
		if !ok {
			break
		}
		if f.err = f.check(ev); f.err != nil {
			return dst, f.err
		}
		if !f.usageOnly(ev) && f.strip {
			dst = append(dst, ev.raw...)
		}
	}
	if err := f.dec.end(); err != nil {
		f.err = err
	}
	return dst, f.err
}

// check holds an event to the API: its data is [DONE], which ends the
// stream, or one JSON value (what follows [DONE] is relayed unread).
func (f *chatUsageFilter) check(ev sseEvent) error {
	if !ev.hasData || f.done {
		return nil
	}
	if string(ev.data) == "[DONE]" {
		f.done = true
		return nil
	}
	return checkEventJSON(ev)
}

func (f *chatUsageFilter) Finish(dst []byte) ([]byte, error) {
	if f.err != nil {
		return dst, f.err
	}
	if ev, ok := f.dec.finishEvent(); ok {
		if f.err = f.check(ev); f.err != nil {
			return dst, f.err
		}
		if !f.usageOnly(ev) && f.strip {
			dst = append(dst, ev.raw...)
		}
	}
	if !f.done {
		return dst, ErrTruncated
	}
	return dst, nil
}

// usageOnly records the usage an event carries and reports whether it is the
// usage-only chunk. Most chunks carry no usage object ("usage":null at most),
// which a byte search rules out without parsing.
func (f *chatUsageFilter) usageOnly(ev sseEvent) bool {
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

// messagesUsageScanner relays an Anthropic stream byte for byte, reading its
// usage from message_start and message_delta.
type messagesUsageScanner struct {
	dec   sseDecoder
	usage Usage
	end   string // the event that ended the stream: message_stop, error ("" : none yet)
	err   error
}

// NewMessagesUsageScanner passes an Anthropic event stream through unchanged
// (Feed appends p as it came) and records the usage of its message_start
// (input and cache tokens) and message_delta (output tokens, and the input
// counts again when the API repeats them). The stream is held to its API:
// an event whose data is not one JSON value is an error
// (ErrInvalidUpstream); Finish reports ErrTruncated when message_stop never
// came, and ErrStreamError when the stream ended with the provider's own
// error event (the client has that event already).
func NewMessagesUsageScanner() Stream { return &messagesUsageScanner{} }

func (s *messagesUsageScanner) Usage() Usage { return s.usage }

func (s *messagesUsageScanner) Feed(dst, p []byte) ([]byte, error) {
	dst = append(dst, p...)
	if s.err != nil {
		return dst, s.err
	}
	s.dec.begin(p)
	for {
		ev, ok := s.dec.next()
		if !ok {
			break
		}
		if s.err = s.check(ev); s.err != nil {
			return dst, s.err
		}
		s.scan(ev)
	}
	if err := s.dec.end(); err != nil {
		s.err = err
	}
	return dst, s.err
}

func (s *messagesUsageScanner) Finish(dst []byte) ([]byte, error) {
	if s.err != nil {
		return dst, s.err
	}
	if ev, ok := s.dec.finishEvent(); ok {
		if s.err = s.check(ev); s.err != nil {
			return dst, s.err
		}
		s.scan(ev)
	}
	switch s.end {
	case "message_stop":
		return dst, nil
	case "error":
		return dst, ErrStreamError
	}
	return dst, ErrTruncated
}

// check holds an event to the API (its data one JSON value) and notes
// the event that ends the stream: message_stop, or the provider's error.
func (s *messagesUsageScanner) check(ev sseEvent) error {
	if !ev.hasData || s.end != "" {
		return nil
	}
	name := ev.name
	if len(name) == 0 { // providers that name events only in their data
		jsonscan.Object(ev.data, func(k, v []byte) {
			if string(k) == "type" && isString(v) {
				name = v[1 : len(v)-1]
			}
		})
	}
	switch string(name) {
	case "message_stop", "error":
		s.end = string(name)
	}
	return checkEventJSON(ev)
}

// scan reads usage from the two events that carry it; the event name (which
// Anthropic always sends) spares parsing every other event.
func (s *messagesUsageScanner) scan(ev sseEvent) {
	if !ev.hasData {
		return
	}
	switch string(ev.name) {
	case "message_start", "message_delta", "":
	default:
		return
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
		return
	}
	switch {
	case stringIs(typ, "message_start"):
		s.usage = messagesUsage(s.usage, jsonscan.Field(message, "usage"))
	case stringIs(typ, "message_delta"):
		s.usage = messagesUsage(s.usage, usage)
	}
}
