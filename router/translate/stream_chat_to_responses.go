package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// chatToResponses turns OpenAI chunks into a Responses event stream:
//
//	the first chunk              -> response.created, response.in_progress
//	delta.reasoning_content      -> a reasoning item (its summary text)
//	delta.content                -> a message item, response.output_text.delta
//	delta.refusal                -> a message item with a refusal part, response.refusal.delta
//	delta.tool_calls[k] first    -> a function_call item
//	delta.tool_calls[k] args     -> response.function_call_arguments.delta
//	finish_reason                -> kept for the end
//	the usage-only chunk         -> usage kept
//	data: [DONE]                 -> the .done events of every item, response.completed
//	data: {"error":{...}}        -> an error event, and the stream ends
//
// A text item ends when an item of another kind starts; calls stay open to
// the end, since servers may interleave their arguments (each delta names
// its item's output_index).
type chatToResponses struct {
	eventStream
	respEvents
	text    int   // the open text item (message, refusal or reasoning), or -1
	calls   []int // by tool call index: its item, or -1
	status  respStatus
	stopped bool // finish_reason came
}

// NewChatToResponsesStream translates an OpenAI upstream's chunk stream (asked
// with stream_options.include_usage, as ResponsesToChat does) for a Responses
// API client, presented as a says.
func NewChatToResponsesStream(a Answer) Stream {
	return &chatToResponses{respEvents: respEvents{a: a}, text: -1}
}

func (s *chatToResponses) Usage() Usage { return s.usage }

func (s *chatToResponses) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

func (s *chatToResponses) Finish(dst []byte) ([]byte, error) { return s.finishStream(s, dst) }

func (s *chatToResponses) sawStop() bool { return s.stopped }

// end ends every item and writes response.completed (or incomplete).
func (s *chatToResponses) end(dst []byte) []byte {
	s.done = true
	return s.finish(dst, s.status)
}

func (s *chatToResponses) event(dst, data []byte) ([]byte, error) {
	if string(data) == "[DONE]" {
		if !s.started {
			dst = s.start(dst, nil, nil, s.a.Created)
		}
		return s.end(dst), nil
	}
	var chunk chatAnswer
	if !chunk.read(data) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if present(chunk.err) {
		s.done = true
		f := chatStreamError(chunk.err)
		return s.errorEvent(dst, f.typ, f.code, f.message), nil
	}
	if !s.started {
		dst = s.start(dst, chunk.id, chunk.model, createdOr(chunk.created, s.a.Created))
	}
	if u := chatUsage(chunk.usage); u.Known {
		s.usage = u
	}
	var c chatChoice
	var d chatMessage
	ok, err := chunkChoice(chunk.choices, &c, &d)
	if !ok {
		return dst, err
	}
	if dst, err = s.writeDelta(dst, c.message, d); err != nil {
		return dst, err
	}
	switch {
	case isString(c.finish) && !s.stopped:
		s.stopped, s.status = true, statusOfChat(c.finish)
	case present(c.finish) && !isString(c.finish):
		return dst, invalidUpstream("finish_reason is not a string")
	}
	return dst, nil
}

// writeDelta writes one delta: reasoning, text, refusal and tool calls.
func (s *chatToResponses) writeDelta(dst, raw []byte, d chatMessage) ([]byte, error) {
	var err error
	if r := chatReasoning(raw); len(r) > 0 {
		if dst, err = s.textOf(dst, itemReasoning, quoted(r)); err != nil {
			return dst, err
		}
	}
	if isString(d.content) && !isEmptyString(d.content) {
		if dst, err = s.textOf(dst, itemMessage, d.content); err != nil {
			return dst, err
		}
	}
	if isString(d.refusal) && !isEmptyString(d.refusal) {
		if dst, err = s.textOf(dst, itemRefusal, d.refusal); err != nil {
			return dst, err
		}
	}
	for j, c := range jsonscan.Each(d.toolCalls) {
		if dst, err = s.toolCall(dst, c, j); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// textOf adds a piece of text to the open item of kind, opening one (and
// ending the open text item of another kind) when there is none.
func (s *chatToResponses) textOf(dst []byte, kind int, tok []byte) ([]byte, error) {
	if s.text < 0 || s.items[s.text].kind != kind {
		if s.text >= 0 {
			dst = s.close(dst, s.text)
		}
		dst, s.text = s.open(dst, kind, nil, nil)
	}
	return s.delta(dst, s.text, tok)
}

func (s *chatToResponses) toolCall(dst, c []byte, position int) ([]byte, error) {
	tc, k, err := readToolCallDelta(c, position)
	if err != nil {
		return dst, err
	}
	for len(s.calls) <= k {
		s.calls = append(s.calls, -1)
	}
	n := s.calls[k]
	if n < 0 {
		if s.text >= 0 {
			dst, s.text = s.close(dst, s.text), -1
		}
		name := tc.name
		if !isString(name) {
			name = []byte(`""`)
		}
		callID := s.a.IDs.appendClientID(nil, tc.id, Responses, "call_", k)
		dst, n = s.open(dst, itemCall, callID, append([]byte(nil), name...))
		s.calls[k] = n
	}
	if isString(tc.args) && !isEmptyString(tc.args) {
		return s.delta(dst, n, tc.args)
	}
	return dst, nil
}
