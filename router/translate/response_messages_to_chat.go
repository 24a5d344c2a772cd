package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// MessagesResponseToChat turns an Anthropic message (a 2xx unary body) into an
// OpenAI chat completion for a client that asked for clientModel. created is
// the completion's `created` (Unix seconds; Anthropic's answer has no time).
// Text blocks become the message content, tool_use blocks its tool_calls,
// thinking blocks are dropped. It also returns the usage the upstream
// reported. An answer that is not an Anthropic message wraps
// ErrInvalidUpstream.
func MessagesResponseToChat(body []byte, clientModel string, created int64) ([]byte, Usage, error) {
	var id, content, stop, usage []byte
	if !jsonscan.Object(body, func(k, val []byte) {
		switch string(k) {
		case "id":
			id = val
		case "content":
			content = val
		case "stop_reason":
			stop = val
		case "usage":
			usage = val
		}
	}) {
		return nil, Usage{}, invalidUpstream("message body is not a JSON object")
	}
	if !isArray(content) {
		return nil, Usage{}, invalidUpstream("message has no content array")
	}
	u := messagesUsage(Usage{}, usage)

	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"id":`...)
	out = appendID(out, id, "chatcmpl-translated", -1)
	out = append(out, `,"object":"chat.completion","created":`...)
	out = appendInt(out, created)
	out = append(out, `,"model":`...)
	out = jsonscan.AppendString(out, clientModel)
	out = append(out, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)

	// The text blocks, joined into one string: their raw contents concatenate
	// into a valid JSON string without decoding. Tool calls follow.
	var few [4]part
	calls := few[:0]
	texts := 0
	blocks := jsonscan.ElementsOf(content)
	for b, ok := blocks.Next(); ok; b, ok = blocks.Next() {
		p, _ := readPart(b)
		switch {
		case stringIs(p.typ, "text"):
			if !isString(p.text) {
				return nil, Usage{}, invalidUpstream("text block without text")
			}
			if texts == 0 {
				out = append(out, '"')
			}
			texts++
			out = append(out, p.text[1:len(p.text)-1]...)
		case stringIs(p.typ, "tool_use"):
			calls = append(calls, p)
		}
	}
	if texts == 0 {
		out = append(out, "null"...)
	} else {
		out = append(out, '"')
	}
	out = append(out, `,"refusal":null`...)
	for i, p := range calls {
		if i == 0 {
			out = append(out, `,"tool_calls":[`...)
		} else {
			out = append(out, ',')
		}
		var err error
		if out, err = appendChatToolCall(out, p, i); err != nil {
			return nil, Usage{}, err
		}
	}
	if len(calls) > 0 {
		out = append(out, ']')
	}
	out = append(out, `},"logprobs":null,"finish_reason":"`...)
	out = append(out, finishReason(stringToken(stop))...)
	out = append(out, `"}]`...)
	if u.Known {
		out = append(out, `,"usage":`...)
		out = appendChatUsage(out, u)
	}
	return append(out, '}'), u, nil
}

// appendChatToolCall writes an Anthropic tool_use block as an OpenAI tool
// call, its input object as the arguments string.
func appendChatToolCall(out []byte, b part, index int) ([]byte, error) {
	id, name, input := b.id, b.name, b.input
	if !isString(name) {
		return out, invalidUpstream("tool_use block without a name")
	}
	out = append(out, `{"id":`...)
	out = appendID(out, id, "call_", index)
	out = append(out, `,"type":"function","function":{"name":`...)
	out = append(out, name...)
	out = append(out, `,"arguments":`...)
	if present(input) {
		out = jsonscan.AppendString(out, input)
	} else {
		out = append(out, `"{}"`...)
	}
	return append(out, "}}"...), nil
}

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
