package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// messagesToResponses turns an Anthropic event stream into a Responses event
// stream:
//
//	message_start                     -> response.created, response.in_progress
//	content_block_start text          -> a message item
//	content_block_start tool_use      -> a function_call item
//	content_block_start thinking      -> a reasoning item (Anthropic's thinking text is its summary)
//	content_block_delta text_delta, input_json_delta, thinking_delta -> the item's delta
//	content_block_stop                -> the item's .done events
//	message_delta                     -> stop reason and usage kept (a refusal adds a refusal item)
//	message_stop                      -> response.completed (response.incomplete when cut by max_tokens)
//	error                             -> an error event, and the stream ends
//	ping, signature_delta, redacted_thinking -> (nothing)
type messagesToResponses struct {
	eventStream
	respEvents
	blocks  []int // by content block index: its item, or -1
	stop    []byte
	stopped bool
}

// NewMessagesToResponsesStream translates an Anthropic upstream's event
// stream for a Responses API client, presented as a says.
func NewMessagesToResponsesStream(a Answer) Stream {
	return &messagesToResponses{respEvents: respEvents{a: a}}
}

func (s *messagesToResponses) Usage() Usage { return s.usage }

func (s *messagesToResponses) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

func (s *messagesToResponses) Finish(dst []byte) ([]byte, error) { return s.finishStream(s, dst) }

func (s *messagesToResponses) sawStop() bool { return s.stopped }

func (s *messagesToResponses) event(dst, data []byte) ([]byte, error) {
	var ev messagesEvent
	if !ev.read(data) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if stringIs(ev.typ, "error") {
		s.done = true
		f := messagesStreamError(ev.err)
		return s.errorEvent(dst, f.typ, nil, f.message), nil
	}
	if !s.started {
		id, model := ev.opening()
		dst = s.start(dst, id, model, s.a.Created)
	}
	switch {
	case stringIs(ev.typ, "message_start"):
		s.usage = messagesUsage(s.usage, jsonscan.Field(ev.message, "usage"))
	case stringIs(ev.typ, "content_block_start"):
		return s.blockStart(dst, ev.index, ev.block)
	case stringIs(ev.typ, "content_block_delta"):
		return s.blockDelta(dst, ev.index, ev.delta)
	case stringIs(ev.typ, "content_block_stop"):
		if n := s.item(ev.index); n >= 0 {
			dst = s.close(dst, n)
		}
	case stringIs(ev.typ, "message_delta"):
		s.usage = messagesUsage(s.usage, ev.usage)
		if !s.stopped {
			s.stopped = true
			s.stop = append(s.stop[:0], jsonscan.Field(ev.delta, "stop_reason")...)
		}
	case stringIs(ev.typ, "message_stop"):
		s.stopped = true
		return s.end(dst), nil
	}
	return dst, nil
}

// item is the output item of content block index, or -1.
func (s *messagesToResponses) item(index []byte) int {
	i, ok := intValue(index)
	if !ok || i < 0 || int(i) >= len(s.blocks) {
		return -1
	}
	return s.blocks[i]
}

func (s *messagesToResponses) blockStart(dst, index, block []byte) ([]byte, error) {
	i, ok := intValue(index)
	if !ok || i < 0 || i > maxBlocks {
		return dst, invalidUpstream("content_block_start without a valid index")
	}
	for int64(len(s.blocks)) <= i {
		s.blocks = append(s.blocks, -1)
	}
	p, _ := readPart(block)
	var err error
	n := -1
	switch {
	case stringIs(p.typ, "text"):
		dst, n = s.open(dst, itemMessage, nil, nil)
		if isString(p.text) && !isEmptyString(p.text) {
			dst, err = s.delta(dst, n, p.text)
		}
	case stringIs(p.typ, "thinking"):
		dst, n = s.open(dst, itemReasoning, nil, nil)
	case stringIs(p.typ, "tool_use"):
		if !isString(p.name) {
			return dst, invalidUpstream("tool_use block without a name")
		}
		if present(p.input) && !isObject(p.input) {
			return dst, invalidUpstream("tool_use input is not a JSON object")
		}
		callID := s.a.IDs.appendClientID(nil, p.id, Responses, "call_", int(i))
		dst, n = s.open(dst, itemCall, callID, append([]byte(nil), p.name...))
		if isObject(p.input) && !emptyObject(p.input) {
			dst, err = s.delta(dst, n, jsonscan.AppendString(nil, p.input))
		}
	}
	s.blocks[i] = n
	return dst, err
}

func (s *messagesToResponses) blockDelta(dst, index, delta []byte) ([]byte, error) {
	n := s.item(index)
	var piece []byte
	switch typ := jsonscan.Field(delta, "type"); {
	case stringIs(typ, "text_delta"):
		piece = jsonscan.Field(delta, "text")
	case stringIs(typ, "input_json_delta"):
		piece = jsonscan.Field(delta, "partial_json")
	case stringIs(typ, "thinking_delta"):
		piece = jsonscan.Field(delta, "thinking")
	default:
		return dst, nil // signature_delta, citations_delta: no Responses counterpart
	}
	if n < 0 || !isString(piece) {
		return dst, invalidUpstream("a delta for no block, or without its text")
	}
	if isEmptyString(piece) {
		return dst, nil
	}
	return s.delta(dst, n, piece)
}

// end writes a refusal item when the answer was refused, then what ends
// the stream.
func (s *messagesToResponses) end(dst []byte) []byte {
	s.done = true
	if stringIs(s.stop, "refusal") {
		var n int
		dst, n = s.open(dst, itemRefusal, nil, nil)
		dst, _ = s.delta(dst, n, []byte(refusalWithoutText))
	}
	return s.finish(dst, statusOfMessages(s.stop))
}
