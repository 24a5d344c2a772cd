package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Reading a Gemini answer into the neutral model: a GenerateContentResponse
// (the unary body, and each chunk of a stream) with candidates[0]'s parts,
// its finishReason and usageMetadata.

// geminiChunk is what one GenerateContentResponse says.
type geminiChunk struct {
	id, model, parts, finish, blocked []byte
	usage                             Usage
	err                               []byte
}

// readGeminiChunk reads a response or stream chunk.
func readGeminiChunk(b []byte) (c geminiChunk, ok bool) {
	v, valid := jsonscan.Valid(b)
	if !valid || !isObject(v) {
		return c, false
	}
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "candidates":
			cands := jsonscan.ElementsOf(val)
			cand, _ := cands.Next()
			c.parts = jsonscan.Field(jsonscan.Field(cand, "content"), "parts")
			c.finish = jsonscan.Field(cand, "finishReason")
		case "usageMetadata":
			c.usage = geminiUsage(val)
		case "modelVersion":
			c.model = val
		case "responseId":
			c.id = val
		case "promptFeedback":
			c.blocked = jsonscan.Field(val, "blockReason")
		case "error":
			c.err = val
		}
	}
	return c, true
}

// geminiUsage reads usageMetadata: promptTokenCount counts the cached
// tokens too (cachedContentTokenCount), and thoughtsTokenCount is output
// beside candidatesTokenCount.
func geminiUsage(v []byte) Usage {
	var u Usage
	var thoughts int64
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "promptTokenCount":
			u.InputTokens, u.Known = count(val, u.Known)
		case "candidatesTokenCount":
			u.OutputTokens, u.Known = count(val, u.Known)
		case "cachedContentTokenCount":
			u.CacheReadInputTokens, _ = count(val, false)
		case "thoughtsTokenCount":
			thoughts, _ = count(val, false)
		}
	}
	u.OutputTokens += thoughts
	u.ReasoningTokens, u.ReasoningKnown = thoughts, u.Known
	return u
}

// geminiPart reads one part of a candidate's content (Kind 0: one the
// model has no part for, such as executable code, left out).
func geminiPart(b []byte) (Part, error) {
	p := Part{At: -1}
	var thought bool
	m := jsonscan.MembersOf(b)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "text":
			if !isString(v) {
				return p, invalidUpstream("a Gemini text part that is not a string")
			}
			p.Kind, p.Text = PartText, v
		case "thought":
			thought = isTrue(v)
		case "thoughtSignature":
			p.Signature = v
		case "functionCall":
			p.Kind, p.ID, p.Name, p.Args = PartToolCall, jsonscan.Field(v, "id"), jsonscan.Field(v, "name"), jsonscan.Field(v, "args")
			if !isString(p.Name) {
				return p, invalidUpstream("a Gemini functionCall without a name")
			}
		}
	}
	if thought && p.Kind == PartText {
		p.Kind = PartThinking
	}
	return p, nil
}

// geminiFinish is how a Gemini answer stopped: a prompt blocked, or a
// candidate's finishReason; STOP after a function call is a tool call.
func geminiFinish(c *geminiChunk, calls bool) Finish {
	if present(c.blocked) {
		return FinishContentFilter
	}
	f := finishOf(Gemini, c.finish)
	if f == FinishStop && calls {
		return FinishToolCalls
	}
	return f
}

// decodeGeminiAnswer reads a Gemini answer (a 2xx unary body).
func decodeGeminiAnswer(body []byte) (*Reply, error) {
	c, ok := readGeminiChunk(body)
	if !ok {
		return nil, invalidUpstream("a Gemini answer that is not a JSON object")
	}
	if c.parts == nil && c.finish == nil && !present(c.blocked) {
		return nil, invalidUpstream("a Gemini answer without candidates")
	}
	rep := &Reply{ID: c.id, Model: c.model, Usage: c.usage}
	calls := false
	for _, b := range jsonscan.Each(c.parts) {
		p, err := geminiPart(b)
		if err != nil {
			return nil, err
		}
		sig, p := geminiSigned(p)
		if p.Kind == PartThinking && p.Signature == nil {
			p.Signature = unsignedGeminiThought
		}
		if sig.Kind != 0 && p.Kind == PartToolCall {
			rep.Parts = append(rep.Parts, sig) // the call's signature, before it
		}
		if p.Kind != 0 && !(sig.Kind != 0 && p.Kind == PartText && isEmptyString(p.Text)) {
			calls = calls || p.Kind == PartToolCall
			rep.Parts = append(rep.Parts, p)
		}
		if sig.Kind != 0 && p.Kind == PartText {
			rep.Parts = append(rep.Parts, sig) // the text's signature, after it
		}
	}
	rep.Finish = geminiFinish(&c, calls)
	return rep, nil
}
