package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// MessagesResponseToChat turns an Anthropic message (a 2xx unary body) into an
// OpenAI chat completion, presented as a says (its model, created). Text
// blocks become the message content, tool_use blocks its tool_calls,
// thinking blocks are dropped; a refusal (stop_reason "refusal") is the
// message's refusal. It also returns the usage the upstream reported. An
// answer that is not an Anthropic message wraps ErrInvalidUpstream, as does
// a tool_use block whose input is not an object.
func MessagesResponseToChat(body []byte, a Answer) ([]byte, Usage, error) {
	msg, err := readMessagesAnswer(body)
	if err != nil {
		return nil, Usage{}, err
	}
	u := messagesUsage(Usage{}, msg.usage)
	refused := stringIs(msg.stop, "refusal")

	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"id":`...)
	out = appendID(out, msg.id, "chatcmpl-translated", -1)
	out = append(out, `,"object":"chat.completion","created":`...)
	out = appendInt(out, a.Created)
	out = append(out, `,"model":`...)
	out = a.appendModel(out, msg.model)
	out = append(out, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)

	// The text blocks, joined into one string: their raw contents concatenate
	// into a valid JSON string without decoding. Tool calls follow. A
	// refusal's text is the refusal, and the content is null, as OpenAI
	// answers one.
	if refused {
		out = append(out, `null,"refusal":`...)
	}
	var few [4]part
	calls := few[:0]
	texts := 0
	blocks := jsonscan.ElementsOf(msg.content)
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
	switch {
	case texts > 0:
		out = append(out, '"')
	case refused:
		out = append(out, refusalWithoutText...)
	default:
		out = append(out, "null"...)
	}
	if !refused {
		out = append(out, `,"refusal":null`...)
	}
	for i, p := range calls {
		if i == 0 {
			out = append(out, `,"tool_calls":[`...)
		} else {
			out = append(out, ',')
		}
		var err error
		if out, err = appendChatToolCall(out, p, i, a.IDs); err != nil {
			return nil, Usage{}, err
		}
	}
	if len(calls) > 0 {
		out = append(out, ']')
	}
	out = append(out, `},"logprobs":null,"finish_reason":"`...)
	out = append(out, finishReason(stringToken(msg.stop))...)
	out = append(out, '"')
	out = appendMatchedStop(out, msg.stop, msg.stopSeq)
	out = append(out, "}]"...)
	if u.Known {
		out = append(out, `,"usage":`...)
		out = appendChatUsage(out, u)
	}
	return append(out, '}'), u, nil
}

// refusalWithoutText is the refusal an OpenAI client reads when the
// upstream refused without a word: the field must hold a string for the
// client to see that it refused.
const refusalWithoutText = `"the model declined to answer (stop_reason: refusal)"`

// appendMatchedStop adds, to an OpenAI choice, the stop sequence an
// Anthropic answer says matched, as vLLM and SGLang report it
// (choices[].stop_reason): OpenAI's finish_reason "stop" alone does not say.
func appendMatchedStop(out, stop, stopSeq []byte) []byte {
	if stringIs(stop, "stop_sequence") && isString(stopSeq) {
		out = append(out, `,"stop_reason":`...)
		out = append(out, stopSeq...)
	}
	return out
}

// appendChatToolCall writes an Anthropic tool_use block as an OpenAI tool
// call, its input object as the arguments string.
func appendChatToolCall(out []byte, b part, index int, ids *ToolIDs) ([]byte, error) {
	id, name, input := b.id, b.name, b.input
	if !isString(name) {
		return out, invalidUpstream("tool_use block without a name")
	}
	out = append(out, `{"id":`...)
	out = ids.appendClientID(out, id, Chat, "call_", index)
	out = append(out, `,"type":"function","function":{"name":`...)
	out = append(out, name...)
	out = append(out, `,"arguments":`...)
	switch {
	case isObject(input):
		out = jsonscan.AppendString(out, input)
	case !present(input):
		out = append(out, `"{}"`...)
	default:
		return out, invalidUpstream("tool_use input is not a JSON object")
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
