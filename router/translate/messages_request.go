package translate

// EncodeMessages writes r as an Anthropic Messages request for
// upstreamModel. Turns of one role are merged; tool ids are made valid for
// Anthropic by ids. Thinking goes back only with the signature Anthropic
// checks (an unsigned one, or one Gemini signed, is left out). An empty
// text block, which Anthropic refuses, is left out too. What Anthropic
// cannot say is refused with the client's field named: json_object output.
func EncodeMessages(r *Request, upstreamModel string, ids *ToolIDs) ([]byte, error) {
	out := appendRequestHead(make([]byte, 0, r.outputSize()), upstreamModel)
	open, blocks := Role(0), 0
	lastAssistantTools, lastAssistantThinks := false, false
	for i := range r.Turns {
		t := &r.Turns[i]
		if t.Role != open {
			out, blocks = closeMessagesTurn(out, open, blocks), 0
			out = append(comma(out), `{"role":"`...)
			out = append(append(out, converseRole(t.Role)...), `","content":[`...)
			open = t.Role
			if t.Role == RoleAssistant {
				lastAssistantTools, lastAssistantThinks = false, false
			}
		}
		for j := range t.Parts {
			p := &t.Parts[j]
			n := len(out)
			var err error
			if out, err = appendMessagesBlock(comma(out), r, t, p, ids); err != nil {
				return nil, err
			}
			if len(out) == n+1 || len(out) == n { // nothing written
				out = out[:n]
				continue
			}
			blocks++
			lastAssistantTools = lastAssistantTools || p.Kind == PartToolCall
			lastAssistantThinks = lastAssistantThinks || p.Kind == PartThinking || p.Kind == PartRedactedThinking
		}
		if present(t.Cache) && blocks > 0 {
			out = append(appendCacheControl(out[:len(out)-1], t.Cache), '}')
		}
	}
	out = append(closeMessagesTurn(out, open, blocks), ']')
	out = appendMessagesSystem(out, r.System)
	return appendMessagesSettings(out, r, lastAssistantTools && !lastAssistantThinks)
}

// closeMessagesTurn ends the open turn; one with no blocks says "".
func closeMessagesTurn(out []byte, open Role, blocks int) []byte {
	switch {
	case open == 0:
		return out
	case blocks == 0:
		return append(out[:len(out)-1], `""}`...)
	}
	return append(out, "]}"...)
}

// appendMessagesSystem writes the system prompt: a string, or text blocks
// when there are several or one is marked for caching.
func appendMessagesSystem(out []byte, system []Part) []byte {
	if len(system) == 0 {
		return out
	}
	if len(system) == 1 && !present(system[0].Cache) {
		return append(key(out, "system"), textOr(system[0].Text)...)
	}
	out = append(key(out, "system"), '[')
	for i := range system {
		out = appendTextBlock(comma(out), textOr(system[i].Text), system[i].Cache)
	}
	return append(out, ']')
}

// appendMessagesBlock writes one part as a content block (nothing for a
// part Anthropic is not sent).
func appendMessagesBlock(out []byte, r *Request, t *Turn, p *Part, ids *ToolIDs) ([]byte, error) {
	var err error
	switch p.Kind {
	case PartText, PartRefusal:
		if isEmptyString(textOr(p.Text)) {
			return out, nil
		}
		return appendTextBlock(out, textOr(p.Text), p.Cache), nil
	case PartImage, PartDocument:
		out = appendMessagesMedia(out, p)
	case PartToolCall:
		out = ids.appendAnthropicID(append(out, `{"type":"tool_use","id":`...), p.ID)
		out = append(append(out, `,"name":`...), p.Name...)
		if out, err = appendArgsObject(append(out, `,"input":`...), p); err != nil {
			return out, refuse(r.argsPath(t, p), "tool call arguments must be a JSON object")
		}
	case PartToolResult:
		if out, err = appendMessagesResult(out, r, t, p, ids); err != nil {
			return out, err
		}
	case PartThinking:
		if originOf(p.Signature) != sigAnthropic { // unsigned, or Gemini's
			return out, nil
		}
		out = append(append(out, `{"type":"thinking","thinking":`...), textOr(p.Text)...)
		out = append(append(out, `,"signature":`...), p.Signature...)
	case PartRedactedThinking:
		out = appendInline(append(out, `{"type":"redacted_thinking","data":`...), p.Data, p.DataEscaped)
	default:
		return out, nil
	}
	return append(appendCacheControl(out, p.Cache), '}'), nil
}

// appendMessagesMedia writes an image or document block's type and
// source, inline or by URL (the block is left open).
func appendMessagesMedia(out []byte, p *Part) []byte {
	if p.Kind == PartDocument {
		out = append(out, `{"type":"document","source":`...)
	} else {
		out = append(out, `{"type":"image","source":`...)
	}
	if p.Data == nil {
		out = append(append(append(out, `{"type":"url","url":`...), p.URL...), '}')
	} else {
		out = appendInline(append(out, `{"type":"base64","media_type":`...), p.MediaType, p.DataEscaped)
		out = append(appendInline(append(out, `,"data":`...), p.Data, p.DataEscaped), '}')
	}
	if p.Kind == PartDocument && isString(p.Title) {
		out = append(append(out, `,"title":`...), p.Title...)
	}
	return out
}

// appendMessagesResult writes a tool_result block (left open): text, or
// text, image and document blocks, and is_error.
func appendMessagesResult(out []byte, r *Request, t *Turn, p *Part, ids *ToolIDs) ([]byte, error) {
	out = ids.appendAnthropicID(append(out, `{"type":"tool_result","tool_use_id":`...), p.ID)
	out = append(out, `,"content":`...)
	if p.Content == nil {
		out = append(out, textOr(p.Text)...)
	} else {
		out = append(out, '[')
		for i := range p.Content {
			c := &p.Content[i]
			if c.Kind == PartText && isEmptyString(textOr(c.Text)) {
				continue
			}
			var err error
			if out, err = appendMessagesBlock(comma(out), r, t, c, ids); err != nil {
				return out, err
			}
		}
		out = append(out, ']')
	}
	if p.IsError {
		out = append(out, `,"is_error":true`...)
	}
	return out, nil
}
