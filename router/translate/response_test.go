package translate

import (
	"errors"
	"strings"
	"testing"
)

func TestStopReasons(t *testing.T) {
	toChat := []struct{ anthropic, openai string }{
		{"end_turn", "stop"},
		{"stop_sequence", "stop"},
		{"max_tokens", "length"},
		{"model_context_window_exceeded", "length"},
		{"tool_use", "tool_calls"},
		{"pause_turn", "stop"},
		{"refusal", "content_filter"},
		{"", "stop"},
	}
	for _, tt := range toChat {
		body := `{"id":"m","type":"message","content":[{"type":"text","text":"x"}],"stop_reason":` + orNull(tt.anthropic) + `}`
		out, _, err := TranslateAnswer(Messages, []byte(body), Chat, Answer{Model: "c", Created: 1})
		if err != nil {
			t.Fatal(err)
		}
		c, err := checkChatCompletion(out)
		if err != nil || c.Choices[0].FinishReason != tt.openai {
			t.Errorf("stop_reason %q -> %s, %v; want finish_reason %q", tt.anthropic, out, err, tt.openai)
		}
	}
	toMessages := []struct{ openai, anthropic string }{
		{"stop", "end_turn"},
		{"length", "max_tokens"},
		{"tool_calls", "tool_use"},
		{"function_call", "tool_use"},
		{"content_filter", "refusal"},
		{"", "end_turn"},
	}
	for _, tt := range toMessages {
		body := `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":` + orNull(tt.openai) + `}]}`
		out, _, err := TranslateAnswer(Chat, []byte(body), Messages, Answer{Model: "c"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := checkMessage(out)
		if err != nil || m.StopReason != tt.anthropic {
			t.Errorf("finish_reason %q -> %s, %v; want stop_reason %q", tt.openai, out, err, tt.anthropic)
		}
	}
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return `"` + s + `"`
}

// A 2xx body that is not the API's answer is a provider fault, said without
// quoting the body.
func TestResponsesInvalidUpstream(t *testing.T) {
	toChat := []string{
		`SECRET`,
		`[]`,
		`{"id":"m","type":"message"}`,
		`{"id":"m","content":[{"type":"text"}]}`,
		`{"id":"m","content":[{"type":"tool_use","id":"t","input":{"SECRET":1}}]}`,
	}
	for _, body := range toChat {
		out, _, err := TranslateAnswer(Messages, []byte(body), Chat, Answer{Model: "c", Created: 1})
		if !errors.Is(err, ErrInvalidUpstream) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("TranslateAnswer(Messages, %s, Chat) = %s, %v; want ErrInvalidUpstream without content", body, out, err)
		}
	}
	toMessages := []string{
		`{"SECRET"`,
		`{"id":"c"}`,
		`{"id":"c","choices":[]}`,
		`{"id":"c","choices":[{"index":0,"message":{"tool_calls":[{"id":"t","function":{"arguments":"{}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"message":{"tool_calls":[{"id":"t","function":["x"]}]}}]}`,
		`{"id":"c","choices":[{"index":0,"message":{"tool_calls":[{"id":"t","function":{"name":"f","arguments":"SECRET"}}]},"finish_reason":"tool_calls"}]}`,
	}
	for _, body := range toMessages {
		out, _, err := TranslateAnswer(Chat, []byte(body), Messages, Answer{Model: "c"})
		if !errors.Is(err, ErrInvalidUpstream) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("TranslateAnswer(Chat, %s, Messages) = %s, %v; want ErrInvalidUpstream without content", body, out, err)
		}
	}
}

func TestResponsesEdgeCases(t *testing.T) {
	tests := []struct {
		name, body, want string
		toChat           bool
	}{
		{"anthropic: empty content", `{"id":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`,
			`{"id":"m","object":"chat.completion","created":1,"model":"c","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":0,"total_tokens":1}}`, true},
		{"anthropic: no id, no usage", `{"content":[{"type":"text","text":"a"}]}`,
			`{"id":"chatcmpl-translated","object":"chat.completion","created":1,"model":"c","choices":[{"index":0,"message":{"role":"assistant","content":"a","refusal":null},"logprobs":null,"finish_reason":"stop"}]}`, true},
		{"openai: choice 0 listed second", `{"id":"c","choices":[{"index":1,"message":{"content":"B"}},{"index":0,"message":{"content":"A"},"finish_reason":"stop"}]}`,
			`{"id":"c","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"A"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`, false},
		{"openai: content as parts, tool without id", `{"id":"c","choices":[{"index":0,"message":{"content":[{"type":"text","text":"A"},{"type":"text","text":""}],"tool_calls":[{"type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			`{"id":"c","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"A"},{"type":"tool_use","id":"toolu_0","name":"f","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`, false},
		{"openai: reasoning dropped", `{"id":"c","choices":[{"index":0,"message":{"content":"A","reasoning_content":"hmm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
			`{"id":"c","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"A"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []byte
			var err error
			if tt.toChat {
				out, _, err = TranslateAnswer(Messages, []byte(tt.body), Chat, Answer{Model: "c", Created: 1})
			} else {
				out, _, err = TranslateAnswer(Chat, []byte(tt.body), Messages, Answer{Model: "c"})
			}
			if err != nil || string(out) != tt.want {
				t.Errorf("got %s, %v\nwant %s", out, err, tt.want)
			}
		})
	}
}

// Same format in and out is not translated: the body comes back as it came,
// with the usage it reports; one that is not JSON is a provider fault.
func TestTranslateAnswerSameFormatPassesThrough(t *testing.T) {
	for _, tt := range []struct {
		f    Format
		body string
	}{
		{Chat, `{"id":"c","choices":[{"index":0,"message":{"content":"hi","reasoning_content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1},"vendor_extra":[1,2]}`},
		{Messages, `{"id":"m","type":"message","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1},"vendor_extra":{}}`},
		{Responses, `{"id":"r","object":"response","output":[],"usage":{"input_tokens":3,"output_tokens":1}}`},
	} {
		out, u, err := TranslateAnswer(tt.f, []byte(tt.body), tt.f, Answer{Model: "other"})
		if err != nil || string(out) != tt.body || u.InputTokens != 3 || u.OutputTokens != 1 {
			t.Errorf("TranslateAnswer(%v, ..., %v) = %s, %+v, %v; want the body as it came", tt.f, tt.f, out, u, err)
		}
		if _, _, err := TranslateAnswer(tt.f, []byte(tt.body[:10]), tt.f, Answer{}); !errors.Is(err, ErrInvalidUpstream) {
			t.Errorf("TranslateAnswer(%v) of a cut body: %v, want ErrInvalidUpstream", tt.f, err)
		}
	}
}
