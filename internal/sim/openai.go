package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
)

// OpenAI Chat Completions, Responses and Embeddings answers. Only the fields clients
// and the gateway read are produced; their names and nesting follow the real API.

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   chatUsage    `json:"usage"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type chatMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

// MarshalJSON writes content null beside tool calls, as the API does.
func (m chatMessage) MarshalJSON() ([]byte, error) {
	type plain chatMessage
	if len(m.ToolCalls) == 0 {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		ToolCalls []chatToolCall `json:"tool_calls"`
	}{m.Role, nil, m.ToolCalls})
}

// chatToolCall is a whole call (a completion) or a piece of one (a chunk's
// delta, where index says which call, and id, type and name come only first).
type chatToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatUsage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails *tokenDetails `json:"prompt_tokens_details,omitempty"`
}

// tokenDetails says how many of the prompt's tokens a PromptCache answered
// from; nil without one.
type tokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func (x *exchange) cacheDetails() *tokenDetails {
	if x.cachedTokens == 0 {
		return nil
	}
	return &tokenDetails{CachedTokens: x.cachedTokens}
}

type chatChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []chatChunkChoice `json:"choices"`
	Usage   *chatUsage        `json:"usage,omitempty"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type chatDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

func (s *Server) serveChat(x *exchange) {
	a := plan(&x.req, s.parallelTools)
	n, _ := a.stopAt(x.stage.pace.chunks()) // OpenAI says "stop" for a stop sequence too
	steps, out := a.steps(n), a.outputTokens(n)
	id := fmt.Sprintf("chatcmpl-%s-%d", s.name, x.id)
	usage := chatUsage{PromptTokens: x.promptTokens, CompletionTokens: out, TotalTokens: x.promptTokens + out,
		PromptTokensDetails: x.cacheDetails()}
	finish := "stop"
	if len(a.calls) > 0 {
		finish = "tool_calls"
	}
	if a.stop != "" {
		finish = a.stop
	}
	if !x.req.Stream {
		if !s.generate(x, steps) {
			return
		}
		msg := chatMessage{Role: "assistant", Content: a.text(n)}
		if len(a.calls) > 0 {
			msg.Content = ""
			for i, c := range a.calls {
				msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: callID("call_", x.id, i), Type: "function",
					Function: chatFunction{Name: c.name, Arguments: c.args}})
			}
		}
		writeJSON(x.w, http.StatusOK, chatCompletion{
			ID: id, Object: "chat.completion", Created: x.created, Model: x.model,
			Choices: []chatChoice{{Message: msg, FinishReason: finish}},
			Usage:   usage,
		})
		return
	}
	chunk := func(d chatDelta, finish *string) chatChunk {
		return chatChunk{
			ID: id, Object: "chat.completion.chunk", Created: x.created, Model: x.model,
			Choices: []chatChunkChoice{{Delta: d, FinishReason: finish}},
		}
	}
	empty := ""
	s.stream(x, steps,
		func(e *sseWriter) {
			if len(a.calls) > 0 {
				e.event("", chunk(chatDelta{Role: "assistant"}, nil))
				return
			}
			e.event("", chunk(chatDelta{Role: "assistant", Content: &empty}, nil))
		},
		func(e *sseWriter, i int) {
			if len(a.calls) == 0 {
				text := a.chunk(i)
				e.event("", chunk(chatDelta{Content: &text}, nil))
				return
			}
			// Each call in two steps: its header with the first half of the
			// arguments, then the rest.
			k, c := i/2, a.calls[i/2]
			tc := chatToolCall{Index: &k, Function: chatFunction{Arguments: argPieces(c.args)[i%2]}}
			if i%2 == 0 {
				tc.ID, tc.Type, tc.Function.Name = callID("call_", x.id, k), "function", c.name
			}
			e.event("", chunk(chatDelta{ToolCalls: []chatToolCall{tc}}, nil))
		},
		func(e *sseWriter) {
			e.event("", chunk(chatDelta{}, &finish))
			if x.req.StreamOptions != nil && x.req.StreamOptions.IncludeUsage {
				last := chunk(chatDelta{}, nil)
				last.Choices = []chatChunkChoice{}
				last.Usage = &usage
				e.event("", last)
			}
			e.data([]byte("[DONE]"))
		})
}

// Responses API objects are built as maps: they are nested deeply, read rarely, and
// not on the benchmark's path.

func (s *Server) serveResponses(x *exchange) {
	n := x.stage.pace.chunks()
	respID := fmt.Sprintf("resp_%s_%d", s.name, x.id)
	msgID := fmt.Sprintf("msg_%s_%d", s.name, x.id)
	usage := map[string]any{"input_tokens": x.promptTokens, "output_tokens": n, "total_tokens": x.promptTokens + n}
	if d := x.cacheDetails(); d != nil {
		usage["input_tokens_details"] = d
	}
	textPart := func(text string) map[string]any {
		return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	}
	message := func(status string, content ...any) map[string]any {
		return map[string]any{"id": msgID, "type": "message", "status": status, "role": "assistant", "content": append([]any{}, content...)}
	}
	response := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id": respID, "object": "response", "created_at": x.created, "status": status,
			"model": x.model, "output": output, "usage": usage,
		}
	}
	full := answer{}.text(n)
	if !x.req.Stream {
		if !s.generate(x, n) {
			return
		}
		writeJSON(x.w, http.StatusOK, response("completed", []any{message("completed", textPart(full))}, usage))
		return
	}
	seq := 0
	ev := func(e *sseWriter, typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	part := map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range part {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	s.stream(x, n,
		func(e *sseWriter) {
			ev(e, "response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
			ev(e, "response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})
			ev(e, "response.output_item.added", map[string]any{"output_index": 0, "item": message("in_progress")})
			ev(e, "response.content_part.added", with(map[string]any{"part": textPart("")}))
		},
		func(e *sseWriter, i int) {
			ev(e, "response.output_text.delta", with(map[string]any{"delta": chunkText(i)}))
		},
		func(e *sseWriter) {
			ev(e, "response.output_text.done", with(map[string]any{"text": full}))
			ev(e, "response.content_part.done", with(map[string]any{"part": textPart(full)}))
			ev(e, "response.output_item.done", map[string]any{"output_index": 0, "item": message("completed", textPart(full))})
			ev(e, "response.completed", map[string]any{"response": response("completed", []any{message("completed", textPart(full))}, usage)})
		})
}

// embeddingDims is the length of every simulated embedding: enough to look like a
// vector, small enough to be cheap.
const embeddingDims = 8

func checkEmbeddings(r *request) *apiError {
	if _, ok := countInputs(r.Input); ok {
		return nil
	}
	e := errorFor(http.StatusBadRequest, "'input' is a required property and must be a string or an array.")
	e.param = "input"
	return &e
}

func (s *Server) serveEmbeddings(x *exchange) {
	inputs, _ := countInputs(x.req.Input)
	type embedding struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"` // []float64, or a base64 string of float32s
	}
	data := make([]embedding, inputs)
	for i := range data {
		v := make([]float64, embeddingDims)
		for j := range v {
			// Deterministic and different per input; never derived from the input text.
			v[j] = math.Round(math.Sin(float64(i*embeddingDims+j+1))*1e6) / 1e6
		}
		data[i] = embedding{Object: "embedding", Index: i, Embedding: v}
		if x.req.EncodingFormat == "base64" {
			raw := make([]byte, 0, 4*len(v))
			for _, f := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(f)))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(raw)
		}
	}
	writeJSON(x.w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  x.model,
		"usage":  map[string]any{"prompt_tokens": x.promptTokens, "total_tokens": x.promptTokens},
	})
}

// countInputs counts the inputs of an embeddings request the way the API reads them:
// a string or an array of tokens is one input; an array of strings or of token arrays
// is one input per element.
func countInputs(raw json.RawMessage) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	switch raw[0] {
	case '"':
		return 1, true
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
			return 0, false
		}
		if first := bytes.TrimSpace(items[0]); len(first) > 0 && (first[0] == '"' || first[0] == '[') {
			return len(items), true
		}
		return 1, true
	}
	return 0, false
}
