package sim

import (
	"fmt"
	"net/http"
)

// Anthropic Messages answers: the unary `message` object and the streaming event
// sequence message_start, content_block_start, ping, content_block_delta × chunks,
// content_block_stop, message_delta, message_stop.

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
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
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

type anthropicStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

func (s *Server) serveMessages(x *exchange) {
	n := x.stage.pace.chunks()
	msg := anthropicMessage{
		ID:    fmt.Sprintf("msg_%s_%d", s.name, x.id),
		Type:  "message",
		Role:  "assistant",
		Model: x.model,
		Usage: anthropicUsage{InputTokens: x.promptTokens, OutputTokens: n},
	}
	if !x.req.Stream {
		if !s.generate(x) {
			return
		}
		endTurn := "end_turn"
		msg.Content = []anthropicContent{{Type: "text", Text: replyText(n)}}
		msg.StopReason = &endTurn
		writeJSON(x.w, http.StatusOK, msg)
		return
	}
	zero := 0
	s.stream(x,
		func(e *sseWriter) {
			start := msg
			start.Content = []anthropicContent{}
			start.Usage.OutputTokens = 1
			e.event("message_start", anthropicEvent{Type: "message_start", Message: &start})
			e.event("content_block_start", anthropicEvent{Type: "content_block_start", Index: &zero,
				ContentBlock: &anthropicContent{Type: "text"}})
			e.event("ping", anthropicEvent{Type: "ping"})
		},
		func(e *sseWriter, _ int, text string) {
			e.event("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: &zero,
				Delta: anthropicTextDelta{Type: "text_delta", Text: text}})
		},
		func(e *sseWriter) {
			e.event("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: &zero})
			e.event("message_delta", anthropicEvent{Type: "message_delta",
				Delta: anthropicStopDelta{StopReason: "end_turn"}, Usage: &anthropicUsage{OutputTokens: n}})
			e.event("message_stop", anthropicEvent{Type: "message_stop"})
		})
}

func (s *Server) serveCountTokens(x *exchange) {
	writeJSON(x.w, http.StatusOK, map[string]int{"input_tokens": x.promptTokens})
}
