package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// ChatResponseToResponses turns an OpenAI chat completion (a 2xx unary
// body) into a Responses API response object, presented as a says: the
// reasoning some servers return (reasoning_content, reasoning) as a
// reasoning item with its summary, the text as a message, a refusal as a
// message with a refusal part, each tool call as a function_call item. A
// length cut is status "incomplete" (max_output_tokens). It also returns
// the usage the upstream reported. An answer that is not a chat completion
// wraps ErrInvalidUpstream, as do tool arguments that are not one JSON
// object (unless cut by the length limit).
func ChatResponseToResponses(body []byte, a Answer) ([]byte, Usage, error) {
	resp, c, m, err := readChatCompletion(body)
	if err != nil {
		return nil, Usage{}, err
	}
	h := newRespHead(&a, resp.id, resp.model, createdOr(resp.created, a.Created))
	var few [4]respItem
	items := few[:0]
	add := func(kind int, text []byte) *respItem {
		items = append(items, respItem{kind: kind, id: h.itemID(kind, len(items)), text: text})
		return &items[len(items)-1]
	}
	if r := chatReasoning(c.message); len(r) > 0 {
		add(itemReasoning, r)
	}
	switch {
	case isString(m.content) && !isEmptyString(m.content):
		add(itemMessage, stringToken(m.content))
	case isArray(m.content):
		var text []byte
		for _, p := range jsonscan.Each(m.content) {
			if pt, _ := readPart(p); stringIs(pt.typ, "text") && isString(pt.text) {
				text = append(text, stringToken(pt.text)...)
			}
		}
		if len(text) > 0 {
			add(itemMessage, text)
		}
	}
	if isString(m.refusal) && !isEmptyString(m.refusal) {
		add(itemRefusal, stringToken(m.refusal))
	}
	truncated := stringIs(c.finish, "length")
	for j, call := range jsonscan.Each(m.toolCalls) {
		tc := readToolCall(call)
		if !isString(tc.name) {
			return nil, Usage{}, invalidUpstream("tool call without a function name")
		}
		args := stringToken(tc.args)
		if err := checkArguments(tc.args); err != nil && !truncated {
			return nil, Usage{}, err
		}
		it := add(itemCall, args)
		it.callID, it.name = a.IDs.appendClientID(nil, tc.id, Responses, "call_", j), tc.name
	}
	u := chatUsage(resp.usage)
	out := make([]byte, 0, len(body)+256)
	return appendResponse(out, &h, items, true, statusOfChat(c.finish), u), u, nil
}

// chatReasoning is the raw contents of the reasoning text some
// OpenAI-compatible servers put beside the message (reasoning_content:
// DeepSeek, vLLM; reasoning: Groq, OpenRouter), or nil.
func chatReasoning(message []byte) []byte {
	var r []byte
	m := jsonscan.MembersOf(message)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if (string(k) == "reasoning_content" || string(k) == "reasoning") && isString(v) {
			r = stringToken(v)
		}
	}
	return r
}

// checkArguments checks that a tool call's arguments (a string token, or
// absent) hold one JSON object, or nothing.
func checkArguments(args []byte) error {
	if !present(args) {
		return nil
	}
	if !isString(args) {
		return errNotObjectArgs
	}
	decoded := jsonscan.AppendUnquoted(nil, args)
	if jsonscan.SkipSpace(decoded, 0) == len(decoded) {
		return nil
	}
	if v, ok := jsonscan.Valid(decoded); !ok || !isObject(v) {
		return errNotObjectArgs
	}
	return nil
}

// MessagesResponseToResponses turns an Anthropic message (a 2xx unary body)
// into a Responses API response object, presented as a says: thinking
// blocks as reasoning items (their text is the summary Anthropic gives),
// consecutive text blocks as one message, tool_use blocks as function_call
// items, in the order the blocks came; a refusal (stop_reason "refusal") as
// a message with a refusal part. It also returns the usage the upstream
// reported. An answer that is not an Anthropic message wraps
// ErrInvalidUpstream.
func MessagesResponseToResponses(body []byte, a Answer) ([]byte, Usage, error) {
	msg, err := readMessagesAnswer(body)
	if err != nil {
		return nil, Usage{}, err
	}
	h := newRespHead(&a, msg.id, msg.model, a.Created)
	refused := stringIs(msg.stop, "refusal")
	var items []respItem
	last := -1 // the kind of the item written last
	for _, b := range jsonscan.Each(msg.content) {
		p, _ := readPart(b)
		switch {
		case stringIs(p.typ, "text"):
			if !isString(p.text) {
				return nil, Usage{}, invalidUpstream("text block without text")
			}
			kind := itemMessage
			if refused {
				kind = itemRefusal
			}
			if last == kind { // one message for consecutive text blocks
				it := &items[len(items)-1]
				it.text = append(append([]byte(nil), it.text...), stringToken(p.text)...)
				continue
			}
			items = append(items, respItem{kind: kind, id: h.itemID(kind, len(items)), text: stringToken(p.text)})
			last = kind
		case stringIs(p.typ, "thinking"):
			if t := jsonscan.Field(b, "thinking"); isString(t) && !isEmptyString(t) {
				items = append(items, respItem{kind: itemReasoning, id: h.itemID(itemReasoning, len(items)), text: stringToken(t)})
				last = itemReasoning
			}
		case stringIs(p.typ, "tool_use"):
			it, err := toolUseItem(&a, &h, p, len(items))
			if err != nil {
				return nil, Usage{}, err
			}
			items = append(items, it)
			last = itemCall
		}
	}
	if refused && last != itemRefusal {
		items = append(items, respItem{kind: itemRefusal, id: h.itemID(itemRefusal, len(items)), text: stringToken([]byte(refusalWithoutText))})
	}
	u := messagesUsage(Usage{}, msg.usage)
	out := make([]byte, 0, len(body)+256)
	return appendResponse(out, &h, items, true, statusOfMessages(msg.stop), u), u, nil
}

// toolUseItem makes a function_call item of a tool_use block.
func toolUseItem(a *Answer, h *respHead, p part, n int) (respItem, error) {
	if !isString(p.name) {
		return respItem{}, invalidUpstream("tool_use block without a name")
	}
	it := respItem{kind: itemCall, id: h.itemID(itemCall, n), name: p.name}
	it.callID = a.IDs.appendClientID(nil, p.id, Responses, "call_", n)
	switch {
	case isObject(p.input):
		q := jsonscan.AppendString(nil, p.input)
		it.text = q[1 : len(q)-1]
	case present(p.input):
		return respItem{}, invalidUpstream("tool_use input is not a JSON object")
	}
	return it, nil
}
