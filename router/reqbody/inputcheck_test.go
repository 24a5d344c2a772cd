package reqbody

import "testing"

// TestCheckInputEdges: what the input checks let through and what they
// refuse, at the edges of each rule.
func TestCheckInputEdges(t *testing.T) {
	t.Parallel()
	chat, messages, responses := ChatCompletions, Messages, Responses
	for _, tc := range []struct {
		name  string
		api   API
		body  string
		param string // "": let through
	}{
		{"max_tokens null", chat, `{"model":"m","max_tokens":null,"messages":[{"role":"user","content":"x"}]}`, ""},
		{"max_tokens a string: the provider's to judge", chat, `{"model":"m","max_tokens":"5","messages":[{"role":"user","content":"x"}]}`, ""},
		{"max_tokens 0.5: the provider's to judge", chat, `{"model":"m","max_tokens":0.5,"messages":[{"role":"user","content":"x"}]}`, ""},
		{"max_tokens -0", chat, `{"model":"m","max_tokens":-0,"messages":[{"role":"user","content":"x"}]}`, "max_tokens"},
		{"max_tokens 0e3", chat, `{"model":"m","max_tokens":0e3,"messages":[{"role":"user","content":"x"}]}`, "max_tokens"},
		{"messages [ ] with spaces", chat, `{"model":"m","messages":[ ]}`, "messages"},
		{"no messages at all: the provider's to judge", chat, `{"model":"m"}`, ""},
		{"embeddings-like input on chat is not messages", chat, `{"model":"m","input":[]}`, ""},
		{"an escaped id is the same id", chat, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"call\u005f1"}]},{"role":"tool","tool_call_id":"call_1","content":"1"}]}`, ""},
		{"two calls, one answered, then a user turn", chat, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a"},{"id":"b"}]},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"user","content":"x"}]}`, "messages[0].tool_calls[1]"},
		{"a tool message answering twice", chat, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"a","content":"1"}]}`, ""},
		{"a prompt that talks of tool_call_id", chat, `{"model":"m","messages":[{"role":"user","content":"what is \"tool_call_id\"?"}]}`, ""},
		{"messages: string content", messages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"tool_use"}]}`, ""},
		{"messages: results answered in the next turn beside text", messages, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"},{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t1"}]}]}`, ""},
		{"messages: one of two answered", messages, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"}]}]}`, "messages[0].content[0]"},
		{"messages: server tool use is not a tool_use", messages, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}]},{"role":"user","content":"x"}]}`, ""},
		{"responses: string input", responses, `{"model":"m","input":"function_call_output"}`, ""},
		{"responses: output before its call", responses, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"1"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`, "input[0].call_id"},
	} {
		f, err := Scan([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := Check(tc.api, &f); got.Param != tc.param {
			t.Errorf("%s: Check = %+v, want param %q", tc.name, got, tc.param)
		}
	}
}
