package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Anthropic Messages answers: the unary `message` object and the streaming event
// sequence message_start, ping, then per content block content_block_start,
// content_block_delta × pieces, content_block_stop, and message_delta,
// message_stop. A text answer is one text block streamed in chunks; a tool
// answer is one tool_use block per call, its input in two input_json_delta
// pieces.

type anthropicMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []anthropicContent `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsage     `json:"usage"`
}

type anthropicContent struct {
	Type  string  `json:"type"`
	Text  string  `json:"text"`
	ID    string  `json:"id,omitempty"`
	Name  string  `json:"name,omitempty"`
	Input rawJSON `json:"input,omitempty"`
}

// MarshalJSON writes each block type with its own members only: a text block
// always has text (the SDKs append deltas to it), a tool_use block never.
func (c anthropicContent) MarshalJSON() ([]byte, error) {
	if c.Type == "tool_use" {
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{c.Type, c.ID, c.Name, json.RawMessage(c.Input)})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{c.Type, c.Text})
}

// rawJSON is JSON kept as it is, in a comparable type.
type rawJSON string

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = rawJSON(b)
	return nil
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens,omitempty"` // message_delta carries output_tokens only, as the API's does
	OutputTokens int `json:"output_tokens"`
	// CacheReadInputTokens are the prompt's tokens read from a PromptCache,
	// counted apart from InputTokens, as the API does.
	CacheReadInputTokens int `json:"cache_read_input_tokens,omitempty"`
}

type anthropicEvent struct {
	Type         string            `json:"type"`
	Message      *anthropicMessage `json:"message,omitempty"`
	Index        *int              `json:"index,omitempty"`
	ContentBlock *anthropicContent `json:"content_block,omitempty"`
	Delta        any               `json:"delta,omitempty"`
	Usage        *anthropicUsage   `json:"usage,omitempty"`
}

type anthropicTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type anthropicStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

func (s *Server) serveMessages(x *exchange) {
	a := plan(&x.req, s.parallelTools)
	n, matched := a.stopAt(x.stage.pace.chunks())
	steps, out := a.steps(n), a.outputTokens(n)
	msg := anthropicMessage{
		ID:    fmt.Sprintf("msg_%s_%d", s.name, x.id),
		Type:  "message",
		Role:  "assistant",
		Model: x.model,
		Usage: anthropicUsage{InputTokens: x.promptTokens - x.cachedTokens, OutputTokens: out, CacheReadInputTokens: x.cachedTokens},
	}
	stop := "end_turn"
	if len(a.calls) > 0 {
		stop = "tool_use"
	}
	var seq *string
	if matched != "" {
		stop, seq = "stop_sequence", &matched
	}
	if a.stop != "" {
		stop = a.stop
	}
	toolUse := func(i int, input string) anthropicContent {
		return anthropicContent{Type: "tool_use", ID: callID("toolu_", x.id, i), Name: a.calls[i].name, Input: rawJSON(input)}
	}
	if !x.req.Stream {
		if !s.generate(x, steps) {
			return
		}
		msg.Content = []anthropicContent{{Type: "text", Text: a.text(n)}}
		if len(a.calls) > 0 {
			msg.Content = msg.Content[:0]
			for i, c := range a.calls {
				msg.Content = append(msg.Content, toolUse(i, c.args))
			}
		}
		msg.StopReason, msg.StopSequence = &stop, seq
		writeJSON(x.w, http.StatusOK, msg)
		return
	}
	index := func(i int) *int { return &i }
	s.stream(x, steps,
		func(e *sseWriter) {
			start := msg
			start.Content = []anthropicContent{}
			start.Usage.OutputTokens = 1
			e.event("message_start", anthropicEvent{Type: "message_start", Message: &start})
			if len(a.calls) == 0 {
				e.event("content_block_start", anthropicEvent{Type: "content_block_start", Index: index(0),
					ContentBlock: &anthropicContent{Type: "text"}})
			}
			e.event("ping", anthropicEvent{Type: "ping"})
		},
		func(e *sseWriter, i int) {
			if len(a.calls) == 0 {
				e.event("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: index(0),
					Delta: anthropicTextDelta{Type: "text_delta", Text: a.chunk(i)}})
				return
			}
			// Each call's block in two steps: started with the first half of
			// its input, stopped after the rest.
			k := i / 2
			if i%2 == 0 {
				block := toolUse(k, "{}")
				e.event("content_block_start", anthropicEvent{Type: "content_block_start", Index: index(k), ContentBlock: &block})
			}
			e.event("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: index(k),
				Delta: anthropicJSONDelta{Type: "input_json_delta", PartialJSON: argPieces(a.calls[k].args)[i%2]}})
			if i%2 == 1 {
				e.event("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: index(k)})
			}
		},
		func(e *sseWriter) {
			if len(a.calls) == 0 {
				e.event("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: index(0)})
			}
			e.event("message_delta", anthropicEvent{Type: "message_delta",
				Delta: anthropicStopDelta{StopReason: stop, StopSequence: seq}, Usage: &anthropicUsage{OutputTokens: out}})
			e.event("message_stop", anthropicEvent{Type: "message_stop"})
		})
}

func (s *Server) serveCountTokens(x *exchange) {
	writeJSON(x.w, http.StatusOK, map[string]int{"input_tokens": x.promptTokens})
}
