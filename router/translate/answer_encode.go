package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Writing a neutral answer (Reply) in the three client formats: a chat
// completion, an Anthropic message, a Responses response object. Ids the
// upstream did not give are made up the way the pairwise answers make
// them ("chatcmpl-translated", "msg_translated", "resp_translated"; tool
// calls call_N, toolu_N).

// encodeChatAnswer writes rep as a chat completion. Text parts join into
// the content; a refusal (a refusal part, or an answer that stopped as
// one with no words) is the refusal field; thinking is left out. As in a
// stream (chatWriter), text before a refusal stop stays the content and
// the finish says content_filter.
func encodeChatAnswer(rep *Reply, a *Answer, size int) []byte {
	out := make([]byte, 0, size)
	out = appendID(append(out, `{"id":`...), rep.ID, "chatcmpl-translated", -1)
	out = appendInt(append(out, `,"object":"chat.completion","created":`...), createdOf(rep, a))
	out = a.appendModel(append(out, `,"model":`...), rep.Model)
	out = append(out, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	out = appendJoined(out, rep.Parts, PartText)
	out = append(out, `,"refusal":`...)
	switch {
	case hasKind(rep.Parts, PartRefusal):
		out = appendJoined(out, rep.Parts, PartRefusal)
	case rep.Finish == FinishRefusal && !saysText(rep.Parts):
		out = append(out, refusalWithoutText...)
	default:
		out = append(out, "null"...)
	}
	n := 0
	for i := range rep.Parts {
		p := &rep.Parts[i]
		if p.Kind != PartToolCall {
			continue
		}
		if n == 0 {
			out = append(out, `,"tool_calls":[`...)
		}
		out = a.IDs.appendClientID(append(comma(out), `{"id":`...), p.ID, Chat, "call_", n)
		out = append(append(out, `,"type":"function","function":{"name":`...), p.Name...)
		out = append(appendArgsString(append(out, `,"arguments":`...), p), "}}"...)
		n++
	}
	if n > 0 {
		out = append(out, ']')
	}
	out = append(out, `},"logprobs":null,"finish_reason":"`...)
	out = append(append(out, finishWord(Chat, finishOr(rep.Finish))...), '"')
	if rep.Finish == FinishStopSequence && isString(rep.StopSequence) {
		// The matched stop sequence, where vLLM and SGLang report it:
		// OpenAI's finish_reason "stop" alone does not say.
		out = append(append(out, `,"stop_reason":`...), rep.StopSequence...)
	}
	out = append(out, "}]"...)
	if rep.Usage.Known {
		out = appendChatUsage(append(out, `,"usage":`...), rep.Usage)
	}
	return append(out, '}')
}

// finishOr is fin, or stop when the upstream did not say.
func finishOr(fin Finish) Finish {
	if fin == FinishNone {
		return FinishStop
	}
	return fin
}

// createdOf is the answer's created time: the upstream's, else a's.
func createdOf(rep *Reply, a *Answer) int64 {
	if rep.Created > 0 {
		return rep.Created
	}
	return a.Created
}

// saysText reports whether parts hold text a client reads (a text part
// with words), as a stream writer's said flag does.
func saysText(parts []Part) bool {
	for i := range parts {
		if parts[i].Kind == PartText && !isEmptyString(textOr(parts[i].Text)) {
			return true
		}
	}
	return false
}

func hasKind(parts []Part, k PartKind) bool {
	for i := range parts {
		if parts[i].Kind == k {
			return true
		}
	}
	return false
}

// appendJoined writes the parts of kind k as one string, their escaped
// contents joined as they are, or null when there are none.
func appendJoined(out []byte, parts []Part, k PartKind) []byte {
	n := 0
	for i := range parts {
		if parts[i].Kind != k || !isString(parts[i].Text) {
			continue
		}
		if n == 0 {
			out = append(out, '"')
		}
		n++
		out = append(out, parts[i].Text[1:len(parts[i].Text)-1]...)
	}
	if n == 0 {
		return append(out, "null"...)
	}
	return append(out, '"')
}

// encodeMessagesAnswer writes rep as an Anthropic message. Tool arguments
// that are not one JSON object make the answer invalid, unless it was cut
// by its length limit (then they are {}, and the stop reason says so).
func encodeMessagesAnswer(rep *Reply, a *Answer, size int) ([]byte, error) {
	out := make([]byte, 0, size)
	out = appendID(append(out, `{"id":`...), rep.ID, "msg_translated", -1)
	out = append(out, `,"type":"message","role":"assistant","model":`...)
	out = append(a.appendModel(out, rep.Model), `,"content":[`...)
	calls := 0
	for i := range rep.Parts {
		p := &rep.Parts[i]
		switch p.Kind {
		case PartText, PartRefusal:
			out = appendTextBlock(comma(out), p.Text, nil)
		case PartToolCall:
			out = a.IDs.appendClientID(append(comma(out), `{"type":"tool_use","id":`...), p.ID, Messages, "toolu_", calls)
			out = append(append(out, `,"name":`...), p.Name...)
			var err error
			if out, err = appendArgsObject(append(out, `,"input":`...), p); err != nil {
				if rep.Finish != FinishLength {
					return nil, err
				}
				out = append(out, "{}"...) // cut off mid-arguments by the length limit
			}
			out = append(out, '}')
			calls++
		case PartThinking:
			out = append(append(comma(out), `{"type":"thinking","thinking":`...), textOr(p.Text)...)
			out = append(append(append(out, `,"signature":`...), textOr(p.Signature)...), '}')
		case PartRedactedThinking:
			out = appendInline(append(comma(out), `{"type":"redacted_thinking","data":`...), p.Data, p.DataEscaped)
			out = append(out, '}')
		}
	}
	out = append(out, `],"stop_reason":"`...)
	out = append(append(out, finishWord(Messages, finishOr(rep.Finish))...), `","stop_sequence":`...)
	if isString(rep.StopSequence) {
		out = append(out, rep.StopSequence...)
	} else {
		out = append(out, "null"...)
	}
	out = appendMessagesUsage(append(out, `,"usage":`...), rep.Usage)
	return append(out, '}'), nil
}

// respStatusOf is how a Responses client reads fin.
func respStatusOf(fin Finish) respStatus {
	return respStatus{finishWord(Responses, fin)}
}

// encodeResponsesAnswer writes rep as a Responses response object: a
// reasoning item per thinking part (the signature in encrypted_content,
// which carries it back on the next turn), a message item of the text
// (consecutive text parts joined), one refusal item, a function_call item
// per call. Tool arguments that are not one JSON object make the answer
// invalid, unless it was cut by its length limit (they are what arrived).
// An answer cut short (its length limit, a content filter) is incomplete,
// and so is the item it was stopped in, as OpenAI says both. A refusal
// stop after text is a content filter that stopped that text (as a stream,
// which sent the text before it knew, must say it); one with no words is
// a refusal item, completed.
func encodeResponsesAnswer(rep *Reply, a *Answer, size int) ([]byte, error) {
	h := newRespHead(a, rep.ID, rep.Model, createdOf(rep, a))
	var few [8]respItem
	items := few[:0]
	refusal, calls := -1, 0
	cut := rep.Finish == FinishLength || rep.Finish == FinishContextWindow
	for i := range rep.Parts {
		p := &rep.Parts[i]
		n := len(items)
		switch p.Kind {
		case PartText:
			if n > 0 && items[n-1].kind == itemMessage { // one message for consecutive text
				items[n-1].text = append(append([]byte(nil), items[n-1].text...), stringToken(p.Text)...)
				continue
			}
			items = append(items, respItem{kind: itemMessage, id: h.itemID(itemMessage, n), text: stringToken(p.Text)})
		case PartRefusal:
			// A refusal is one refusal, however many blocks said it.
			if refusal >= 0 {
				items[refusal].text = append(append([]byte(nil), items[refusal].text...), stringToken(p.Text)...)
				continue
			}
			refusal = n
			items = append(items, respItem{kind: itemRefusal, id: h.itemID(itemRefusal, n), text: stringToken(p.Text)})
		case PartThinking:
			if isEmptyString(textOr(p.Text)) && !isString(p.Signature) {
				continue // nothing to show and nothing to carry back
			}
			items = append(items, respItem{kind: itemReasoning, id: h.itemID(itemReasoning, n), text: stringToken(textOr(p.Text)), encrypted: p.Signature})
		case PartToolCall:
			it := respItem{kind: itemCall, id: h.itemID(itemCall, n), name: p.Name}
			it.callID = a.IDs.appendClientID(nil, p.ID, Responses, "call_", calls)
			switch {
			case p.ArgsQuoted:
				if err := checkArguments(p.Args); err != nil && !cut {
					return nil, err
				}
				it.text = stringToken(p.Args) // "": {}
			case present(p.Args):
				q := jsonscan.AppendString(nil, p.Args)
				it.text = q[1 : len(q)-1]
			}
			items = append(items, it)
			calls++
		}
	}
	fin := finishOr(rep.Finish)
	if fin == FinishRefusal && saysText(rep.Parts) {
		fin = FinishContentFilter
	}
	if fin == FinishRefusal && refusal < 0 {
		items = append(items, respItem{kind: itemRefusal, id: h.itemID(itemRefusal, len(items)), text: stringToken([]byte(refusalWithoutText))})
	}
	st := respStatusOf(fin)
	if n := len(items); n > 0 && (cut || fin == FinishContentFilter) {
		items[n-1].incomplete = true
	}
	return appendResponse(make([]byte, 0, size), &h, items, true, st, rep.Usage), nil
}
