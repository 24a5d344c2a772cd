package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// ChatResponseToMessages turns an OpenAI chat completion (a 2xx unary body)
// into an Anthropic message, presented as a says. The first choice's content
// becomes a text block, its tool_calls tool_use blocks (ids made valid for
// Anthropic), and a refusal a text block with stop_reason "refusal". It
// also returns the usage the upstream reported. An answer that is not a chat
// completion wraps ErrInvalidUpstream, as do tool-call arguments that are not
// a JSON object, unless the answer was cut by its length limit (then they are
// {}, and stop_reason says max_tokens).
func ChatResponseToMessages(body []byte, a Answer) ([]byte, Usage, error) {
	resp, c, m, err := readChatCompletion(body)
	if err != nil {
		return nil, Usage{}, err
	}
	u := chatUsage(resp.usage)
	truncated := stringIs(c.finish, "length")

	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"id":`...)
	out = appendID(out, resp.id, "msg_translated", -1)
	out = append(out, `,"type":"message","role":"assistant","model":`...)
	out = a.appendModel(out, resp.model)
	out = append(out, `,"content":[`...)
	n := 0
	block := func() {
		if n > 0 {
			out = append(out, ',')
		}
		n++
	}
	switch {
	case isString(m.content) && !isEmptyString(m.content):
		block()
		out = appendTextBlock(out, m.content, nil)
	case isArray(m.content): // some OpenAI-compatible servers answer in parts
		parts := jsonscan.ElementsOf(m.content)
		for v, ok := parts.Next(); ok; v, ok = parts.Next() {
			if p, _ := readPart(v); stringIs(p.typ, "text") && isString(p.text) && !isEmptyString(p.text) {
				block()
				out = appendTextBlock(out, p.text, nil)
			}
		}
	}
	refused := isString(m.refusal) && !isEmptyString(m.refusal)
	if refused {
		block()
		out = appendTextBlock(out, m.refusal, nil)
	}
	for j, tc := range jsonscan.Each(m.toolCalls) {
		block()
		if out, err = appendToolUse(out, tc, j, truncated, a.IDs); err != nil {
			return nil, Usage{}, err
		}
	}
	stop, seq := messagesStop(c.finish, c.stopReason, refused)
	out = append(out, `],"stop_reason":"`...)
	out = append(out, stop...)
	out = append(out, `","stop_sequence":`...)
	out = append(out, seq...)
	out = append(out, `,"usage":`...)
	out = appendMessagesUsage(out, u)
	return append(out, '}'), u, nil
}

// messagesStop is the Anthropic stop_reason and stop_sequence (a JSON value)
// for an OpenAI finish_reason; matched is the matched stop sequence vLLM and
// SGLang report in choices[].stop_reason, refused whether the answer was a
// refusal.
func messagesStop(finish, matched []byte, refused bool) (stop string, seq []byte) {
	stop = stopReason(stringToken(finish))
	switch {
	case refused && stop == "end_turn":
		return "refusal", nullValue
	case stop == "end_turn" && isString(matched):
		return "stop_sequence", matched
	}
	return stop, nullValue
}

var nullValue = []byte("null")

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
		}
		// reasoning_content and the like are dropped: an Anthropic thinking
		// block needs a signature no OpenAI upstream gives.
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

// appendToolUse writes an OpenAI tool call as an Anthropic tool_use block.
func appendToolUse(out, c []byte, j int, truncated bool, ids *ToolIDs) ([]byte, error) {
	tc := readToolCall(c)
	if !isString(tc.name) {
		return out, invalidUpstream("tool call without a function name")
	}
	out = append(out, `{"type":"tool_use","id":`...)
	out = ids.appendClientID(out, tc.id, Messages, "toolu_", j)
	out = append(out, `,"name":`...)
	out = append(out, tc.name...)
	out = append(out, `,"input":`...)
	out, err := appendArguments(out, tc.args)
	if err != nil {
		if !truncated {
			return out, err
		}
		out = append(out, "{}"...) // cut off mid-arguments by the length limit
	}
	return append(out, '}'), nil
}
