package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// What the translators read of an upstream's answers, whatever format they
// write it in: the top-level members of an OpenAI chunk or chat completion
// and of an Anthropic event or message, and the error an event carries.

// chatAnswer holds the members of an OpenAI chat completion, or of one of
// its stream's chunks, that the translators read (raw JSON values).
type chatAnswer struct {
	id, model, created, choices, usage, err []byte
}

// read reads a chat completion or a chunk's data into a; false: it is not
// a JSON object. (Filled in place: the converters read one per chunk.)
func (a *chatAnswer) read(b []byte) bool {
	return jsonscan.Object(b, func(k, val []byte) {
		switch string(k) {
		case "id":
			a.id = val
		case "model":
			a.model = val
		case "created":
			a.created = val
		case "choices":
			a.choices = val
		case "usage":
			a.usage = val
		case "error":
			a.err = val
		}
	})
}

// readChatCompletion reads a chat completion (a 2xx unary body): its
// members, its first choice and that choice's message. An answer that is
// not a chat completion wraps ErrInvalidUpstream.
func readChatCompletion(body []byte) (chatAnswer, chatChoice, chatMessage, error) {
	var b chatAnswer
	if !b.read(body) {
		return b, chatChoice{}, chatMessage{}, invalidUpstream("chat completion body is not a JSON object")
	}
	if !isArray(b.choices) {
		return b, chatChoice{}, chatMessage{}, invalidUpstream("chat completion has no choices array")
	}
	c, ok := firstChoice(b.choices)
	if !ok {
		return b, c, chatMessage{}, invalidUpstream("chat completion has no choice")
	}
	m, err := readChatMessage(c.message)
	return b, c, m, err
}

// chunkChoice reads a chunk's first choice into c and its delta into d; ok
// is false when the chunk has none (the usage-only chunk has none), or err
// when its choices are broken. (Filled in place: one per chunk.)
func chunkChoice(choices []byte, c *chatChoice, d *chatMessage) (ok bool, err error) {
	if !present(choices) {
		return false, nil
	}
	if !isArray(choices) {
		return false, invalidUpstream("choices is not an array")
	}
	if *c, ok = firstChoice(choices); !ok {
		return false, nil
	}
	if *d, err = readChatMessage(c.message); err != nil {
		return false, err
	}
	return true, nil
}

// readToolCallDelta reads the tool call delta at position in a chunk's
// tool_calls, with the index of the call it is part of: its own index, or
// its position for servers that leave index out and list calls in order.
func readToolCallDelta(c []byte, position int) (toolCall, int, error) {
	if !isObject(c) {
		return toolCall{}, 0, invalidUpstream("tool call delta is not an object")
	}
	tc := readToolCall(c)
	k := int64(position)
	if present(tc.index) {
		var ok bool
		if k, ok = intValue(tc.index); !ok || k < 0 || k > maxBlocks {
			return tc, 0, invalidUpstream("tool call delta with an invalid index")
		}
	}
	switch {
	case present(tc.args) && !isString(tc.args):
		return tc, 0, invalidUpstream("tool call arguments are not a string")
	case present(tc.name) && !isString(tc.name):
		return tc, 0, invalidUpstream("tool call name is not a string")
	}
	return tc, int(k), nil
}

// createdOr is an OpenAI answer's created time, or def when it has none.
func createdOr(created []byte, def int64) int64 {
	if n, ok := intValue(created); ok {
		return n
	}
	return def
}

// messagesEvent holds the members of an Anthropic stream event that the
// translators read (raw JSON values).
type messagesEvent struct {
	typ, message, index, block, delta, usage, err []byte
}

// read reads an Anthropic event's data into e; false: it is not a JSON
// object. (Filled in place: the converters read one per event.)
func (e *messagesEvent) read(data []byte) bool {
	return jsonscan.Object(data, func(k, val []byte) {
		switch string(k) {
		case "type":
			e.typ = val
		case "message":
			e.message = val
		case "index":
			e.index = val
		case "content_block":
			e.block = val
		case "delta":
			e.delta = val
		case "usage":
			e.usage = val
		case "error":
			e.err = val
		}
	})
}

// opening is the id and model of the message a message_start event opens
// (nil for any other event: the stream did not open with one).
func (e *messagesEvent) opening() (id, model []byte) {
	if !stringIs(e.typ, "message_start") {
		return nil, nil
	}
	return jsonscan.Field(e.message, "id"), jsonscan.Field(e.message, "model")
}

// messagesAnswer holds the members of an Anthropic message (a 2xx unary
// body) that the translators read (raw JSON values).
type messagesAnswer struct {
	id, model, content, stop, stopSeq, usage []byte
}

// readMessagesAnswer reads an Anthropic message. An answer that is not one
// wraps ErrInvalidUpstream.
func readMessagesAnswer(body []byte) (messagesAnswer, error) {
	var a messagesAnswer
	if !jsonscan.Object(body, func(k, val []byte) {
		switch string(k) {
		case "id":
			a.id = val
		case "model":
			a.model = val
		case "content":
			a.content = val
		case "stop_reason":
			a.stop = val
		case "stop_sequence":
			a.stopSeq = val
		case "usage":
			a.usage = val
		}
	}) {
		return a, invalidUpstream("message body is not a JSON object")
	}
	if !isArray(a.content) {
		return a, invalidUpstream("message has no content array")
	}
	return a, nil
}

// streamErrorText is the message of an upstream's error event that has
// none.
const streamErrorText = `"upstream stream error"`

// chatStreamError reads the error of an OpenAI error chunk
// (data: {"error":{"message","type","code"}}, or a bare string): typ and
// code are raw string contents (nil: none), message a string token.
func chatStreamError(errObj []byte) errorFields {
	var f errorFields
	if isString(errObj) {
		f.message = errObj
	} else {
		f.message = jsonscan.Field(errObj, "message")
		f.typ = stringToken(jsonscan.Field(errObj, "type"))
		f.code = stringToken(jsonscan.Field(errObj, "code"))
	}
	if !isString(f.message) || isEmptyString(f.message) {
		f.message = []byte(streamErrorText)
	}
	return f
}

// messagesStreamError reads the error of an Anthropic error event
// ({"type","message"}): typ is raw string contents (nil: none), message a
// string token.
func messagesStreamError(errObj []byte) errorFields {
	f := errorFields{message: jsonscan.Field(errObj, "message"), typ: stringToken(jsonscan.Field(errObj, "type"))}
	if !isString(f.message) || isEmptyString(f.message) {
		f.message = []byte(streamErrorText)
	}
	return f
}

// chatChoice is what a choice says, whether a unary answer's (message)
// or a chunk's (delta).
type chatChoice struct {
	index, message, finish, stopReason []byte
}

// firstChoice finds the choice with index 0, or the first one listed.
func firstChoice(choices []byte) (c chatChoice, ok bool) {
	e := jsonscan.ElementsOf(choices)
	for v, more := e.Next(); more; v, more = e.Next() {
		if !isObject(v) {
			continue
		}
		var this chatChoice
		cm := jsonscan.MembersOf(v)
		for k, val, more := cm.Next(); more; k, val, more = cm.Next() {
			switch string(k) {
			case "index":
				this.index = val
			case "message", "delta":
				this.message = val
			case "finish_reason":
				this.finish = val
			case "stop_reason":
				this.stopReason = val
			}
		}
		if !ok || string(this.index) == "0" {
			c, ok = this, true
		}
		if string(this.index) == "0" {
			break
		}
	}
	return c, ok
}

// chatMessage is the members of an OpenAI answer's message or a chunk's
// delta that are translated.
type chatMessage struct {
	content, refusal, toolCalls []byte
	// reasoning is the reasoning text some OpenAI-compatible servers put
	// beside the content (reasoning_content: DeepSeek, vLLM; reasoning:
	// Groq, OpenRouter), a non-empty string token or nil.
	reasoning []byte
}

// readChatMessage reads a message or delta, refusing members of the wrong
// kind: an answer whose content is a number is broken, and passing it off
// as an empty one would change what the client gets.
func readChatMessage(v []byte) (chatMessage, error) {
	var m chatMessage
	if !present(v) {
		return m, nil
	}
	if !isObject(v) {
		return m, invalidUpstream("choice message is not an object")
	}
	mm := jsonscan.MembersOf(v)
	for k, val, ok := mm.Next(); ok; k, val, ok = mm.Next() {
		switch string(k) {
		case "content":
			m.content = val
		case "refusal":
			m.refusal = val
		case "tool_calls":
			m.toolCalls = val
		case "reasoning_content", "reasoning":
			if isString(val) && !isEmptyString(val) {
				m.reasoning = val
			}
		}
	}
	switch {
	case present(m.content) && !isString(m.content) && !isArray(m.content):
		return m, invalidUpstream("content is neither a string nor an array")
	case present(m.refusal) && !isString(m.refusal):
		return m, invalidUpstream("refusal is not a string")
	case present(m.toolCalls) && !isArray(m.toolCalls):
		return m, invalidUpstream("tool_calls is not an array")
	}
	return m, nil
}

// refusalWithoutText is the refusal a client reads when the upstream
// refused without a word: the field must hold a string for the client to
// see that it refused.
const refusalWithoutText = `"the model declined to answer (stop_reason: refusal)"`

// appendID copies a non-empty string id, or writes fallback (followed by n
// when n >= 0) when the upstream gave none: clients need one to match results
// to calls.
func appendID(out, id []byte, fallback string, n int) []byte {
	if isString(id) && len(id) > 2 {
		return append(out, id...)
	}
	out = append(out, '"')
	out = append(out, fallback...)
	if n >= 0 {
		out = appendInt(out, int64(n))
	}
	return append(out, '"')
}

// stringToken returns the contents of a string token without its quotes
// (escapes left as they are), or nil.
func stringToken(v []byte) []byte {
	if !isString(v) {
		return nil
	}
	return v[1 : len(v)-1]
}

// The pairwise streams' stop words (stream_messages_to_chat.go,
// stream_chat_to_messages.go), which the unary answers no longer use: they
// go with those streams once the streams go through the neutral model.

var nullValue = []byte("null")
