package translate

// EncodeConverse writes r as a Bedrock Converse request body (the model
// and the stream choice are the URL's: /model/{id}/converse or
// /converse-stream). Tool ids are made valid for Bedrock by ids (the same
// rule as Anthropic's). What Converse cannot say is refused with the
// client's field named: an image by URL (Converse takes bytes), a
// tool_choice of none, a JSON-object output format without a schema.
func EncodeConverse(r *Request, ids *ToolIDs) ([]byte, error) {
	out := make([]byte, 0, r.outputSize())
	out = append(out, `{"messages":[`...)
	var err error
	open := Role(0)
	for i := range r.Turns {
		t := &r.Turns[i]
		if len(t.Parts) == 0 {
			continue
		}
		if t.Role != open { // Converse wants alternating roles: merge
			if open != 0 {
				out = append(out, "]},"...)
			}
			out = append(out, `{"role":"`...)
			out = append(out, converseRole(t.Role)...)
			out = append(out, `","content":[`...)
			open = t.Role
		}
		for j := range t.Parts {
			if out, err = appendConverseBlock(out, r, t, &t.Parts[j], ids); err != nil {
				return nil, err
			}
		}
		if present(t.Cache) {
			out = append(comma(out), `{"cachePoint":{"type":"default"}}`...)
		}
	}
	if open != 0 {
		out = append(out, "]}"...)
	}
	out = append(out, ']')
	if len(r.System) > 0 {
		out = append(key(out, "system"), '[')
		for i := range r.System {
			out = append(comma(out), `{"text":`...)
			out = append(append(out, textOr(r.System[i].Text)...), '}')
			if present(r.System[i].Cache) {
				out = append(out, `,{"cachePoint":{"type":"default"}}`...)
			}
		}
		out = append(out, ']')
	}
	out = appendConverseInference(out, &r.Limits)
	if out, err = appendConverseTools(out, r); err != nil {
		return nil, err
	}
	if out, err = appendConverseOutput(out, r); err != nil {
		return nil, err
	}
	return append(appendConverseAdditional(out, r), '}'), nil
}

func converseRole(r Role) string {
	if r == RoleAssistant {
		return "assistant"
	}
	return "user"
}

// appendConverseBlock writes one part as a Converse content block, and a
// cachePoint block after it when the part is marked.
func appendConverseBlock(out []byte, r *Request, t *Turn, p *Part, ids *ToolIDs) ([]byte, error) {
	if p.Kind == PartThinking && originOf(p.Signature) >= sigGemini && isEmptyString(textOr(p.Text)) {
		return out, nil // only Gemini's signature, which Bedrock cannot check
	}
	out = comma(out)
	var err error
	switch p.Kind {
	case PartText, PartRefusal:
		out = append(append(append(out, `{"text":`...), textOr(p.Text)...), '}')
	case PartImage, PartDocument:
		if out, err = appendConverseMedia(out, r, t, p); err != nil {
			return out, err
		}
	case PartToolCall:
		out = append(out, `{"toolUse":{"toolUseId":`...)
		out = ids.appendAnthropicID(out, p.ID)
		out = append(append(append(out, `,"name":`...), p.Name...), `,"input":`...)
		if out, err = appendArgsObject(out, p); err != nil {
			return out, refuse(r.argsPath(t, p), "tool call arguments must be a JSON object")
		}
		out = append(out, "}}"...)
	case PartToolResult:
		if out, err = appendConverseResult(out, r, t, p, ids); err != nil {
			return out, err
		}
	case PartThinking:
		out = append(out, `{"reasoningContent":{"reasoningText":{"text":`...)
		out = append(out, textOr(p.Text)...)
		if originOf(p.Signature) == sigAnthropic { // not Gemini's: the text goes alone
			out = appendRaw(out, "signature", p.Signature)
		}
		out = append(out, "}}}"...)
	case PartRedactedThinking:
		out = append(out, `{"reasoningContent":{"redactedContent":`...)
		out = append(appendInline(out, p.Data, p.DataEscaped), "}}"...)
	}
	if present(p.Cache) {
		out = append(out, `,{"cachePoint":{"type":"default"}}`...)
	}
	return out, nil
}

// appendConverseMedia writes an inline image (png, jpeg, gif, webp) or PDF
// as Converse's image or document block, its bytes base64 as they came.
func appendConverseMedia(out []byte, r *Request, t *Turn, p *Part) ([]byte, error) {
	if p.Data == nil {
		return out, refuse(r.partPath(t, p), "a Bedrock Converse upstream takes images and documents as inline base64 data, not by URL")
	}
	if p.Kind == PartDocument {
		if string(p.MediaType) != "application/pdf" {
			return out, refuse(r.partPath(t, p), "only a PDF document translates for a Bedrock Converse upstream")
		}
		out = append(out, `{"document":{"format":"pdf","name":"document-`...)
		out = appendInt(out, int64(t.At))
		out = append(out, '-')
		out = appendInt(out, int64(max(p.At, 0)))
		out = append(out, `","source":{"bytes":`...)
		return append(appendInline(out, p.Data, p.DataEscaped), "}}}"...), nil
	}
	sub, ok := mediaSubtype(p.MediaType, "png", "jpeg", "gif", "webp")
	if !ok {
		return out, refuse(r.partPath(t, p), "a Bedrock Converse upstream takes png, jpeg, gif and webp images")
	}
	out = append(out, `{"image":{"format":"`...)
	out = append(out, sub...)
	out = append(out, `","source":{"bytes":`...)
	return append(appendInline(out, p.Data, p.DataEscaped), "}}}"...), nil
}

// appendConverseResult writes a tool result block: its text or its text and
// image parts, and status error when the tool failed.
func appendConverseResult(out []byte, r *Request, t *Turn, p *Part, ids *ToolIDs) ([]byte, error) {
	out = append(out, `{"toolResult":{"toolUseId":`...)
	out = ids.appendAnthropicID(out, p.ID)
	out = append(out, `,"content":[`...)
	switch {
	case p.Content != nil:
		for i := range p.Content {
			c := &p.Content[i]
			out = comma(out)
			if c.Kind == PartImage || c.Kind == PartDocument {
				var err error
				if out, err = appendConverseMedia(out, r, t, c); err != nil {
					return out, err
				}
				continue
			}
			out = append(append(append(out, `{"text":`...), textOr(c.Text)...), '}')
		}
	default:
		out = append(append(append(out, `{"text":`...), textOr(p.Text)...), '}')
	}
	out = append(out, ']')
	if p.IsError {
		out = append(out, `,"status":"error"`...)
	}
	return append(out, "}}"...), nil
}

// appendConverseInference writes inferenceConfig: the output limit, the
// sampling parameters and the stop sequences.
func appendConverseInference(out []byte, l *Limits) []byte {
	if !present(l.MaxTokens) && !present(l.Temperature) && !present(l.TopP) && len(l.Stop) == 0 {
		return out
	}
	out = append(key(out, "inferenceConfig"), '{')
	out = appendRaw(out, "maxTokens", l.MaxTokens)
	out = appendRaw(out, "temperature", l.Temperature)
	out = appendRaw(out, "topP", l.TopP)
	if len(l.Stop) > 0 {
		out = append(key(out, "stopSequences"), '[')
		for _, s := range l.Stop {
			out = append(comma(out), s...)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}
