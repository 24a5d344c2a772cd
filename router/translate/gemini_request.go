package translate

import "bytes"

// EncodeGemini writes r as a Gemini generateContent body (the model and
// the stream choice are the URL's: models/{model}:generateContent or
// :streamGenerateContent?alt=sse). Turns of one role are merged (Gemini's
// roles alternate: user and model); a part that came with a
// thoughtSignature carries it back. What Gemini cannot say is refused with
// the client's field named: an image in a tool result, an image by a URL
// whose type cannot be told, a tool result answering no call. Cache marks,
// the end-user id and strict have no Gemini field and
// are dropped (docs/translation.md); a request that forbids parallel tool
// calls is refused, as Gemini has no way to be held to one.
func EncodeGemini(r *Request) ([]byte, error) {
	out := make([]byte, 0, r.outputSize())
	out = append(out, `{"contents":[`...)
	var err error
	open := Role(0)
	var next []byte               // a Gemini signature for the next part of the open turn
	called := false               // the open turn has a call (only its first needs a signature)
	last, lastSigned := -1, false // the '}' ending the open turn's last part, and whether it has a signature
	for i := range r.Turns {
		t := &r.Turns[i]
		if len(t.Parts) == 0 {
			continue
		}
		if t.Role != open {
			if open != 0 {
				out = append(appendGeminiSigOnly(out, next), "]},"...)
				next, called, last = nil, false, -1
			}
			out = append(out, `{"role":"`...)
			out = append(out, geminiRole(t.Role)...)
			out = append(out, `","parts":[`...)
			open = t.Role
		}
		for j := range t.Parts {
			p := &t.Parts[j]
			if p.Kind == PartThinking {
				switch originOf(p.Signature) {
				case sigGeminiNext: // the signature Gemini gave the part after this one
					out = appendGeminiSigOnly(out, next)
					next = geminiSig(p.Signature)
					continue
				case sigGeminiPrev: // the signature Gemini gave the part before
					if sig := geminiSig(p.Signature); last >= 0 && !lastSigned {
						out = append(out[:last], append([]byte(`,"thoughtSignature":`+string(sig)), out[last:]...)...)
					} else {
						out = appendGeminiSigOnly(out, sig)
					}
					last, lastSigned = len(out)-1, true
					continue
				}
			}
			sig := partSignature(p)
			if p.Kind != PartThinking && next != nil {
				sig, next = next, nil
			}
			if p.Kind == PartToolCall && t.Role == RoleAssistant && sig == nil && !called {
				// Gemini 3 wants the first call of a model turn signed;
				// a history it did not write passes with the value
				// Google documents for one.
				sig = []byte(`"skip_thought_signature_validator"`)
			}
			called = called || p.Kind == PartToolCall
			n := len(out)
			if out, err = appendGeminiPart(out, r, t, p, sig); err != nil {
				return nil, err
			}
			if len(out) > n {
				last, lastSigned = len(out)-1, sig != nil
			}
		}
	}
	if open != 0 {
		out = append(appendGeminiSigOnly(out, next), "]}"...)
	}
	out = append(out, ']')
	if len(r.System) > 0 {
		out = append(key(out, "systemInstruction"), `{"parts":[`...)
		for i := range r.System {
			out = append(comma(out), `{"text":`...)
			out = append(append(out, textOr(r.System[i].Text)...), '}')
		}
		out = append(out, "]}"...)
	}
	if out, err = appendGeminiTools(out, r); err != nil {
		return nil, err
	}
	return append(appendGeminiConfig(out, r), '}'), nil
}

// partSignature is the thoughtSignature a part goes back with: a thought
// part's own Gemini signature, a signature Gemini put on the part itself;
// never one another provider made (nil: none).
func partSignature(p *Part) []byte {
	switch originOf(p.Signature) {
	case sigGemini:
		if sig := geminiSig(p.Signature); !isEmptyString(sig) {
			return sig
		}
	case sigAnthropic:
		if p.Kind != PartThinking {
			return p.Signature // a part's own thoughtSignature
		}
	}
	return nil
}

// appendGeminiSigOnly writes a Gemini signature that had no part after it
// in its turn as the part Gemini gave it on: an empty text (nothing when
// sig is nil).
func appendGeminiSigOnly(out, sig []byte) []byte {
	if sig == nil {
		return out
	}
	return append(appendRaw(append(comma(out), `{"text":""`...), "thoughtSignature", sig), '}')
}

func geminiRole(r Role) string {
	if r == RoleAssistant {
		return "model"
	}
	return "user"
}

// appendGeminiPart writes one part, with the thoughtSignature sig (nil:
// none). A thinking part is a thought part; a redacted one has no Gemini
// form and is left out, as is a thinking part with neither text nor a
// Gemini signature.
func appendGeminiPart(out []byte, r *Request, t *Turn, p *Part, sig []byte) ([]byte, error) {
	var err error
	switch p.Kind {
	case PartText, PartRefusal:
		out = append(append(comma(out), `{"text":`...), textOr(p.Text)...)
	case PartImage, PartDocument:
		if out, err = appendGeminiMedia(comma(out), r, t, p); err != nil {
			return out, err
		}
	case PartToolCall:
		out = append(comma(out), `{"functionCall":{`...)
		if isString(p.ID) && !isEmptyString(p.ID) {
			out = append(append(out, `"id":`...), p.ID...)
		}
		out = append(append(key(out, "name"), p.Name...), `,"args":`...)
		if out, err = appendArgsObject(out, p); err != nil {
			return out, refuse(r.argsPath(t, p), "tool call arguments must be a JSON object")
		}
		out = append(out, '}')
	case PartToolResult:
		if out, err = appendGeminiResult(comma(out), r, t, p); err != nil {
			return out, err
		}
	case PartThinking:
		if isEmptyString(textOr(p.Text)) && sig == nil {
			return out, nil
		}
		out = append(append(comma(out), `{"text":`...), textOr(p.Text)...)
		out = append(out, `,"thought":true`...)
	default:
		return out, nil
	}
	if present(sig) && !isEmptyString(sig) {
		out = appendRaw(out, "thoughtSignature", sig)
	}
	return append(out, '}'), nil
}

// appendGeminiMedia writes an image or PDF: inline as inlineData, by URL
// as fileData (whose mimeType Gemini requires: told by the URL's ending).
func appendGeminiMedia(out []byte, r *Request, t *Turn, p *Part) ([]byte, error) {
	if p.Data != nil {
		out = append(out, `{"inlineData":{"mimeType":`...)
		out = appendInline(out, p.MediaType, p.DataEscaped)
		out = append(out, `,"data":`...)
		return append(appendInline(out, p.Data, p.DataEscaped), '}'), nil
	}
	mt := urlMediaType(p.URL)
	if mt == "" {
		return out, refuse(r.partPath(t, p), "a Gemini upstream takes a file by URL only when the URL ends in .png, .jpg, .jpeg, .gif, .webp or .pdf (or give it inline)")
	}
	out = append(out, `{"fileData":{"mimeType":"`...)
	out = append(out, mt...)
	return append(append(append(out, `","fileUri":`...), p.URL...), '}'), nil
}

// urlMediaType tells a media type from a URL string token's ending ("":
// not one Gemini reads by URL).
func urlMediaType(url []byte) string {
	u := url
	if q := bytes.IndexAny(u, "?#"); q >= 0 {
		u = u[:q]
	}
	u = bytes.ToLower(bytes.TrimSuffix(u, []byte(`"`)))
	for _, e := range [...]struct{ ext, mt string }{
		{".png", "image/png"}, {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"},
		{".gif", "image/gif"}, {".webp", "image/webp"}, {".pdf", "application/pdf"},
	} {
		if bytes.HasSuffix(u, []byte(e.ext)) {
			return e.mt
		}
	}
	return ""
}

// appendGeminiResult writes a tool result as a functionResponse, which
// names the function called (found in the conversation) and holds an
// object: {"result": text}, or {"error": text} when the tool failed.
func appendGeminiResult(out []byte, r *Request, t *Turn, p *Part) ([]byte, error) {
	name := r.callName(p.ID)
	if name == nil {
		return out, refuse(r.partPath(t, p), "a Gemini upstream needs the tool call a result answers in the conversation")
	}
	out = append(out, `{"functionResponse":{`...)
	if isString(p.ID) && !isEmptyString(p.ID) {
		out = append(append(out, `"id":`...), p.ID...)
	}
	out = append(append(key(out, "name"), name...), `,"response":{"`...)
	if p.IsError {
		out = append(out, `error":`...)
	} else {
		out = append(out, `result":`...)
	}
	if p.Content == nil {
		return append(append(out, textOr(p.Text)...), "}}"...), nil
	}
	// Text parts join into one string, newline-separated, their escaped
	// contents copied as they are.
	out = append(out, '"')
	for i := range p.Content {
		c := &p.Content[i]
		if c.Kind != PartText {
			return out, refuse(r.resultPartPath(t, p, c), "a Gemini upstream takes tool results as text (an Anthropic or Bedrock target takes images in them)")
		}
		if i > 0 {
			out = append(out, `\n`...)
		}
		tx := textOr(c.Text)
		out = append(out, tx[1:len(tx)-1]...)
	}
	return append(out, `"}}`...), nil
}
