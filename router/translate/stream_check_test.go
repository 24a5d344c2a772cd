package translate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// testEvent is one server-sent event as a client reads it.
type testEvent struct{ name, data string }

// readEvents parses a complete SSE body independently of the package's own
// decoder: CRLF and CR become LF, events split at blank lines, comment lines
// are skipped, data lines join with LF.
func readEvents(body string) ([]testEvent, error) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	if body != "" && !strings.HasSuffix(body, "\n\n") {
		return nil, fmt.Errorf("stream does not end with a blank line: %q", tail(body))
	}
	var events []testEvent
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var ev testEvent
		var data []string
		for _, line := range strings.Split(block, "\n") {
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "":
			case "event":
				ev.name = value
			case "data":
				data = append(data, value)
			default:
				return nil, fmt.Errorf("unexpected line %q", line)
			}
		}
		if data == nil {
			continue
		}
		ev.data = strings.Join(data, "\n")
		events = append(events, ev)
	}
	return events, nil
}

func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

// toolResult is one tool call as a client assembles it.
type toolResult struct{ ID, Name, Args string }

// streamResult is a stream as a client assembles it, in either format.
type streamResult struct {
	ID, Model, Text string
	Tools           []toolResult
	Stop            string // finish_reason or stop_reason
	Usage           *Usage
	Err             string // the error event's message
	ErrType         string
}

type chunkJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		Logprobs     jsonRaw `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
		StopReason   *string `json:"stop_reason"` // the matched stop sequence, as vLLM says it
	} `json:"choices"`
	Usage *oUsage `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// checkChatStream holds an OpenAI chunk stream to what the SDKs accept and
// assembles it. strict also forbids members OpenAI does not send (for our
// own output; upstream fixtures have extras such as x_groq).
func checkChatStream(body string, strict bool) (streamResult, error) {
	var r streamResult
	events, err := readEvents(body)
	if err != nil {
		return r, err
	}
	byIndex := map[int]int{}
	for i, ev := range events {
		last := i == len(events)-1
		if ev.name != "" && strict {
			return r, fmt.Errorf("event %d: OpenAI events have no name, got %q", i, ev.name)
		}
		if ev.data == "[DONE]" {
			if !last {
				return r, fmt.Errorf("event %d: [DONE] before the end", i)
			}
			if r.Stop == "" {
				return r, fmt.Errorf("[DONE] without a finish_reason")
			}
			if err := completeArgs(r.Tools); err != nil {
				return r, err
			}
			continue
		}
		var c chunkJSON
		if strict {
			err = strictDecode([]byte(ev.data), &c)
		} else {
			err = json.Unmarshal([]byte(ev.data), &c)
		}
		if err != nil {
			return r, fmt.Errorf("event %d: %v: %s", i, err, ev.data)
		}
		if c.Error != nil {
			if !last || c.Error.Message == "" || c.Error.Type == "" {
				return r, fmt.Errorf("event %d: error chunk %s must be last and carry message and type", i, ev.data)
			}
			if strict && (!strings.Contains(ev.data, `"param":`) || !strings.Contains(ev.data, `"code":`)) {
				return r, fmt.Errorf("event %d: error without param or code", i)
			}
			r.Err, r.ErrType = c.Error.Message, c.Error.Type
			continue
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.Model == "" {
			return r, fmt.Errorf("event %d: chunk header %s", i, ev.data)
		}
		if r.ID == "" {
			r.ID, r.Model = c.ID, c.Model
			if strict && (len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant") {
				return r, fmt.Errorf("the first chunk must give the assistant role: %s", ev.data)
			}
		} else if c.ID != r.ID || c.Model != r.Model {
			return r, fmt.Errorf("event %d: id or model changed: %s", i, ev.data)
		}
		if c.Usage != nil {
			if strict && len(c.Choices) != 0 {
				return r, fmt.Errorf("event %d: usage outside the usage-only chunk", i)
			}
			r.Usage = &Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens, Known: true}
			if c.Usage.PromptTokensDetails != nil {
				r.Usage.CacheReadInputTokens = c.Usage.PromptTokensDetails.CachedTokens
			}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				return r, fmt.Errorf("event %d: choice index %d", i, ch.Index)
			}
			d := ch.Delta
			if d.Content != nil {
				r.Text += *d.Content
			}
			for j, tc := range d.ToolCalls {
				idx := j
				if tc.Index != nil {
					idx = *tc.Index
				} else if strict {
					return r, fmt.Errorf("event %d: tool call delta without index", i)
				}
				n, seen := byIndex[idx]
				if !seen {
					if tc.ID == "" || tc.Function.Name == "" || (strict && tc.Type != "function") {
						return r, fmt.Errorf("event %d: first delta of tool call %d lacks id, type or name: %s", i, idx, ev.data)
					}
					n = len(r.Tools)
					byIndex[idx] = n
					r.Tools = append(r.Tools, toolResult{ID: tc.ID, Name: tc.Function.Name})
				} else if strict && (tc.ID != "" || tc.Function.Name != "") {
					return r, fmt.Errorf("event %d: tool call %d named again", i, idx)
				}
				if tc.Function.Arguments != nil {
					r.Tools[n].Args += *tc.Function.Arguments
				}
			}
			if ch.FinishReason != nil {
				if r.Stop != "" || !finishReasons[*ch.FinishReason] {
					return r, fmt.Errorf("event %d: finish_reason %q (already %q)", i, *ch.FinishReason, r.Stop)
				}
				r.Stop = *ch.FinishReason
			}
		}
	}
	return r, nil
}

type eventJSON struct {
	Type    string `json:"type"`
	Message *struct {
		ID           string  `json:"id"`
		Type         string  `json:"type"`
		Role         string  `json:"role"`
		Model        string  `json:"model"`
		Content      []any   `json:"content"`
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
		Usage        aUsage  `json:"usage"`
	} `json:"message"`
	Index        *int `json:"index"`
	ContentBlock *struct {
		Type  string  `json:"type"`
		Text  *string `json:"text"`
		ID    string  `json:"id"`
		Name  string  `json:"name"`
		Input jsonRaw `json:"input"`
		// A thinking block's (both start empty).
		Thinking  *string `json:"thinking"`
		Signature *string `json:"signature"`
	} `json:"content_block"`
	Delta *struct {
		Type         string  `json:"type"`
		Text         string  `json:"text"`
		Thinking     string  `json:"thinking"`
		Signature    string  `json:"signature"`
		PartialJSON  string  `json:"partial_json"`
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *aUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkMessagesStream holds an Anthropic event stream to the documented event
// flow and assembles it: message_start first; blocks started in index order,
// their deltas while open, each stopped; one message_delta; message_stop
// last; or an error event last.
func checkMessagesStream(body string, strict bool) (streamResult, error) {
	var r streamResult
	events, err := readEvents(body)
	if err != nil {
		return r, err
	}
	type blockState struct {
		kind    string
		tool    int
		stopped bool
	}
	var blocks []blockState
	sawDelta := false
	for i, ev := range events {
		last := i == len(events)-1
		var e eventJSON
		if strict {
			err = strictDecode([]byte(ev.data), &e)
		} else {
			err = json.Unmarshal([]byte(ev.data), &e)
		}
		if err != nil {
			return r, fmt.Errorf("event %d (%s): %v: %s", i, ev.name, err, ev.data)
		}
		if ev.name != e.Type {
			return r, fmt.Errorf("event %d: name %q but type %q", i, ev.name, e.Type)
		}
		if e.Type == "error" {
			if !last || e.Error == nil || !isAnthropicErrorType([]byte(e.Error.Type)) || e.Error.Message == "" {
				return r, fmt.Errorf("event %d: error event %s must be last and well formed", i, ev.data)
			}
			r.Err, r.ErrType = e.Error.Message, e.Error.Type
			continue
		}
		if (i == 0) != (e.Type == "message_start") {
			return r, fmt.Errorf("event %d: %s; message_start must come first, once", i, e.Type)
		}
		switch e.Type {
		case "message_start":
			m := e.Message
			if m == nil || m.ID == "" || m.Type != "message" || m.Role != "assistant" || m.Model == "" || m.Content == nil {
				return r, fmt.Errorf("message_start: %s", ev.data)
			}
			r.ID, r.Model = m.ID, m.Model
			r.Usage = &Usage{InputTokens: m.Usage.InputTokens + m.Usage.CacheReadInputTokens + m.Usage.CacheCreationInputTokens,
				OutputTokens: m.Usage.OutputTokens, CacheReadInputTokens: m.Usage.CacheReadInputTokens,
				CacheCreationInputTokens: m.Usage.CacheCreationInputTokens, Known: true}
		case "ping":
		case "content_block_start":
			if e.Index == nil || *e.Index != len(blocks) || e.ContentBlock == nil {
				return r, fmt.Errorf("event %d: block start out of order: %s", i, ev.data)
			}
			for _, b := range blocks {
				if !b.stopped && strict {
					return r, fmt.Errorf("event %d: a block starts while another is open", i)
				}
			}
			cb := e.ContentBlock
			bs := blockState{kind: cb.Type, tool: -1}
			switch cb.Type {
			case "text":
				if cb.Text == nil {
					return r, fmt.Errorf("event %d: text block without text", i)
				}
				r.Text += *cb.Text
			case "tool_use":
				if cb.ID == "" || cb.Name == "" || !isObjectJSON(cb.Input) {
					return r, fmt.Errorf("event %d: tool_use block %s", i, ev.data)
				}
				bs.tool = len(r.Tools)
				r.Tools = append(r.Tools, toolResult{ID: cb.ID, Name: cb.Name})
			case "thinking":
			default:
				if strict {
					return r, fmt.Errorf("event %d: block type %q", i, cb.Type)
				}
			}
			blocks = append(blocks, bs)
		case "content_block_delta":
			if e.Index == nil || *e.Index >= len(blocks) || e.Delta == nil {
				return r, fmt.Errorf("event %d: delta for no block: %s", i, ev.data)
			}
			b := blocks[*e.Index]
			if b.stopped && strict {
				return r, fmt.Errorf("event %d: delta after its block stopped", i)
			}
			switch e.Delta.Type {
			case "text_delta":
				if b.kind != "text" {
					return r, fmt.Errorf("event %d: text_delta in a %s block", i, b.kind)
				}
				r.Text += e.Delta.Text
			case "input_json_delta":
				if b.kind != "tool_use" {
					return r, fmt.Errorf("event %d: input_json_delta in a %s block", i, b.kind)
				}
				r.Tools[b.tool].Args += e.Delta.PartialJSON
			}
		case "content_block_stop":
			if e.Index == nil || *e.Index >= len(blocks) || blocks[*e.Index].stopped {
				return r, fmt.Errorf("event %d: stop for no open block", i)
			}
			blocks[*e.Index].stopped = true
		case "message_delta":
			if sawDelta || e.Delta == nil || e.Delta.StopReason == nil || e.Usage == nil {
				return r, fmt.Errorf("event %d: message_delta %s", i, ev.data)
			}
			sawDelta = true
			r.Stop = *e.Delta.StopReason
			if !stopReasons[r.Stop] {
				return r, fmt.Errorf("event %d: stop_reason %q", i, r.Stop)
			}
			u := e.Usage
			r.Usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 || u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
				r.Usage.InputTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
				r.Usage.CacheReadInputTokens = u.CacheReadInputTokens
				r.Usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
		case "message_stop":
			if !last || !sawDelta {
				return r, fmt.Errorf("event %d: message_stop must follow message_delta and end the stream", i)
			}
			for j, b := range blocks {
				if !b.stopped {
					return r, fmt.Errorf("block %d never stopped", j)
				}
			}
			if r.Stop != "max_tokens" {
				if err := completeArgs(r.Tools); err != nil {
					return r, err
				}
			}
		default:
			if strict {
				return r, fmt.Errorf("event %d: type %q", i, e.Type)
			}
		}
	}
	return r, nil
}

// completeArgs checks that every assembled tool call's arguments are a JSON
// object (empty counts as {}), as a client parsing them at the end needs.
func completeArgs(tools []toolResult) error {
	for _, tc := range tools {
		if tc.Args != "" && !isObjectJSON([]byte(tc.Args)) {
			return fmt.Errorf("tool call %s: assembled arguments %q are not a JSON object", tc.ID, tc.Args)
		}
	}
	return nil
}
