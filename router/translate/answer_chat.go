package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Reading an OpenAI chat completion (a 2xx unary body) into the neutral
// model: the first choice's message (reasoning, text, refusal, tool
// calls, in that order), its finish, and the usage.

// decodeChatAnswer reads a chat completion into a Reply whose parts are appended to parts. What is not a chat completion,
// a member of the wrong JSON type, a tool call without a name or with
// arguments that are not one JSON object (unless the answer was cut by its
// length limit) wraps ErrInvalidUpstream.
func decodeChatAnswer(body []byte, parts []Part) (Reply, error) {
	resp, c, m, err := readChatCompletion(body)
	if err != nil {
		return Reply{}, err
	}
	rep := Reply{Parts: parts}
	rep.ID, rep.Model, rep.Usage = resp.id, resp.model, chatUsage(resp.usage)
	rep.Created, _ = intValue(resp.created)
	rep.Finish = finishOf(Chat, c.finish)
	// The reasoning some servers put beside the message (reasoning_content:
	// DeepSeek, vLLM; reasoning: Groq, OpenRouter) has no signature: a
	// Responses client sees it as a summary, a Messages client not at all.
	if m.reasoning != nil {
		rep.Parts = append(rep.Parts, Part{Kind: PartThinking, Text: m.reasoning, At: -1})
	}
	switch {
	case isString(m.content):
		if !isEmptyString(m.content) {
			rep.Parts = append(rep.Parts, Part{Kind: PartText, Text: m.content, At: -1})
		}
	case isArray(m.content): // some OpenAI-compatible servers answer in parts
		for _, v := range jsonscan.Each(m.content) {
			if p, _ := readPart(v); stringIs(p.typ, "text") && isString(p.text) && !isEmptyString(p.text) {
				rep.Parts = append(rep.Parts, Part{Kind: PartText, Text: p.text, At: -1})
			}
		}
	}
	refused := isString(m.refusal) && !isEmptyString(m.refusal)
	if refused {
		rep.Parts = append(rep.Parts, Part{Kind: PartRefusal, Text: m.refusal, At: -1})
	}
	truncated := rep.Finish == FinishLength
	calls := jsonscan.ElementsOf(m.toolCalls)
	for call, ok := calls.Next(); ok; call, ok = calls.Next() {
		p, err := chatToolCallPart(call, truncated)
		if err != nil {
			return Reply{}, err
		}
		rep.Parts = append(rep.Parts, p)
	}
	// OpenAI's stop says neither that the answer was a refusal nor which
	// stop sequence matched; a refusal field and vLLM's and SGLang's
	// choices[].stop_reason (the matched string) do.
	if rep.Finish == FinishStop || rep.Finish == FinishNone || rep.Finish == FinishOther {
		switch {
		case refused:
			rep.Finish = FinishRefusal
		case isString(c.stopReason):
			rep.Finish, rep.StopSequence = FinishStopSequence, c.stopReason
		}
	}
	return rep, nil
}

// chatToolCallPart reads one of a message's tool_calls. Its arguments are
// a string holding JSON, or (some servers) the object itself; a call cut
// by the length limit keeps what arrived, which each encoder writes as
// best its API allows ({} where an object is needed).
func chatToolCallPart(call []byte, truncated bool) (Part, error) {
	if !isObject(call) {
		return Part{}, invalidUpstream("tool call is not an object")
	}
	tc := readToolCall(call)
	if !isString(tc.name) {
		return Part{}, invalidUpstream("tool call without a function name")
	}
	p := Part{Kind: PartToolCall, ID: tc.id, Name: tc.name, Args: tc.args, ArgsQuoted: true, At: -1}
	switch {
	case !present(tc.args):
		p.Args = nil
	case isObject(tc.args):
		p.ArgsQuoted = false
	case !isString(tc.args):
		if !truncated {
			return Part{}, errNotObjectArgs
		}
		p.Args = nil // not even a string: nothing of it can be shown
	}
	// A string's JSON is checked by the encoder that reads it (unquoting
	// it is most of the cost, and an object's encoder unquotes anyway).
	return p, nil
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
