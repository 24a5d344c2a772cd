package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Validators of what each API documents, used on every translated output:
// decoding with DisallowUnknownFields means the translator writes no member
// the target API does not know, and the checks after it hold the rules an
// upstream (or an SDK) would enforce. Each returns the first problem found.

func strictDecode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

var anthropicIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

type aRequest struct {
	Model         string     `json:"model"`
	MaxTokens     *int       `json:"max_tokens"`
	Messages      []aMessage `json:"messages"`
	System        jsonRaw    `json:"system"`
	StopSequences []string   `json:"stop_sequences"`
	Temperature   *float64   `json:"temperature"`
	TopP          *float64   `json:"top_p"`
	TopK          *int       `json:"top_k"`
	Metadata      *struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	Tools      []aTool      `json:"tools"`
	ToolChoice *aToolChoice `json:"tool_choice"`
	Stream     bool         `json:"stream"`
	Thinking   *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	OutputConfig *struct {
		Format struct {
			Type   string  `json:"type"`
			Schema jsonRaw `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type jsonRaw = json.RawMessage

type aMessage struct {
	Role    string  `json:"role"`
	Content jsonRaw `json:"content"`
}

type aBlock struct {
	Type      string   `json:"type"`
	Text      *string  `json:"text"`
	Source    *aSource `json:"source"`
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Input     jsonRaw  `json:"input"`
	ToolUseID string   `json:"tool_use_id"`
	Content   jsonRaw  `json:"content"`
	Title     string   `json:"title"`
	IsError   bool     `json:"is_error"`
	Thinking  *string  `json:"thinking"`
	Signature string   `json:"signature"`
	Data      string   `json:"data"`
	// CacheControl must be {"type":"ephemeral"} (with an optional ttl).
	CacheControl *struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	} `json:"cache_control"`
}

type aSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

type aTool struct {
	Name         string  `json:"name"`
	Description  *string `json:"description"`
	InputSchema  jsonRaw `json:"input_schema"`
	Strict       *bool   `json:"strict"`
	CacheControl jsonRaw `json:"cache_control"`
}

type aToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

// checkMessagesRequest holds b to what the Messages API accepts.
func checkMessagesRequest(b []byte) error {
	var r aRequest
	if err := strictDecode(b, &r); err != nil {
		return err
	}
	if r.Model == "" || r.MaxTokens == nil || *r.MaxTokens <= 0 {
		return fmt.Errorf("model and a positive max_tokens are required")
	}
	if r.Temperature != nil && r.TopP != nil {
		return fmt.Errorf("temperature and top_p together (recent Claude models refuse the pair)")
	}
	if th := r.Thinking; th != nil {
		switch {
		case th.Type != "enabled" || th.BudgetTokens < 1024 || th.BudgetTokens >= *r.MaxTokens:
			return fmt.Errorf("thinking %+v with max_tokens %d", *th, *r.MaxTokens)
		case r.Temperature != nil || r.TopP != nil:
			return fmt.Errorf("thinking with temperature or top_p")
		case r.ToolChoice != nil && (r.ToolChoice.Type == "any" || r.ToolChoice.Type == "tool"):
			return fmt.Errorf("thinking with a forced tool choice")
		}
	}
	if oc := r.OutputConfig; oc != nil && (oc.Format.Type != "json_schema" || !isObjectJSON(oc.Format.Schema)) {
		return fmt.Errorf("output_config.format %+v", oc.Format)
	}
	if len(r.System) > 0 {
		var s string
		if json.Unmarshal(r.System, &s) != nil {
			var blocks []aBlock
			if err := strictDecode(r.System, &blocks); err != nil {
				return fmt.Errorf("system: %v", err)
			}
			for _, bl := range blocks {
				if bl.Type != "text" || bl.Text == nil || *bl.Text == "" {
					return fmt.Errorf("system blocks must be non-empty text")
				}
			}
		}
	}
	toolIDs := map[string]bool{}
	for i, m := range r.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("messages[%d].role %q", i, m.Role)
		}
		if i > 0 && r.Messages[i-1].Role == m.Role {
			return fmt.Errorf("messages[%d]: two %s turns in a row", i, m.Role)
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			continue
		}
		var blocks []aBlock
		if err := strictDecode(m.Content, &blocks); err != nil {
			return fmt.Errorf("messages[%d].content: %v", i, err)
		}
		results := true
		for j, bl := range blocks {
			where := fmt.Sprintf("messages[%d].content[%d]", i, j)
			if bl.Type != "tool_result" {
				results = false
			}
			switch bl.Type {
			case "text":
				if bl.Text == nil || *bl.Text == "" {
					return fmt.Errorf("%s: empty text block", where)
				}
			case "image", "document":
				if bl.Source == nil {
					return fmt.Errorf("%s: no source", where)
				}
				switch bl.Source.Type {
				case "base64":
					if bl.Source.MediaType == "" || bl.Source.Data == "" {
						return fmt.Errorf("%s: base64 source needs media_type and data", where)
					}
				case "url":
					if !strings.HasPrefix(bl.Source.URL, "http") {
						return fmt.Errorf("%s: url source %q", where, bl.Source.URL)
					}
				default:
					return fmt.Errorf("%s: source type %q", where, bl.Source.Type)
				}
			case "tool_use":
				if m.Role != "assistant" || !anthropicIDPattern.MatchString(bl.ID) || bl.Name == "" || !isObjectJSON(bl.Input) {
					return fmt.Errorf("%s: bad tool_use %+v", where, bl)
				}
				toolIDs[bl.ID] = true
			case "thinking", "redacted_thinking":
				if m.Role != "assistant" || (bl.Type == "thinking" && (bl.Thinking == nil || bl.Signature == "")) || (bl.Type == "redacted_thinking" && bl.Data == "") {
					return fmt.Errorf("%s: bad %s block", where, bl.Type)
				}
			case "tool_result":
				if m.Role != "user" || !toolIDs[bl.ToolUseID] {
					return fmt.Errorf("%s: tool_result for unknown tool_use %q", where, bl.ToolUseID)
				}
				if !results {
					return fmt.Errorf("%s: tool_result after other content", where)
				}
			default:
				return fmt.Errorf("%s: block type %q", where, bl.Type)
			}
		}
	}
	for i, t := range r.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if t.Name == "" || !isObjectJSON(t.InputSchema) || json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			return fmt.Errorf("tools[%d] needs a name and an input_schema of type object", i)
		}
	}
	if tc := r.ToolChoice; tc != nil {
		switch {
		case len(r.Tools) == 0:
			return fmt.Errorf("tool_choice without tools")
		case tc.Type == "tool" && tc.Name == "":
			return fmt.Errorf("tool_choice tool without a name")
		case tc.Type != "auto" && tc.Type != "any" && tc.Type != "tool" && tc.Type != "none":
			return fmt.Errorf("tool_choice type %q", tc.Type)
		}
	}
	return nil
}

func isObjectJSON(b []byte) bool {
	var m map[string]any
	return json.Unmarshal(b, &m) == nil && m != nil
}

type oRequest struct {
	Model               string     `json:"model"`
	Messages            []oMessage `json:"messages"`
	MaxCompletionTokens *int       `json:"max_completion_tokens"`
	Stop                []string   `json:"stop"`
	Temperature         *float64   `json:"temperature"`
	TopP                *float64   `json:"top_p"`
	User                *string    `json:"user"`
	Tools               []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string  `json:"name"`
			Description *string `json:"description"`
			Parameters  jsonRaw `json:"parameters"`
			Strict      *bool   `json:"strict"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string  `json:"name"`
			Strict bool    `json:"strict"`
			Schema jsonRaw `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	ReasoningEffort   string  `json:"reasoning_effort"`
	ToolChoice        jsonRaw `json:"tool_choice"`
	ParallelToolCalls *bool   `json:"parallel_tool_calls"`
	Stream            bool    `json:"stream"`
	StreamOptions     *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oMessage struct {
	Role       string      `json:"role"`
	Content    jsonRaw     `json:"content"`
	ToolCalls  []oToolCall `json:"tool_calls"`
	ToolCallID string      `json:"tool_call_id"`
}

type oToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oPart struct {
	Type     string `json:"type"`
	Text     *string
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
	File *struct {
		Filename string `json:"filename"`
		FileData string `json:"file_data"`
	} `json:"file"`
}

var dataURLPattern = regexp.MustCompile(`^data:[a-z]+/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+$`)

// checkChatRequest holds b to what Chat Completions accepts.
func checkChatRequest(b []byte) error {
	var r oRequest
	if err := strictDecode(b, &r); err != nil {
		return err
	}
	if r.Model == "" || len(r.Messages) == 0 {
		return fmt.Errorf("model and messages are required")
	}
	pending := map[string]bool{} // tool calls still waiting for their tool message
	for i, m := range r.Messages {
		where := fmt.Sprintf("messages[%d]", i)
		if m.Role != "tool" && len(pending) > 0 {
			return fmt.Errorf("%s: %s message before the results of %v", where, m.Role, pending)
		}
		switch m.Role {
		case "system", "developer", "user":
			if err := checkChatContent(m.Content, m.Role == "user"); err != nil {
				return fmt.Errorf("%s.content: %v", where, err)
			}
		case "assistant":
			if string(m.Content) != "null" {
				if err := checkChatContent(m.Content, false); err != nil {
					return fmt.Errorf("%s.content: %v", where, err)
				}
			}
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" || !isObjectJSON([]byte(c.Function.Arguments)) {
					return fmt.Errorf("%s.tool_calls[%d] = %+v", where, j, c)
				}
				pending[c.ID] = true
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return fmt.Errorf("%s: tool message for %q, not a pending call", where, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			if err := checkChatContent(m.Content, false); err != nil {
				return fmt.Errorf("%s.content: %v", where, err)
			}
		default:
			return fmt.Errorf("%s.role %q", where, m.Role)
		}
	}
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Errorf("tools[%d] is not a named function", i)
		}
	}
	if len(r.ToolChoice) > 0 && len(r.Tools) == 0 || r.ParallelToolCalls != nil && len(r.Tools) == 0 {
		return fmt.Errorf("tool_choice or parallel_tool_calls without tools")
	}
	if r.StreamOptions != nil && !r.Stream {
		return fmt.Errorf("stream_options without stream")
	}
	return nil
}

// checkChatContent accepts a string or an array of parts (text only, unless
// media are allowed).
func checkChatContent(c jsonRaw, media bool) error {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return nil
	}
	var parts []oPart
	if err := strictDecode(c, &parts); err != nil {
		return err
	}
	for j, p := range parts {
		switch {
		case p.Type == "text" && p.Text != nil:
		case media && p.Type == "image_url" && p.ImageURL != nil &&
			(strings.HasPrefix(p.ImageURL.URL, "https://") || dataURLPattern.MatchString(p.ImageURL.URL)):
		case media && p.Type == "file" && p.File != nil && dataURLPattern.MatchString(p.File.FileData):
		default:
			return fmt.Errorf("part %d: %+v", j, p)
		}
	}
	return nil
}

type oUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	// CacheCreationInputTokens are the tokens written to a prompt cache, as
	// LiteLLM reports Anthropic's.
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CompletionTokensDetails  *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type oCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role      string      `json:"role"`
			Content   *string     `json:"content"`
			Refusal   *string     `json:"refusal"`
			ToolCalls []oToolCall `json:"tool_calls"`
		} `json:"message"`
		Logprobs     jsonRaw `json:"logprobs"`
		FinishReason string  `json:"finish_reason"`
		StopReason   *string `json:"stop_reason"` // the matched stop sequence, as vLLM says it
	} `json:"choices"`
	Usage *oUsage `json:"usage"`
}

var finishReasons = map[string]bool{"stop": true, "length": true, "tool_calls": true, "content_filter": true}

// checkChatCompletion holds b to the chat.completion object.
func checkChatCompletion(b []byte) (oCompletion, error) {
	var c oCompletion
	if err := strictDecode(b, &c); err != nil {
		return c, err
	}
	if c.ID == "" || c.Object != "chat.completion" || c.Model == "" || len(c.Choices) != 1 {
		return c, fmt.Errorf("header fields or choices wrong: %+v", c)
	}
	ch := c.Choices[0]
	if ch.Index != 0 || ch.Message.Role != "assistant" || !finishReasons[ch.FinishReason] {
		return c, fmt.Errorf("choice wrong: %+v", ch)
	}
	for j, tc := range ch.Message.ToolCalls {
		if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" || !isObjectJSON([]byte(tc.Function.Arguments)) {
			return c, fmt.Errorf("tool_calls[%d] = %+v", j, tc)
		}
	}
	if u := c.Usage; u != nil && u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		return c, fmt.Errorf("usage total %d != %d + %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	return c, nil
}

type aUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// checkErrorBody holds b to the error shape of format f.
func checkErrorBody(f Format, b []byte) error {
	if f == Messages {
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := strictDecode(b, &e); err != nil {
			return err
		}
		if e.Type != "error" || !isAnthropicErrorType([]byte(e.Error.Type)) || e.Error.Message == "" {
			return fmt.Errorf("not an Anthropic error: %s", b)
		}
		return nil
	}
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := strictDecode(b, &e); err != nil {
		return err
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		return fmt.Errorf("not an OpenAI error: %s", b)
	}
	if !bytes.Contains(b, []byte(`"param":`)) || !bytes.Contains(b, []byte(`"code":`)) {
		return fmt.Errorf("OpenAI errors carry param and code (null when none): %s", b)
	}
	return nil
}
