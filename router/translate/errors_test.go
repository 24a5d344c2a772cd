package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

// Error types are mapped by status where the status says more; messages cross
// over byte for byte.
func TestTranslateErrorToMessagesTypes(t *testing.T) {
	tests := []struct {
		status         int
		body, wantType string
	}{
		{400, `{"error":{"message":"m","type":"invalid_request_error"}}`, "invalid_request_error"},
		{401, `{"error":{"message":"m","type":"invalid_request_error","code":"invalid_api_key"}}`, "authentication_error"},
		{403, `{"error":{"message":"m","type":"invalid_request_error"}}`, "permission_error"},
		{404, `{"error":{"message":"m","type":"invalid_request_error"}}`, "not_found_error"},
		{408, `{"error":{"message":"m","type":"timeout"}}`, "invalid_request_error"},
		{408, `{"error":{"message":"m","type":"api_error"}}`, "api_error"},
		{409, `{"error":{"message":"m","type":"conflict"}}`, "invalid_request_error"},
		{413, `{"error":{"message":"m"}}`, "request_too_large"},
		{422, `{"error":{"message":"m","type":"invalid_request_error"}}`, "invalid_request_error"},
		{429, `{"error":{"message":"m","type":"tokens","code":"rate_limit_exceeded"}}`, "rate_limit_error"},
		{500, `{"error":{"message":"m","type":"server_error"}}`, "api_error"},
		{502, `{"error":{"message":"m","type":"overloaded_error"}}`, "overloaded_error"},
		{503, `{"error":{"message":"m","type":"server_error"}}`, "overloaded_error"},
		{529, `{"error":{"message":"m"}}`, "overloaded_error"},
	}
	for _, tt := range tests {
		out := TranslateError(Chat, tt.status, []byte(tt.body), Messages)
		want := `{"type":"error","error":{"type":"` + tt.wantType + `","message":"m"}}`
		if string(out) != want {
			t.Errorf("TranslateError(Chat, %d, %s, Messages) = %s, want %s", tt.status, tt.body, out, want)
		}
	}
}

// TestAnthropicErrorType: Anthropic's documented table, and the statuses it
// does not list: another 4xx (408 among them) is invalid_request_error,
// another 5xx api_error.
func TestAnthropicErrorType(t *testing.T) {
	for status, want := range map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
		500: "api_error", 529: "overloaded_error", 503: "overloaded_error",
		405: "invalid_request_error", 408: "invalid_request_error", 415: "invalid_request_error",
		502: "api_error", 504: "api_error",
	} {
		if got := AnthropicErrorType(status); got != want {
			t.Errorf("AnthropicErrorType(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestTranslateErrorToChatShapes(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"anthropic", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			`{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}`},
		{"already OpenAI-shaped", 400, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":"x"}}`,
			`{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":"x"}}`},
		{"no type", 401, `{"message":"no key"}`,
			`{"error":{"message":"no key","type":"authentication_error","param":null,"code":null}}`},
		{"plain text, long", 502, strings.Repeat("é", 600),
			`{"error":{"message":"` + strings.Repeat("é", 512) + `","type":"server_error","param":null,"code":null}}`},
		{"JSON without a message", 500, `{"detail":"x"}`,
			`{"error":{"message":"{\"detail\":\"x\"}","type":"server_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := TranslateError(Messages, tt.status, []byte(tt.body), Chat)
			if string(out) != tt.want {
				t.Errorf("TranslateError = %s\nwant %s", out, tt.want)
			}
			if err := checkErrorBody(Chat, out); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestIsContextOverflow(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   bool
	}{
		{400, `{"error":{"code":"context_length_exceeded"}}`, true},
		{400, `prompt is too long: 5 > 4`, true},
		{400, `This model's maximum context length is 8192 tokens`, true},
		{400, `exceeds the context window`, true},
		{400, `input length and max_tokens exceed context limit: 1 + 2 > 2`, true},
		{413, ``, true},
		{400, `{"error":{"message":"bad temperature"}}`, false},
	}
	for _, tt := range tests {
		if got := IsContextOverflow(tt.status, []byte(tt.body)); got != tt.want {
			t.Errorf("IsContextOverflow(%d, %s) = %v, want %v", tt.status, tt.body, got, tt.want)
		}
	}
}

// An upstream error type or code holding an escape crosses as the same
// string: the token's contents are copied, never escaped a second time.
func TestTranslateErrorToChatKeepsEscapedTypeAndCode(t *testing.T) {
	body := []byte(`{"type":"error","error":{"type":"odd\"type\\x","code":"c\u00e9\"d","message":"m"}}`)
	var got struct {
		Error struct {
			Type string  `json:"type"`
			Code *string `json:"code"`
		} `json:"error"`
	}
	out := TranslateError(Messages, 400, body, Chat)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TranslateError gave invalid JSON %s: %v", out, err)
	}
	if got.Error.Type != `odd"type\x` || got.Error.Code == nil || *got.Error.Code != `cé"d` {
		t.Errorf("TranslateError = %s: type %q code %v, want the upstream's own strings", out, got.Error.Type, got.Error.Code)
	}
}

// One neutral error for every upstream: each provider's error body reaches
// each client in the client's shape, status, type, message and code kept;
// OpenAI's two APIs share a shape, so between them the body is untouched.
func TestTranslateErrorEveryUpstream(t *testing.T) {
	gemini := `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]`
	bedrock := `{"message":"Input is too long for requested model. prompt is too long"}`
	anthropic := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	openai := `{"error":{"message":"Your request has 130000 tokens; the model takes 128000.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	tests := []struct {
		name             string
		upstream, client Format
		status           int
		body, want       string
	}{
		{"gemini to messages", Gemini, Messages, 429, gemini,
			`{"type":"error","error":{"type":"rate_limit_error","message":"Resource has been exhausted (e.g. check quota)."}}`},
		{"gemini to chat", Gemini, Chat, 429, gemini,
			`{"error":{"message":"Resource has been exhausted (e.g. check quota).","type":"rate_limit_error","param":null,"code":null}}`},
		{"bedrock overflow to responses", Converse, Responses, 400, bedrock,
			`{"error":{"message":"Input is too long for requested model. prompt is too long","type":"invalid_request_error","param":null,"code":"context_length_exceeded"}}`},
		{"anthropic to responses", Messages, Responses, 529, anthropic,
			`{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}`},
		{"openai overflow to messages", Chat, Messages, 400, openai,
			`{"type":"error","error":{"type":"invalid_request_error","message":"Your request has 130000 tokens; the model takes 128000. (context_length_exceeded)"}}`},
		{"chat to responses untouched", Chat, Responses, 400, openai, openai},
		{"messages to messages untouched", Messages, Messages, 529, anthropic, anthropic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := TranslateError(tt.upstream, tt.status, []byte(tt.body), tt.client)
			if string(out) != tt.want {
				t.Errorf("TranslateError(%v, %d, %s, %v) = %s\nwant %s", tt.upstream, tt.status, tt.body, tt.client, out, tt.want)
			}
			if IsContextOverflow(tt.status, []byte(tt.body)) != IsContextOverflow(tt.status, out) {
				t.Errorf("context overflow recognised in the input %v, in the output %v", IsContextOverflow(tt.status, []byte(tt.body)), IsContextOverflow(tt.status, out))
			}
		})
	}
}
