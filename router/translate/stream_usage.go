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
	err   error
}

// NewChatUsageFilter passes an OpenAI chunk stream through unchanged and
// records the usage of its final usage chunk. The gateway asks every OpenAI
// upstream for that chunk (WithStreamUsage); strip (the client had not asked)
// removes it, and only it, from what the client gets. Without strip, Feed
// appends p as it came; with strip, it holds back an incomplete event until
// the rest arrives, so Feed may append nothing. Finish appends what was held
// back and never reports truncation: the stream is the client's own format,
// ended as the upstream ended it.
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
		if !f.usageOnly(ev) && f.strip {
			dst = append(dst, ev.raw...)
		}
	}
	if err := f.dec.end(); err != nil {
		f.err = err
	}
	return dst, f.err
}

func (f *chatUsageFilter) Finish(dst []byte) ([]byte, error) {
	if f.err != nil {
		return dst, f.err
	}
	if ev, ok := f.dec.finishEvent(); ok && !f.usageOnly(ev) && f.strip {
		dst = append(dst, ev.raw...)
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
	err   error
}

// NewMessagesUsageScanner passes an Anthropic event stream through unchanged
// (Feed appends p as it came) and records the usage of its message_start
// (input and cache tokens) and message_delta (output tokens, and the input
// counts again when the API repeats them). Feed and Finish never fail.
func NewMessagesUsageScanner() Stream { return &messagesUsageScanner{} }

func (s *messagesUsageScanner) Usage() Usage { return s.usage }

func (s *messagesUsageScanner) Feed(dst, p []byte) ([]byte, error) {
	dst = append(dst, p...)
	if s.err != nil {
		return dst, nil // relaying goes on; only the usage reading stopped
	}
	s.dec.begin(p)
	for {
		ev, ok := s.dec.next()
		if !ok {
			break
		}
		s.scan(ev)
	}
	if err := s.dec.end(); err != nil {
		s.err = err
	}
	return dst, nil
}

func (s *messagesUsageScanner) Finish(dst []byte) ([]byte, error) {
	if ev, ok := s.dec.finishEvent(); ok && s.err == nil {
		s.scan(ev)
	}
	return dst, nil
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
