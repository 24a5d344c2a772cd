package translate

import "strconv"

// EncodeChat writes r as an OpenAI Chat Completions request for
// upstreamModel. The system prompt is one system message; consecutive
// assistant turns are one assistant message (text, refusal, tool calls);
// a user turn's tool results are tool messages, before its other parts.
// A tool message has no error flag (the text says what failed); the
// images a tool returned follow its tool messages in a user message, as
// tool messages hold text only (a document there is refused). Thinking, which an
// OpenAI-compatible server cannot check, is left out, as are cache marks
// and top_k. A stream always asks for its usage. An Anthropic client's
// prefill is refused (refusePrefill).
func EncodeChat(r *Request, upstreamModel string) ([]byte, error) {
	if err := r.refusePrefill(); err != nil {
		return nil, err
	}
	out := appendRequestHead(make([]byte, 0, r.outputSize()), upstreamModel)
	if len(r.System) > 1 || len(r.System) == 1 && !isEmptyString(textOr(r.System[0].Text)) {
		if r.Developer {
			out = append(out, `{"role":"developer","content":`...)
		} else {
			out = append(out, `{"role":"system","content":`...)
		}
		if len(r.System) == 1 && (r.Client == Messages || r.System[0].At < 0) { // one string as given (a Messages system prompt is one anyway)
			out = append(append(out, textOr(r.System[0].Text)...), '}')
		} else {
			out = append(appendChatTexts(out, r.System), '}')
		}
	}
	var err error
	for i := 0; i < len(r.Turns); i++ {
		t := &r.Turns[i]
		if t.Role == RoleAssistant {
			n := i + 1
			for n < len(r.Turns) && r.Turns[n].Role == RoleAssistant {
				n++
			}
			out = appendChatAssistant(out, r.Turns[i:n])
			i = n - 1
			continue
		}
		if out, err = appendChatUser(out, r, t); err != nil {
			return nil, err
		}
	}
	out = append(out, ']')
	return appendChatSettings(out, r)
}

// appendChatTexts writes text parts as a content string (one part given
// as a string) or an array of text parts.
func appendChatTexts(out []byte, parts []Part) []byte {
	if len(parts) == 1 && parts[0].At < 0 {
		return append(out, textOr(parts[0].Text)...)
	}
	out = append(out, '[')
	for i := range parts {
		out = appendTextBlock(comma(out), textOr(parts[i].Text), nil)
	}
	return append(out, ']')
}

// appendChatAssistant writes assistant turns as one message.
func appendChatAssistant(out []byte, turns []Turn) []byte {
	texts, calls := 0, 0
	var text []byte
	for i := range turns {
		for j := range turns[i].Parts {
			switch p := &turns[i].Parts[j]; p.Kind {
			case PartText, PartRefusal: // a refusal in history is what was said
				if !isEmptyString(textOr(p.Text)) {
					texts, text = texts+1, p.Text
				}
			case PartToolCall:
				calls++
			}
		}
	}
	out = append(comma(out), `{"role":"assistant","content":`...)
	switch {
	case texts == 1:
		out = append(out, text...)
	case texts > 1:
		out = append(out, '[')
		for i := range turns {
			for j := range turns[i].Parts {
				if p := &turns[i].Parts[j]; (p.Kind == PartText || p.Kind == PartRefusal) && !isEmptyString(textOr(p.Text)) {
					out = appendTextBlock(comma(out), p.Text, nil)
				}
			}
		}
		out = append(out, ']')
	case calls > 0:
		out = append(out, "null"...)
	default:
		out = append(out, `""`...)
	}
	if calls > 0 {
		out = append(out, `,"tool_calls":[`...)
		for i := range turns {
			for j := range turns[i].Parts {
				if p := &turns[i].Parts[j]; p.Kind == PartToolCall {
					out = append(append(comma(out), `{"id":`...), p.ID...)
					out = append(append(out, `,"type":"function","function":{"name":`...), p.Name...)
					out = append(appendArgsString(append(out, `,"arguments":`...), p), "}}"...)
				}
			}
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// appendChatUser writes a user turn: tool messages for its results, then
// a user message of its other parts (and the images its results held).
func appendChatUser(out []byte, r *Request, t *Turn) ([]byte, error) {
	rest := 0 // parts for the user message
	var first *Part
	for j := range t.Parts {
		p := &t.Parts[j]
		if p.Kind != PartToolResult {
			if rest++; rest == 1 {
				first = p
			}
			continue
		}
		out = append(comma(out), `{"role":"tool","content":`...)
		out = appendChatResult(out, p)
		out = append(append(append(out, `,"tool_call_id":`...), p.ID...), '}')
		for k := range p.Content {
			if c := &p.Content[k]; c.Kind != PartText {
				if rest++; rest == 1 {
					first = c
				}
			}
		}
	}
	switch {
	case rest == 0 && len(t.Parts) == 0: // said nothing: the upstream judges it
		return append(comma(out), `{"role":"user","content":""}`...), nil
	case rest == 0:
		return out, nil
	case rest == 1 && first.Kind == PartText && first.At < 0:
		out = append(comma(out), `{"role":"user","content":`...)
		return append(append(out, textOr(first.Text)...), '}'), nil
	}
	out = append(comma(out), `{"role":"user","content":[`...)
	var err error
	for j := range t.Parts {
		p := &t.Parts[j]
		if p.Kind != PartToolResult {
			if out, err = appendChatUserPart(comma(out), r, t, p); err != nil {
				return out, err
			}
			continue
		}
		for k := range p.Content { // the images a tool returned
			if c := &p.Content[k]; c.Kind == PartDocument {
				return out, refuse(r.partPath(t, p)+".content["+strconv.Itoa(k)+"].type", "an OpenAI upstream's tool message holds text, and the images a tool returned follow it; not a document")
			} else if c.Kind != PartText {
				if out, err = appendChatUserPart(comma(out), r, t, c); err != nil {
					return out, err
				}
			}
		}
	}
	return append(out, "]}"...), nil
}

// appendChatResult writes a tool message's content: the result's text
// parts. A tool message has no error flag: what failed is in the text.
func appendChatResult(out []byte, p *Part) []byte {
	texts := 0
	for k := range p.Content {
		if p.Content[k].Kind == PartText {
			texts++
		}
	}
	switch {
	case p.Content == nil:
		return append(out, textOr(p.Text)...)
	case texts == 0:
		return append(out, `""`...)
	case texts == 1:
		for k := range p.Content {
			if c := &p.Content[k]; c.Kind == PartText {
				return append(out, textOr(c.Text)...)
			}
		}
	}
	out = append(out, '[')
	for k := range p.Content {
		if c := &p.Content[k]; c.Kind == PartText {
			out = appendTextBlock(comma(out), textOr(c.Text), nil)
		}
	}
	return append(out, ']')
}

// appendChatPart writes a user content part: text, image_url or file.
func appendChatUserPart(out []byte, r *Request, t *Turn, p *Part) ([]byte, error) {
	switch {
	case p.Kind == PartImage && p.Data != nil:
		out = append(out, `{"type":"image_url","image_url":{"url":"data:`...)
		out = appendRaw(appendDataURL(out, p), "detail", p.Detail)
		out = append(out, "}"...)
	case p.Kind == PartImage:
		out = append(append(out, `{"type":"image_url","image_url":{"url":`...), p.URL...)
		out = append(appendRaw(out, "detail", p.Detail), '}')
	case p.Kind == PartDocument && p.Data != nil:
		out = append(out, `{"type":"file","file":{"filename":`...)
		if isString(p.Title) {
			out = append(out, p.Title...)
		} else {
			out = append(out, `"document.pdf"`...)
		}
		out = append(out, `,"file_data":"data:`...)
		out = append(appendDataURL(out, p), '}')
	case p.Kind == PartDocument:
		return out, refuse(r.partPath(t, p)+".source", "an OpenAI upstream takes a document inline only, not by URL")
	default:
		return appendTextBlock(out, textOr(p.Text), nil), nil
	}
	return append(out, '}'), nil
}

// appendDataURL writes the rest of a data: URL string: media type, base64
// data and the closing quote. The pieces are string contents as they came
// (escaped or with nothing to escape), so they are copied as they are.
func appendDataURL(out []byte, p *Part) []byte {
	out = append(out, p.MediaType...)
	out = append(out, ";base64,"...)
	out = append(out, p.Data...)
	return append(out, '"')
}

// refusePrefill refuses a Messages request whose last message is the
// assistant's text: Anthropic's prefill, which the answer continues (it
// starts with the word after it). An OpenAI-compatible server given an
// assistant message last starts a new answer instead (OpenAI's do; some
// servers continue only when asked in their own words), which is not
// what the client asked for. Bedrock Converse takes the prefill as
// Anthropic does, and Gemini continues a model turn that comes last.
// An assistant message whose calls await their results is not a prefill.
func (r *Request) refusePrefill() error {
	if r.Client != Messages || len(r.Turns) == 0 {
		return nil
	}
	t := &r.Turns[len(r.Turns)-1]
	if t.Role != RoleAssistant {
		return nil
	}
	text := false
	for i := range t.Parts {
		switch p := &t.Parts[i]; p.Kind {
		case PartToolCall:
			return nil
		case PartText:
			text = text || !isEmptyString(textOr(p.Text))
		}
	}
	if !text {
		return nil
	}
	return refuse(msgPath(t.At), "an assistant message last is a prefill the answer continues; an OpenAI-compatible upstream starts a new answer instead (an Anthropic, Bedrock or Gemini target continues it)")
}
