package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// messagesToChat turns an Anthropic event stream into OpenAI chunks:
//
//	message_start                  -> the first chunk: delta {"role":"assistant","content":""}
//	content_block_start text       -> (nothing; its text comes in deltas)
//	content_block_start tool_use   -> delta tool_calls [{index, id, type, function {name, arguments ""}}]
//	content_block_delta text_delta -> delta {"content": text}
//	content_block_delta input_json_delta -> delta tool_calls [{index, function {arguments: partial_json}}]
//	content_block_stop tool_use    -> delta tool_calls [{index, function {arguments: "{}"}}] when no piece came
//	message_delta                  -> a chunk with finish_reason (usage noted); a refusal's delta first
//	message_stop                   -> the usage chunk (when the client asked) and data: [DONE]
//	error                          -> data: {"error":{...}}, and the stream ends
//	ping, thinking, anything else  -> (nothing)
//
// Tool calls are numbered 0, 1, ... in the order their blocks start, whatever
// the blocks' own indexes.
type messagesToChat struct {
	a Answer // immutable after NewMessagesToChatStream

	eventStream
	head    []byte // `data: {"id":…,…,"choices":[` : every chunk starts so; empty until the role chunk is out
	stopped bool   // message_delta gave the stop reason; the finish chunk is out
	tools   []int  // by content block index: its tool_calls index, or -1
	args    []bool // by tool_calls index: an argument piece went out
	usage   Usage
}

// NewMessagesToChatStream translates an Anthropic upstream's event stream for
// an OpenAI client, presented as a says (its model; created is every chunk's
// `created`; IncludeUsage adds the final usage-only chunk OpenAI sends when
// asked).
func NewMessagesToChatStream(a Answer) Stream {
	return &messagesToChat{a: a}
}

func (s *messagesToChat) Usage() Usage { return s.usage }

func (s *messagesToChat) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

func (s *messagesToChat) Finish(dst []byte) ([]byte, error) { return s.finishStream(s, dst) }

func (s *messagesToChat) sawStop() bool { return s.stopped }

// event translates one upstream event.
func (s *messagesToChat) event(dst, data []byte) ([]byte, error) {
	var ev messagesEvent
	if !ev.read(data) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if stringIs(ev.typ, "error") {
		s.done = true
		return s.errorChunk(dst, ev.err), nil
	}
	if len(s.head) == 0 { // the role chunk is not out yet
		id, model := ev.opening()
		dst = s.start(dst, id, model)
	}
	switch {
	case stringIs(ev.typ, "message_start"):
		s.usage = messagesUsage(s.usage, jsonscan.Field(ev.message, "usage"))
	case stringIs(ev.typ, "content_block_start"):
		return s.blockStart(dst, ev.index, ev.block)
	case stringIs(ev.typ, "content_block_delta"):
		return s.blockDelta(dst, ev.index, ev.delta)
	case stringIs(ev.typ, "content_block_stop"):
		if i, ok := intValue(ev.index); ok && i >= 0 && int(i) < len(s.tools) && s.tools[i] >= 0 {
			dst = s.noArguments(dst, s.tools[i])
		}
	case stringIs(ev.typ, "message_delta"):
		s.usage = messagesUsage(s.usage, ev.usage)
		if !s.stopped {
			dst = s.stop(dst, jsonscan.Field(ev.delta, "stop_reason"), jsonscan.Field(ev.delta, "stop_sequence"))
		}
	case stringIs(ev.typ, "message_stop"):
		if !s.stopped {
			dst = s.stop(dst, nil, nil)
		}
		dst = s.end(dst)
	}
	return dst, nil
}

// start writes the first chunk, which every OpenAI stream opens with.
func (s *messagesToChat) start(dst, id, model []byte) []byte {
	s.head = append(s.head[:0], `data: {"id":`...)
	s.head = appendID(s.head, id, "chatcmpl-translated", -1)
	s.head = append(s.head, `,"object":"chat.completion.chunk","created":`...)
	s.head = appendInt(s.head, s.a.Created)
	s.head = append(s.head, `,"model":`...)
	s.head = s.a.appendModel(s.head, model)
	s.head = append(s.head, `,"choices":[`...)
	dst = s.deltaStart(dst)
	dst = append(dst, `{"role":"assistant","content":""}`...)
	return s.deltaEnd(dst)
}

// deltaStart and deltaEnd surround a chunk's delta object.
func (s *messagesToChat) deltaStart(dst []byte) []byte {
	dst = append(dst, s.head...)
	return append(dst, `{"index":0,"delta":`...)
}

func (s *messagesToChat) deltaEnd(dst []byte) []byte {
	return append(dst, `,"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (s *messagesToChat) blockStart(dst, index, block []byte) ([]byte, error) {
	i, ok := intValue(index)
	if !ok || i < 0 || i > maxBlocks {
		return dst, invalidUpstream("content_block_start without a valid index")
	}
	switch typ := jsonscan.Field(block, "type"); {
	case stringIs(typ, "text"):
		if text := jsonscan.Field(block, "text"); isString(text) && !isEmptyString(text) {
			dst = s.deltaStart(dst)
			dst = append(dst, `{"content":`...)
			dst = append(dst, text...)
			dst = append(dst, '}')
			dst = s.deltaEnd(dst)
		}
	case stringIs(typ, "tool_use"):
		var id, name, input []byte
		m := jsonscan.MembersOf(block)
		for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
			switch string(k) {
			case "id":
				id = v
			case "name":
				name = v
			case "input":
				input = v
			}
		}
		if !isString(name) {
			return dst, invalidUpstream("tool_use block without a name")
		}
		if present(input) && !isObject(input) {
			return dst, invalidUpstream("tool_use input is not a JSON object")
		}
		for len(s.tools) <= int(i) {
			s.tools = append(s.tools, -1)
		}
		n := len(s.args)
		s.tools[i] = n
		s.args = append(s.args, false)
		// Arguments start empty: the input, {} at the start of a streamed
		// block, arrives in input_json_delta pieces the client concatenates.
		dst = s.deltaStart(dst)
		dst = append(dst, `{"tool_calls":[{"index":`...)
		dst = appendInt(dst, int64(n))
		dst = append(dst, `,"id":`...)
		dst = s.a.IDs.appendClientID(dst, id, Chat, "call_", n)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = append(dst, name...)
		dst = append(dst, `,"arguments":""}}]}`...)
		dst = s.deltaEnd(dst)
		// A server that sends the whole input here instead gets it relayed
		// as one piece.
		if isObject(input) && !emptyObject(input) {
			dst = s.arguments(dst, n, jsonscan.AppendString(nil, input))
		}
	}
	return dst, nil
}

func emptyObject(v []byte) bool {
	m := jsonscan.MembersOf(v)
	_, _, ok := m.Next()
	return !ok
}

func (s *messagesToChat) blockDelta(dst, index, delta []byte) ([]byte, error) {
	switch typ := jsonscan.Field(delta, "type"); {
	case stringIs(typ, "text_delta"):
		text := jsonscan.Field(delta, "text")
		if !isString(text) {
			return dst, invalidUpstream("text_delta without text")
		}
		if isEmptyString(text) {
			return dst, nil
		}
		dst = s.deltaStart(dst)
		dst = append(dst, `{"content":`...)
		dst = append(dst, text...)
		dst = append(dst, '}')
		return s.deltaEnd(dst), nil
	case stringIs(typ, "input_json_delta"):
		i, ok := intValue(index)
		if !ok || i < 0 || int(i) >= len(s.tools) || s.tools[i] < 0 {
			return dst, invalidUpstream("input_json_delta for a block that is not a tool_use")
		}
		part := jsonscan.Field(delta, "partial_json")
		if !isString(part) {
			return dst, invalidUpstream("input_json_delta without partial_json")
		}
		if isEmptyString(part) {
			return dst, nil
		}
		return s.arguments(dst, s.tools[i], part), nil
	}
	// thinking_delta, signature_delta, citations_delta: no OpenAI counterpart.
	return dst, nil
}

// arguments writes a piece of a tool call's arguments; part is a string token.
func (s *messagesToChat) arguments(dst []byte, n int, part []byte) []byte {
	s.args[n] = true
	dst = s.deltaStart(dst)
	dst = append(dst, `{"tool_calls":[{"index":`...)
	dst = appendInt(dst, int64(n))
	dst = append(dst, `,"function":{"arguments":`...)
	dst = append(dst, part...)
	dst = append(dst, "}}]}"...)
	return s.deltaEnd(dst)
}

// noArguments closes a tool call that got no argument piece with "{}":
// the arguments of a call without input are an empty object, as a unary
// answer says, never "" (which a client parsing them as JSON fails on).
func (s *messagesToChat) noArguments(dst []byte, n int) []byte {
	if s.args[n] {
		return dst
	}
	return s.arguments(dst, n, []byte(`"{}"`))
}

// stop writes the finish chunk for the upstream's stop reason and matched
// stop sequence (nil: none given), after whatever the calls still lack.
func (s *messagesToChat) stop(dst, reason, seq []byte) []byte {
	s.stopped = true
	for n := range s.args {
		dst = s.noArguments(dst, n)
	}
	if stringIs(reason, "refusal") {
		// The refusal is said where an OpenAI client looks for one; what
		// text came before it went out as content.
		dst = s.deltaStart(dst)
		dst = append(dst, `{"refusal":`...)
		dst = append(dst, refusalWithoutText...)
		dst = append(dst, '}')
		dst = s.deltaEnd(dst)
	}
	dst = s.deltaStart(dst)
	dst = append(dst, `{},"logprobs":null,"finish_reason":"`...)
	dst = append(dst, finishReason(stringToken(reason))...)
	dst = append(dst, '"')
	dst = appendMatchedStop(dst, reason, seq)
	return append(dst, "}]}\n\n"...)
}

// end writes the usage chunk when the client asked for it, then [DONE].
func (s *messagesToChat) end(dst []byte) []byte {
	s.done = true
	if s.a.IncludeUsage {
		dst = append(dst, s.head...)
		dst = append(dst, `],"usage":`...)
		if s.usage.Known {
			dst = appendChatUsage(dst, s.usage)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, "}\n\n"...)
	}
	return append(dst, "data: [DONE]\n\n"...)
}

// errorChunk is the upstream's error event in OpenAI's shape, which the
// OpenAI SDKs raise as an API error. There is no [DONE] after it.
func (s *messagesToChat) errorChunk(dst, errObj []byte) []byte {
	f := messagesStreamError(errObj)
	if f.typ == nil {
		f.typ = []byte("api_error")
	}
	dst = append(dst, "data: "...)
	dst = appendChatError(dst, f.message, f.typ, nil, nil)
	return append(dst, "}\n\n"...)
}
