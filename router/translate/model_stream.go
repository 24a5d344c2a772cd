package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// A translated stream through the model: an upstream decoder (Chat,
// Messages, Converse or Gemini) turns each upstream event into neutral
// events, and a client writer (Chat, Messages or Responses) writes each
// neutral event in the client's words as it comes. Every pair of formats
// is one decoder and one writer; a stream in the client's own format is
// relayed (NewPassThrough), never decoded.

// clientWriter writes neutral events as a client's stream.
type clientWriter interface {
	// write writes one event; done reports that the client's stream has
	// ended (its last event, or an error event, is out).
	write(dst []byte, ev *Event) (out []byte, done bool, err error)
	// end writes what closes a stream whose finish came (its usage was
	// still awaited).
	end(dst []byte) []byte
}

// ModelStream is a Stream from an upstream format the client does not
// speak, through the model. OpenAI's, Anthropic's and Gemini's streams are
// server-sent events, fed with Feed. Converse's is an AWS event stream,
// whose frames the caller decodes: each frame's event type and JSON
// payload go to FeedEvent (Feed takes the same events as SSE whose data is
// {"TYPE": payload}).
type ModelStream struct {
	eventStream
	upstream Format
	chat     chatDecoder
	msgs     messagesDecoder
	conv     converseDecoder
	gem      geminiDecoder
	w        clientWriter
	evs      []Event
	usage    Usage
	started  bool // an event has gone to the writer
	finished bool
	failed   bool // the upstream ended with its own error
	fed      int  // Converse events handed to FeedEvent
}

// DataEvents is how many upstream events carrying data came: SSE events
// (Feed) and Converse events (FeedEvent).
func (s *ModelStream) DataEvents() int { return s.eventStream.DataEvents() + s.fed }

// NewModelStream translates a stream of upstream format (Chat, Messages,
// Converse or Gemini) for a client of another format client (Chat,
// Messages or Responses), presented as a says. An OpenAI upstream is asked
// for its usage (stream_options.include_usage, as the request translators
// do); IncludeUsage adds the usage-only chunk to an OpenAI client's stream.
func NewModelStream(upstream, client Format, a Answer) *ModelStream {
	s := &ModelStream{upstream: upstream}
	switch client {
	case Messages:
		s.w = &messagesWriter{a: a}
	case Responses:
		s.w = &responsesWriter{e: respEvents{a: a}}
		s.chat.reasoning = true
	default:
		s.w = &chatWriter{a: a}
	}
	return s
}

// Usage is the usage the upstream has reported so far.
func (s *ModelStream) Usage() Usage { return s.usage }

// Feed takes upstream bytes (server-sent events), cut anywhere.
func (s *ModelStream) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

// FeedEvent takes one decoded Converse event: its type (messageStart,
// contentBlockDelta, ..., or an exception's name) and JSON payload.
func (s *ModelStream) FeedEvent(dst, name, payload []byte) ([]byte, error) {
	if s.err != nil || s.done {
		return dst, s.err
	}
	s.fed++
	v, ok := jsonscan.Valid(payload)
	if !ok {
		s.err = invalidUpstream("a Converse stream event that is not JSON")
		return dst, s.err
	}
	var err error
	if s.evs, err = s.conv.event(s.evs[:0], name, v); err != nil {
		s.err = err
		return dst, err
	}
	return s.writeEvents(dst)
}

// Finish ends the client's stream once the upstream's body has ended.
// ErrStreamError when the upstream ended its stream with an error, which
// the client has had as its own error event.
func (s *ModelStream) Finish(dst []byte) ([]byte, error) {
	dst, err := s.finishStream(s, dst)
	if err == nil && s.failed {
		err = ErrStreamError
	}
	return dst, err
}

func (s *ModelStream) sawStop() bool { return s.finished }

func (s *ModelStream) end(dst []byte) []byte {
	s.done = true
	return s.w.end(dst)
}

// event reads one SSE event's data. OpenAI's and Anthropic's decoders
// hand each neutral event straight to the writer (put); Converse's and
// Gemini's collect them first (writeEvents).
func (s *ModelStream) event(dst, data []byte) ([]byte, error) {
	var err error
	end := false
	switch s.upstream {
	case Chat:
		if string(data) == "[DONE]" {
			end = true
		} else {
			dst, err = s.chat.chunk(s, dst, data)
		}
	case Messages:
		dst, end, err = s.msgs.event(s, dst, data)
	case Gemini:
		if s.evs, err = s.gem.chunk(s.evs[:0], data); err == nil {
			dst, err = s.writeEvents(dst)
		}
	default:
		if s.evs, err = s.converseSSE(data); err == nil {
			dst, err = s.writeEvents(dst)
		}
	}
	if err == nil {
		err = s.err // a writer's
	}
	if err != nil || !end || s.done {
		return dst, err
	}
	return s.upstreamEnd(dst)
}

// put hands one event to the client writer, unless the client's stream
// has ended or failed. The writer is called by its type: an event built
// on a decoder's stack stays there.
func (s *ModelStream) put(dst []byte, ev *Event) []byte {
	if s.err != nil || s.done {
		return dst
	}
	s.started = true
	switch ev.Kind {
	case EventUsage:
		s.usage = ev.Usage
	case EventFinish:
		s.finished = true
	case EventError:
		s.failed = true
	}
	var done bool
	var err error
	switch w := s.w.(type) {
	case *chatWriter:
		dst, done, err = w.write(dst, ev)
	case *messagesWriter:
		dst, done, err = w.write(dst, ev)
	case *responsesWriter:
		dst, done, err = w.write(dst, ev)
	}
	switch {
	case err != nil:
		s.err = err
	case done:
		s.done = true
	}
	return dst
}

// upstreamEnd ends the client's stream at the upstream's own end ([DONE],
// message_stop): an answer that never said how it stopped stopped
// naturally, and a usage still awaited is not coming.
func (s *ModelStream) upstreamEnd(dst []byte) ([]byte, error) {
	if !s.started {
		dst = s.put(dst, &Event{Kind: EventStart})
	}
	if !s.finished {
		dst = s.put(dst, &Event{Kind: EventFinish})
	}
	if s.err != nil || s.done {
		return dst, s.err
	}
	return s.end(dst), nil
}

// converseSSE reads a Converse event given as {"TYPE": payload}.
func (s *ModelStream) converseSSE(data []byte) ([]Event, error) {
	v, ok := jsonscan.Valid(data)
	if !ok || !isObject(v) {
		return s.evs[:0], invalidUpstream("a Converse stream event that is not a JSON object")
	}
	m := jsonscan.MembersOf(v)
	k, v, ok := m.Next()
	if !ok {
		return s.evs[:0], nil
	}
	return s.conv.event(s.evs[:0], k, v)
}

// writeEvents hands the decoded events to the client writer, one by one
// through put, until the client's stream ends or fails.
func (s *ModelStream) writeEvents(dst []byte) ([]byte, error) {
	for i := range s.evs {
		if dst = s.put(dst, &s.evs[i]); s.err != nil || s.done {
			break
		}
	}
	return dst, s.err
}
