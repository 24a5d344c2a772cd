package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// chatToMessages turns OpenAI chunks into an Anthropic event stream:
//
//	the first chunk            -> message_start (usage 0 until the end)
//	delta.content / .refusal   -> content_block_start text (once), content_block_delta text_delta
//	delta.tool_calls[k] first  -> content_block_start tool_use {id, name, input {}}
//	delta.tool_calls[k] args   -> content_block_delta input_json_delta {partial_json}
//	a new kind of block        -> content_block_stop of the open one, once it is whole
//	finish_reason              -> content_block_stop; the stop reason is kept
//	the usage-only chunk       -> usage kept
//	data: [DONE]               -> message_delta {stop_reason, usage}, message_stop
//	data: {"error":{...}}      -> event: error, and the stream ends
//
// message_delta waits for [DONE] because OpenAI sends usage after the
// finish_reason chunk and Anthropic sends both in one event; message_delta
// carries input_tokens too, since message_start could not know them.
//
// Anthropic's blocks come one at a time, each closed before the next
// starts, and a client takes a block's content_block_stop as its end. Some
// OpenAI-compatible servers interleave parallel calls (both headers, then
// both argument streams), so a block is closed only once it is whole: a
// call's arguments once they are one complete JSON object, text once
// something else follows. What arrives for another block meanwhile is held
// (see blockQueue) and sent as soon as the open block is whole, or at the
// finish.
type chatToMessages struct {
	a Answer // immutable after NewChatToMessagesStream

	eventStream
	blockQueue
	started bool   // message_start is out
	stop    string // the stop reason, once finish_reason is seen (end() defaults it)
	seq     []byte // the matched stop sequence (vLLM's choices[].stop_reason), a string token
	refused bool   // a refusal was part of the answer
	usage   Usage
	scratch []byte
}

// NewChatToMessagesStream translates an OpenAI upstream's chunk stream (asked
// with stream_options.include_usage, as MessagesToChat does) for an Anthropic
// client, presented as a says.
func NewChatToMessagesStream(a Answer) Stream {
	return &chatToMessages{a: a}
}

func (s *chatToMessages) Usage() Usage { return s.usage }

func (s *chatToMessages) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

func (s *chatToMessages) Finish(dst []byte) ([]byte, error) { return s.finishStream(s, dst) }

func (s *chatToMessages) sawStop() bool { return s.stop != "" } // finish_reason came

func (s *chatToMessages) event(dst, data []byte) ([]byte, error) {
	if string(data) == "[DONE]" {
		if !s.started {
			dst = s.start(dst, nil, nil)
		}
		return s.end(dst), nil
	}
	var chunk chatAnswer
	if !chunk.read(data) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if present(chunk.err) {
		s.done = true
		return s.errorEvent(dst, chunk.err), nil
	}
	if !s.started {
		dst = s.start(dst, chunk.id, chunk.model)
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
	if dst, err = s.delta(dst, d); err != nil {
		return dst, err
	}
	switch {
	case isString(c.finish) && s.stop == "":
		s.stop, _ = messagesStop(c.finish, nil, s.refused)
		if isString(c.stopReason) {
			s.seq = append(s.seq[:0], c.stopReason...)
		}
		if dst, err = s.flushAll(dst); err != nil {
			return dst, err
		}
		return dst, s.checkCalls()
	case present(c.finish) && !isString(c.finish):
		return dst, invalidUpstream("finish_reason is not a string")
	}
	return dst, nil
}

func (s *chatToMessages) start(dst, id, model []byte) []byte {
	s.started = true
	dst = appendNamedEvent(dst, "message_start")
	dst = append(dst, `{"type":"message_start","message":{"id":`...)
	dst = appendID(dst, id, "msg_translated", -1)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = s.a.appendModel(dst, model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`+"\n\n"...)
	return dst
}

func (s *chatToMessages) delta(dst []byte, d chatMessage) ([]byte, error) {
	var err error
	if isString(d.content) && !isEmptyString(d.content) {
		if dst, err = s.text(dst, d.content); err != nil {
			return dst, err
		}
	}
	if isString(d.refusal) && !isEmptyString(d.refusal) {
		s.refused = true
		if dst, err = s.text(dst, d.refusal); err != nil {
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

// toolCall handles one entry of delta.tool_calls: the first for an index
// starts a tool_use block (or queues it, while another block is open and
// not whole), every one with arguments adds a piece of input.
func (s *chatToMessages) toolCall(dst, c []byte, position int) ([]byte, error) {
	tc, k, err := readToolCallDelta(c, position)
	if err != nil {
		return dst, err
	}
	if dst, err = s.call(dst, k, tc.id, tc.name); err != nil {
		return dst, err
	}
	if isString(tc.args) && !isEmptyString(tc.args) {
		s.scratch = jsonscan.AppendUnquoted(s.scratch[:0], tc.args)
		return s.callArgs(dst, k, tc.args, s.scratch)
	}
	return dst, nil
}

// end writes message_delta and message_stop.
func (s *chatToMessages) end(dst []byte) []byte {
	s.done = true
	dst, _ = s.flushAll(dst) // held blocks cannot fail: they were checked as they came
	if s.stop == "" {
		s.stop, _ = messagesStop(nil, nil, s.refused)
	}
	seq := nullValue
	if s.stop == "end_turn" && len(s.seq) > 0 {
		s.stop, seq = "stop_sequence", s.seq
	}
	dst = appendNamedEvent(dst, "message_delta")
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":"`...)
	dst = append(dst, s.stop...)
	dst = append(dst, `","stop_sequence":`...)
	dst = append(dst, seq...)
	dst = append(dst, `},"usage":`...)
	dst = appendMessagesUsage(dst, s.usage)
	dst = append(dst, "}\n\n"...)
	dst = appendNamedEvent(dst, "message_stop")
	return append(dst, `{"type":"message_stop"}`+"\n\n"...)
}

// errorEvent is the upstream's error chunk as Anthropic's error event, which
// the Anthropic SDKs raise as an API error.
func (s *chatToMessages) errorEvent(dst, errObj []byte) []byte {
	f := chatStreamError(errObj)
	dst = appendNamedEvent(dst, "error")
	dst = appendAnthropicError(dst, anthropicTypeForOpenAI(f.typ, f.code), f)
	return append(dst, "\n\n"...)
}
