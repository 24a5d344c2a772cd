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
