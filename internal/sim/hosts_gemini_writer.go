package sim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiWriter turns a Messages answer into Gemini's.
type geminiWriter struct {
	hostWriter
	model string
	usage anthropicUsage
	// thoughts is the answer's thoughtsTokenCount (0: none reported).
	thoughts int
	calls    map[int]*geminiCall // tool_use blocks being streamed, by index
	// signs: the request thinks, so the answer carries thoughtSignatures
	// (hosts_thinking.go); summary: it starts with a thought part too.
	signs, summary bool
	// signed is how many signatures the request carried back: the text
	// starts with their SignatureNote.
	signed int
	// noted: the note went out; called: a call went out (and was signed).
	noted, called bool
}

type geminiCall struct {
	id, name string
	args     strings.Builder
}

// geminiFinish are Messages stop reasons as Gemini's finishReason; any
// other (a StopMarker's) is said as it came.
var geminiFinish = map[string]string{"end_turn": "STOP", "tool_use": "STOP", "stop_sequence": "STOP", "max_tokens": "MAX_TOKENS"}

func (g *geminiWriter) WriteHeader(status int) {
	g.status = status
	g.Header().Del("Content-Length")
	g.ResponseWriter.WriteHeader(status)
}

func (g *geminiWriter) Write(p []byte) (int, error) {
	if g.status == 0 {
		g.WriteHeader(http.StatusOK)
	}
	var out []byte
	switch {
	case g.status >= 400:
		out, _ = json.Marshal(googleErrorBody(g.status, anthropicErrorMessage(p)))
	case !g.stream:
		out = g.answer(p)
	default:
		for _, ev := range sseEvents(&g.pending, p) {
			if chunk := g.chunk(ev); chunk != nil {
				out = append(out, "data: "...)
				out = append(out, chunk...)
				out = append(out, "\r\n\r\n"...)
			}
		}
	}
	if _, err := g.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// response is a GenerateContentResponse of parts (finish and usage when
// the answer ends).
func (g *geminiWriter) response(parts []map[string]any, finish string, usage *anthropicUsage) []byte {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	r := map[string]any{"candidates": []any{cand}, "modelVersion": g.model, "responseId": "sim-gemini"}
	if usage != nil {
		prompt := usage.InputTokens + usage.CacheReadInputTokens
		u := map[string]int{"promptTokenCount": prompt, "candidatesTokenCount": usage.OutputTokens, "totalTokenCount": prompt + usage.OutputTokens + g.thoughts}
		if g.thoughts > 0 {
			u["thoughtsTokenCount"] = g.thoughts
		}
		if usage.CacheReadInputTokens > 0 {
			u["cachedContentTokenCount"] = usage.CacheReadInputTokens
		}
		r["usageMetadata"] = u
	}
	out, _ := json.Marshal(r)
	return out
}

func functionCall(id, name string, args json.RawMessage) map[string]any {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": args}}
}

// thoughtPart is the thought summary a request with includeThoughts gets
// first.
func thoughtPart() map[string]any {
	return map[string]any{"text": thoughtText, "thought": true}
}

// text is a piece of the answer's text, the first after the note of the
// signatures the request carried back.
func (g *geminiWriter) text(t string) string {
	if g.signed > 0 && !g.noted {
		g.noted = true
		return SignatureNote(g.signed) + t
	}
	return t
}

// answer is a unary Messages answer as Gemini's.
func (g *geminiWriter) answer(p []byte) []byte {
	var m anthropicMessage
	_ = json.Unmarshal(p, &m)
	var parts []map[string]any
	if g.summary {
		parts = append(parts, thoughtPart())
	}
	lastText := -1
	for _, c := range m.Content {
		if c.Type == "tool_use" {
			call := functionCall(c.ID, c.Name, json.RawMessage(c.Input))
			if g.signs && !g.called {
				call["thoughtSignature"] = thoughtSignature("call", c.Name)
			}
			g.called = true
			parts = append(parts, call)
			continue
		}
		lastText = len(parts)
		parts = append(parts, map[string]any{"text": g.text(c.Text)})
	}
	if g.signs && !g.called && lastText >= 0 {
		parts[lastText]["thoughtSignature"] = thoughtSignature("text", "")
	}
	finish := "STOP"
	if m.StopReason != nil {
		finish = hostWord(geminiFinish, *m.StopReason)
	}
	return g.response(parts, finish, &m.Usage)
}

// chunk is the stream chunk one Messages event stands for (nil: none).
func (g *geminiWriter) chunk(ev anthropicSSE) []byte {
	var e streamedEvent
	_ = json.Unmarshal(ev.data, &e)
	switch e.Type {
	case "message_start":
		g.usage = e.Message.Usage
		if g.summary {
			return g.response([]map[string]any{thoughtPart()}, "", nil)
		}
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			if g.calls == nil {
				g.calls = map[int]*geminiCall{}
			}
			g.calls[e.Index] = &geminiCall{id: e.ContentBlock.ID, name: e.ContentBlock.Name}
		}
	case "content_block_delta":
		if c := g.calls[e.Index]; c != nil {
			c.args.WriteString(e.Delta.PartialJSON)
			return nil
		}
		return g.response([]map[string]any{{"text": g.text(e.Delta.Text)}}, "", nil)
	case "content_block_stop":
		if c := g.calls[e.Index]; c != nil {
			delete(g.calls, e.Index)
			call := functionCall(c.id, c.name, json.RawMessage(c.args.String()))
			if g.signs && !g.called {
				call["thoughtSignature"] = thoughtSignature("call", c.name)
			}
			g.called = true
			return g.response([]map[string]any{call}, "", nil)
		}
	case "message_delta":
		g.usage.OutputTokens = e.Usage.OutputTokens
		last := map[string]any{"text": ""}
		if g.signs && !g.called {
			// A text answer's signature: on an empty last part, as
			// Gemini streams it.
			last["thoughtSignature"] = thoughtSignature("text", "")
		}
		return g.response([]map[string]any{last}, hostWord(geminiFinish, e.Delta.StopReason), &g.usage)
	}
	return nil
}
