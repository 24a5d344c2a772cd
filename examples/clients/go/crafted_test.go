package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The crafted upstreams: loopback fakes of an Anthropic-format and an
// OpenAI-compatible provider that answer what a real one can answer and a
// simulation does not (ids in vLLM's Kimi K2 format, interleaved parallel
// calls, refusals, cache writes, a matched stop sequence, malformed
// chunks), chosen by a marker in the request's text, [scenario:NAME]. Both
// hold requests to their API's own rules the way the real providers do
// (the Anthropic one refuses invalid tool ids, temperature with top_p, a
// thinking conversation whose last tool turn has no thinking block, an
// input_schema that is not an object schema), so a test's next turn fails
// where a real provider's would. Scenario "echo" answers with the body the
// provider received, for tests that check what crossed over.

const (
	craftedAnthropicModel = "claude-sonnet-4-5-20250929" // what the Anthropic fake says answered
	craftedOpenAIModel    = "kimi-k2-instruct-0905"      // what the OpenAI fake says answered
)

// startCrafted serves both fakes on loopback until the test ends and
// returns their API bases (".../v1").
func startCrafted(t *testing.T) (anthropicURL, openaiURL string) {
	t.Helper()
	a := httptest.NewServer(http.HandlerFunc(craftedAnthropic))
	o := httptest.NewServer(http.HandlerFunc(craftedOpenAI))
	t.Cleanup(a.Close)
	t.Cleanup(o.Close)
	return a.URL + "/v1", o.URL + "/v1"
}

var scenarioMarker = regexp.MustCompile(`\[scenario:([a-z_]+)\]`)

// scenario is the last marker in the request body ("" for none).
func scenario(body []byte) string {
	m := scenarioMarker.FindAllSubmatch(body, -1)
	if len(m) == 0 {
		return ""
	}
	return string(m[len(m)-1][1])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sseWriter writes server-sent events.
type sseWriter struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	return sseWriter{w}
}

func (s sseWriter) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s sseWriter) raw(data string) {
	fmt.Fprintf(s.w, "data: %s\n\n", data)
}

// anthropicRequest is what the Anthropic fake reads of a request.
type anthropicRequest struct {
	Stream      bool     `json:"stream"`
	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	Thinking    *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	OutputConfig *struct {
		Format *struct{ Type string } `json:"format"`
	} `json:"output_config"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type anthropicBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

var anthropicToolID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// anthropicRules refuses what Anthropic's API refuses ("" when the request
// is acceptable), with its own wording where it matters.
func anthropicRules(r *anthropicRequest) string {
	if r.Temperature != nil && r.TopP != nil {
		return "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
	}
	for i, tool := range r.Tools {
		var schema struct{ Type string }
		if json.Unmarshal(tool.InputSchema, &schema) != nil || schema.Type != "object" {
			return fmt.Sprintf("tools.%d.custom.input_schema.type: Field required", i)
		}
	}
	lastTools := -1 // the last assistant turn with tool_use
	for i, m := range r.Messages {
		var blocks []anthropicBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		ids := map[string]bool{}
		for j, b := range blocks {
			id := b.ID + b.ToolUseID
			if (b.Type == "tool_use" || b.Type == "tool_result") && !anthropicToolID.MatchString(id) {
				return fmt.Sprintf("messages.%d.content.%d.%s.id: String should match pattern '^[a-zA-Z0-9_-]+$'", i, j, b.Type)
			}
			if b.Type == "tool_use" {
				if ids[b.ID] {
					return fmt.Sprintf("messages.%d.content.%d: `tool_use` ids must be unique", i, j)
				}
				ids[b.ID], lastTools = true, i
			}
		}
	}
	if r.Thinking != nil && r.Thinking.Type == "enabled" && lastTools >= 0 {
		var blocks []anthropicBlock
		_ = json.Unmarshal(r.Messages[lastTools].Content, &blocks)
		if blocks[0].Type != "thinking" && blocks[0].Type != "redacted_thinking" {
			return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", lastTools, blocks[0].Type)
		}
	}
	return ""
}

func craftedAnthropic(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var r anthropicRequest
	if err := json.Unmarshal(body, &r); err != nil {
		writeJSON(w, 400, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": "body is not JSON"}})
		return
	}
	if msg := anthropicRules(&r); msg != "" {
		writeJSON(w, 400, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
		return
	}
	text, stop, stopSeq := "ok", "end_turn", any(nil)
	var tool map[string]any // a tool_use block to answer with
	usage := map[string]any{"input_tokens": 20, "output_tokens": 5}
	switch scenario(body) {
	case "echo":
		text = string(body)
	case "tool_no_args":
		tool, stop = map[string]any{"type": "tool_use", "id": "toolu_01noargs", "name": "get_time", "input": map[string]any{}}, "tool_use"
	case "bad_input":
		tool, stop = map[string]any{"type": "tool_use", "id": "toolu_01bad", "name": "get_time", "input": "notobj"}, "tool_use"
	case "refusal":
		text, stop = "I can't help with that.", "refusal"
	case "cache_write":
		usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"] = 1000, 0
	case "stop_sequence":
		text, stop, stopSeq = "1, 2, 3", "stop_sequence", "END"
	case "json":
		text = "four"
		if r.OutputConfig != nil && r.OutputConfig.Format != nil && r.OutputConfig.Format.Type == "json_schema" {
			text = `{"answer":4}`
		}
	}
	content := []any{map[string]any{"type": "text", "text": text}}
	if tool != nil {
		content = []any{tool}
	}
	msg := map[string]any{"id": "msg_crafted", "type": "message", "role": "assistant", "model": craftedAnthropicModel,
		"content": content, "stop_reason": stop, "stop_sequence": stopSeq, "usage": usage}
	if !r.Stream {
		writeJSON(w, 200, msg)
		return
	}
	s := newSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"], start["stop_sequence"] = []any{}, nil, nil
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	if tool != nil {
		// A tool without input: its block opens and closes with no delta.
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": tool})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": stopSeq}, "usage": usage})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// openaiRequest is what the OpenAI fake reads of a request.
type openaiRequest struct {
	Stream         bool `json:"stream"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Tools []struct {
		Function struct{ Name string } `json:"function"`
	} `json:"tools"`
	Messages []struct{ Role string } `json:"messages"`
}

func craftedOpenAI(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var r openaiRequest
	if err := json.Unmarshal(body, &r); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "body is not JSON"}})
		return
	}
	msg := map[string]any{"role": "assistant", "content": "ok"}
	finish, extra := "stop", map[string]any{}
	var calls []map[string]any
	call := func(id, name, args string) map[string]any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	}
	sc := scenario(body)
	switch sc {
	case "":
		// Like a model with tools: call the first one, then answer once
		// its result is in.
		if len(r.Tools) > 0 && len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role != "tool" {
			calls, finish = []map[string]any{call("call_crafted_0", r.Tools[0].Function.Name, `{"city":"Paris"}`)}, "tool_calls"
		}
	case "echo":
		msg["content"] = string(body)
	case "kimi_ids":
		calls, finish = []map[string]any{call("functions.get_weather:0", "get_weather", `{"city":"Paris"}`)}, "tool_calls"
	case "parallel_interleaved":
		calls, finish = []map[string]any{call("call_a", "get_weather", `{"city":"Paris"}`), call("call_b", "get_weather", `{"city":"Rome"}`)}, "tool_calls"
	case "refusal":
		msg["content"], msg["refusal"] = nil, "I'm sorry, I can't help with that."
	case "stop_sequence":
		msg["content"], extra["stop_reason"] = "1, 2, 3", "END" // vLLM says which stop string matched
	case "json":
		msg["content"] = "four"
		if r.ResponseFormat != nil && r.ResponseFormat.Type == "json_schema" {
			msg["content"] = `{"answer":4}`
		}
	}
	if calls != nil {
		msg["content"], msg["tool_calls"] = nil, calls
	}
	usage := map[string]any{"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
	if !r.Stream {
		choice := map[string]any{"index": 0, "message": msg, "finish_reason": finish}
		for k, v := range extra {
			choice[k] = v
		}
		writeJSON(w, 200, map[string]any{"id": "chatcmpl-crafted", "object": "chat.completion", "created": 1700000000,
			"model": craftedOpenAIModel, "choices": []any{choice}, "usage": usage})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": finish}
		if finish != nil {
			for k, v := range extra {
				choice[k] = v
			}
		}
		return map[string]any{"id": "chatcmpl-crafted", "object": "chat.completion.chunk", "created": 1700000000,
			"model": craftedOpenAIModel, "choices": []any{choice}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	switch {
	case sc == "malformed":
		// A chunk whose content is not text, in a stream that otherwise
		// ends cleanly: dropping it would pass the answer off as whole.
		s.event("", chunk(map[string]any{"content": "a"}, nil))
		s.event("", chunk(map[string]any{"content": 12}, nil))
	case sc == "parallel_interleaved":
		// Both headers first, then each call's arguments in turn, as some
		// OpenAI-compatible servers stream parallel calls.
		for k, c := range calls {
			fn := c["function"].(map[string]any)
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "id": c["id"], "type": "function",
				"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil))
		}
		for _, half := range []int{0, 1} {
			for k, c := range calls {
				args := c["function"].(map[string]any)["arguments"].(string)
				piece := args[:len(args)/2]
				if half == 1 {
					piece = args[len(args)/2:]
				}
				s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "function": map[string]any{"arguments": piece}}}}, nil))
			}
		}
	case calls != nil:
		for k, c := range calls {
			c["index"] = k
			s.event("", chunk(map[string]any{"tool_calls": []any{c}}, nil))
		}
	case msg["refusal"] != nil:
		s.event("", chunk(map[string]any{"refusal": msg["refusal"]}, nil))
	default:
		s.event("", chunk(map[string]any{"content": msg["content"]}, nil))
	}
	s.event("", chunk(map[string]any{}, finish))
	s.event("", map[string]any{"id": "chatcmpl-crafted", "object": "chat.completion.chunk", "created": 1700000000,
		"model": craftedOpenAIModel, "choices": []any{}, "usage": usage})
	s.raw("[DONE]")
}

// craftedConfig is the providers and targets of the crafted upstreams: one
// model served by both (mixed, the test picks the target of each turn with
// the order header), one by each alone.
func craftedConfig(anthropicURL, openaiURL string) (providers, targets string) {
	providers = fmt.Sprintf(`  crafted-anthropic: {kind: anthropic, base_url: %q, circuit_breaker: {failures: 1000}}
  crafted-openai:    {kind: openai,    base_url: %q, responses: false, circuit_breaker: {failures: 1000}}
`, anthropicURL, openaiURL)
	targets = strings.Join([]string{
		fmt.Sprintf("  - {virtual_key: crafted-anthropic, model_map: {%s: claude-sonnet-4-5, %s: claude-sonnet-4-5}}", mixedModel, craftedAnthropicOnly),
		fmt.Sprintf("  - {virtual_key: crafted-openai,    model_map: {%s: kimi-k2, %s: kimi-k2}}", mixedModel, craftedOpenAIOnly),
	}, "\n") + "\n"
	return providers, targets
}
