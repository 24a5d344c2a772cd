package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// ChatResponseToMessages turns an OpenAI chat completion (a 2xx unary body)
// into an Anthropic message for a client that asked for clientModel. The first
// choice's content becomes a text block (a refusal too), its tool_calls become
// tool_use blocks. It also returns the usage the upstream reported. An answer
// that is not a chat completion wraps ErrInvalidUpstream, as do tool-call
// arguments that are not a JSON object, unless the answer was cut by its
// length limit (then they are {}, and stop_reason says max_tokens).
func ChatResponseToMessages(body []byte, clientModel string) ([]byte, Usage, error) {
	var id, choices, usage []byte
	if !jsonscan.Object(body, func(k, val []byte) {
		switch string(k) {
		case "id":
			id = val
		case "choices":
			choices = val
		case "usage":
			usage = val
		}
	}) {
		return nil, Usage{}, invalidUpstream("chat completion body is not a JSON object")
	}
	if !isArray(choices) {
		return nil, Usage{}, invalidUpstream("chat completion has no choices array")
	}
	msg, finish, ok := firstChoice(choices)
	if !ok {
		return nil, Usage{}, invalidUpstream("chat completion has no choice")
	}
	var content, refusalText, toolCalls []byte
	if isObject(msg) {
		mm := jsonscan.MembersOf(msg)
		for k, val, ok := mm.Next(); ok; k, val, ok = mm.Next() {
			switch string(k) {
			case "content":
				content = val
			case "refusal":
				refusalText = val
			case "tool_calls":
				toolCalls = val
			}
			// reasoning_content and the like are dropped: an Anthropic
			// thinking block needs a signature no OpenAI upstream gives.
		}
	}
	u := chatUsage(usage)
	truncated := stringIs(finish, "length")

	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"id":`...)
	out = appendID(out, id, "msg_translated", -1)
	out = append(out, `,"type":"message","role":"assistant","model":`...)
	out = jsonscan.AppendString(out, clientModel)
	out = append(out, `,"content":[`...)
	n := 0
	block := func() {
		if n > 0 {
			out = append(out, ',')
		}
		n++
	}
	switch {
	case isString(content) && !isEmptyString(content):
		block()
		out = appendTextBlock(out, content)
	case isArray(content): // some OpenAI-compatible servers answer in parts
		parts := jsonscan.ElementsOf(content)
		for v, ok := parts.Next(); ok; v, ok = parts.Next() {
			if p, _ := readPart(v); stringIs(p.typ, "text") && isString(p.text) && !isEmptyString(p.text) {
				block()
				out = appendTextBlock(out, p.text)
			}
		}
	}
	if n == 0 && isString(refusalText) && !isEmptyString(refusalText) {
		block()
		out = appendTextBlock(out, refusalText)
	}
	if isArray(toolCalls) {
		for j, c := range jsonscan.Each(toolCalls) {
			block()
			var err error
			if out, err = appendToolUse(out, c, j, truncated); err != nil {
				return nil, Usage{}, err
			}
		}
	}
	out = append(out, `],"stop_reason":"`...)
	out = append(out, stopReason(stringToken(finish))...)
	out = append(out, `","stop_sequence":null,"usage":`...)
	out = appendMessagesUsage(out, u)
	return append(out, '}'), u, nil
}

// firstChoice finds the choice with index 0, or the first one listed, and
// returns its message and finish_reason.
func firstChoice(choices []byte) (msg, finish []byte, ok bool) {
	e := jsonscan.ElementsOf(choices)
	for c, more := e.Next(); more; c, more = e.Next() {
		if !isObject(c) {
			continue
		}
		var index, m, f []byte
		cm := jsonscan.MembersOf(c)
		for k, v, more := cm.Next(); more; k, v, more = cm.Next() {
			switch string(k) {
			case "index":
				index = v
			case "message", "delta":
				m = v
			case "finish_reason":
				f = v
			}
		}
		if !ok || string(index) == "0" {
			msg, finish, ok = m, f, true
		}
		if string(index) == "0" {
			break
		}
	}
	return msg, finish, ok
}

// appendToolUse writes an OpenAI tool call as an Anthropic tool_use block.
func appendToolUse(out, c []byte, j int, truncated bool) ([]byte, error) {
	tc := readToolCall(c)
	if !isString(tc.name) {
		return out, invalidUpstream("tool call without a function name")
	}
	out = append(out, `{"type":"tool_use","id":`...)
	out = appendID(out, tc.id, "toolu_", j)
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
