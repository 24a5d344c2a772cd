package translate

// A Responses answer is a response object with a list of output items. The
// answer translators for Responses clients (unary and streaming, from Chat
// Completions and from Anthropic Messages) build the same items and write
// the same object; this file is that part.

// Kinds of output item.
const (
	itemMessage   = iota // a message with one output_text part
	itemRefusal          // a message with one refusal part
	itemCall             // a function_call
	itemReasoning        // a reasoning item with one summary_text part
)

// respItem is one output item: its text is the raw contents of a JSON
// string (the message's text, the refusal, the call's arguments or the
// reasoning summary), a slice of the upstream's answer (unary) or the
// pieces gathered so far (streaming).
type respItem struct {
	kind         int
	id           []byte // the item's id, raw string contents
	callID, name []byte // a function_call's call_id and name, string tokens
	text         []byte
	done         bool
	// incomplete marks the item an answer was cut short in (written with
	// status "incomplete" once whole).
	incomplete bool
	// encrypted is a reasoning item's encrypted_content, a string token (the
	// thinking's signature; nil: none).
	encrypted []byte
}

// respHead is what the response object says besides its items.
type respHead struct {
	id      []byte // raw string contents
	model   []byte // string token
	created int64
}

// newRespHead makes the response's id from the upstream's (a string token,
// or nil) and its model as a says.
func newRespHead(a *Answer, id, model []byte, created int64) respHead {
	h := respHead{created: created}
	h.id = append(h.id, "resp_"...)
	if isString(id) && len(id) > 2 {
		h.id = append(h.id, id[1:len(id)-1]...)
	} else {
		h.id = append(h.id, "translated"...)
	}
	h.model = a.appendModel(nil, model)
	return h
}

// itemID makes the id of item n of the response.
func (h *respHead) itemID(kind, n int) []byte {
	prefix := "msg_"
	switch kind {
	case itemCall:
		prefix = "fc_"
	case itemReasoning:
		prefix = "rs_"
	}
	id := append([]byte(prefix), h.id[len("resp_"):]...)
	id = append(id, '_')
	return appendInt(id, int64(n))
}

// respStatus is how the answer ended, as a response's status says it.
type respStatus struct {
	incomplete string // "": completed; else incomplete_details.reason
}

// appendResponse writes the response object: in progress (no status
// given: the events that open a stream) or ended with st.
func appendResponse(out []byte, h *respHead, items []respItem, ended bool, st respStatus, u Usage) []byte {
	out = append(out, `{"id":"`...)
	out = append(out, h.id...)
	out = append(out, `","object":"response","created_at":`...)
	out = appendInt(out, h.created)
	out = append(out, `,"status":"`...)
	switch {
	case !ended:
		out = append(out, `in_progress","error":null,"incomplete_details":null`...)
	case st.incomplete != "":
		out = append(out, `incomplete","error":null,"incomplete_details":{"reason":"`...)
		out = append(out, st.incomplete...)
		out = append(out, `"}`...)
	default:
		out = append(out, `completed","error":null,"incomplete_details":null`...)
	}
	out = append(out, `,"model":`...)
	out = append(out, h.model...)
	out = append(out, `,"output":[`...)
	if ended {
		for i := range items {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendItem(out, &items[i], true)
		}
	}
	out = append(out, `],"usage":`...)
	if ended && u.Known {
		out = appendResponsesUsage(out, u)
	} else {
		out = append(out, "null"...)
	}
	return append(out, '}')
}

// appendItem writes an output item, whole (done) or as it starts.
func appendItem(out []byte, it *respItem, whole bool) []byte {
	status := `in_progress"`
	switch {
	case whole && it.incomplete:
		status = `incomplete"`
	case whole:
		status = `completed"`
	}
	out = append(out, `{"id":"`...)
	out = append(out, it.id...)
	switch it.kind {
	case itemMessage, itemRefusal:
		out = append(out, `","type":"message","status":"`...)
		out = append(out, status...)
		out = append(out, `,"role":"assistant","content":[`...)
		if whole {
			out = appendPart(out, it)
		}
		return append(out, "]}"...)
	case itemCall:
		out = append(out, `","type":"function_call","status":"`...)
		out = append(out, status...)
		out = append(out, `,"arguments":"`...)
		if whole {
			out = appendArgs(out, it.text)
		}
		out = append(out, `","call_id":`...)
		out = append(out, it.callID...)
		out = append(out, `,"name":`...)
		out = append(out, it.name...)
		return append(out, '}')
	}
	out = append(out, `","type":"reasoning","summary":[`...)
	if whole && len(it.text) > 0 { // a thinking block with only its signature has no summary
		out = appendPart(out, it)
	}
	out = append(out, ']')
	out = appendRaw(out, "encrypted_content", it.encrypted)
	return append(out, '}')
}

// appendArgs writes a call's arguments, {} when it got none.
func appendArgs(out, args []byte) []byte {
	if len(args) == 0 {
		return append(out, "{}"...)
	}
	return append(out, args...)
}

// appendPart writes the item's one content (or summary) part, whole.
func appendPart(out []byte, it *respItem) []byte {
	switch it.kind {
	case itemRefusal:
		out = append(out, `{"type":"refusal","refusal":"`...)
		out = append(out, it.text...)
		return append(out, `"}`...)
	case itemReasoning:
		out = append(out, `{"type":"summary_text","text":"`...)
		out = append(out, it.text...)
		return append(out, `"}`...)
	}
	out = append(out, `{"type":"output_text","text":"`...)
	out = append(out, it.text...)
	return append(out, `","annotations":[],"logprobs":[]}`...)
}

// appendResponsesUsage writes u as a response's usage. input_tokens counts
// every prompt token; cached_tokens those read from a prompt cache; the
// tokens written to one are shown as for Chat Completions clients.
func appendResponsesUsage(out []byte, u Usage) []byte {
	out = append(out, `{"input_tokens":`...)
	out = appendInt(out, u.InputTokens)
	out = append(out, `,"input_tokens_details":{"cached_tokens":`...)
	out = appendInt(out, u.CacheReadInputTokens)
	if u.CacheCreationInputTokens > 0 {
		out = append(out, `,"cache_write_tokens":`...)
		out = appendInt(out, u.CacheCreationInputTokens)
	}
	out = append(out, `},"output_tokens":`...)
	out = appendInt(out, u.OutputTokens)
	if u.ReasoningKnown {
		// Left out when the upstream does not say (Anthropic, Converse):
		// 0 would say the model did not reason.
		out = append(out, `,"output_tokens_details":{"reasoning_tokens":`...)
		out = append(appendInt(out, u.ReasoningTokens), '}')
	}
	out = append(out, `,"total_tokens":`...)
	out = appendInt(out, u.InputTokens+u.OutputTokens)
	if u.CacheCreationInputTokens > 0 {
		out = append(out, `,"cache_creation_input_tokens":`...)
		out = appendInt(out, u.CacheCreationInputTokens)
	}
	return append(out, '}')
}
