package router_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInputChecksBeforeAnyAttempt: a request the provider would refuse
// for its own shape (a tool result for a call never made, a tool call left
// without its result before the conversation goes on, no messages, a
// token limit of zero or less) is answered 400 naming the field, in the
// caller's error shape, without any upstream attempt. The controls, valid
// conversations with tools, reach the upstream.
func TestInputChecksBeforeAnyAttempt(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, answerWithEdgeHeaders)
	gw := newGateway(t, "fallback", "", target{name: "a", url: up.URL})
	const (
		user      = `{"role":"user","content":"hi"}`
		call      = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
		result    = `{"role":"tool","tool_call_id":"call_1","content":"42"}`
		antCall   = `{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}`
		antResult = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}`
		fnCall    = `{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}`
		fnOutput  = `{"type":"function_call_output","call_id":"call_1","output":"42"}`
	)
	chat := func(msgs ...string) string { return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}` }
	msgs := func(msgs ...string) string {
		return `{"model":"m","max_tokens":10,"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	input := func(extra string, items ...string) string {
		return `{"model":"m"` + extra + `,"input":[` + strings.Join(items, ",") + `]}`
	}
	for _, tc := range []struct {
		name, path, body string
		field            string // "": the control, forwarded
	}{
		{"chat: tool result for an unknown call", "/v1/chat/completions", chat(user, call, `{"role":"tool","tool_call_id":"call_9","content":"42"}`), "messages[2].tool_call_id"},
		{"chat: tool result with no call at all", "/v1/chat/completions", chat(user, result), "messages[1].tool_call_id"},
		{"chat: call left without its result", "/v1/chat/completions", chat(user, call, user), "messages[1].tool_calls[0]"},
		{"chat: empty messages", "/v1/chat/completions", chat(), "messages"},
		{"chat: max_tokens -5", "/v1/chat/completions", `{"model":"m","max_tokens":-5,"messages":[` + user + `]}`, "max_tokens"},
		{"chat: max_completion_tokens 0", "/v1/chat/completions", `{"model":"m","max_completion_tokens":0,"messages":[` + user + `]}`, "max_completion_tokens"},
		{"chat: control, call and result", "/v1/chat/completions", chat(user, call, result, user), ""},
		{"chat: control, call awaiting its result", "/v1/chat/completions", chat(user, call), ""},
		{"messages: result for an unknown tool_use", "/v1/messages", msgs(user, antCall, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"42"}]}`), "messages[2].content[0].tool_use_id"},
		{"messages: tool_use without its result", "/v1/messages", msgs(user, antCall, user), "messages[1].content[1]"},
		{"messages: empty", "/v1/messages", msgs(), "messages"},
		{"messages: max_tokens 0", "/v1/messages", `{"model":"m","max_tokens":0,"messages":[` + user + `]}`, "max_tokens"},
		{"messages: control", "/v1/messages", msgs(user, antCall, antResult), ""},
		{"responses: output for an unknown call", "/v1/responses", input("", fnOutput), "input[0].call_id"},
		{"responses: max_output_tokens -1", "/v1/responses", `{"model":"m","max_output_tokens":-1,"input":"hi"}`, "max_output_tokens"},
		{"responses: control, call and output", "/v1/responses", input("", user, fnCall, fnOutput), ""},
		{"responses: control, the call is in the stored response", "/v1/responses", input(`,"previous_response_id":"resp_1"`, fnOutput), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := up.hits.Load()
			resp := post(t, gw.URL, tc.path, tc.body)
			body := readAll(t, resp.Body)
			if tc.field == "" {
				if resp.StatusCode != 200 || up.hits.Load() != before+1 {
					t.Fatalf("control: status %d, upstream hits %d: %s", resp.StatusCode, up.hits.Load()-before, body)
				}
				return
			}
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			if n := up.hits.Load() - before; n != 0 {
				t.Errorf("upstream received %d requests, want 0", n)
			}
			var e struct {
				Type  string                                `json:"type"`
				Error struct{ Type, Message, Param string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.field) {
				t.Errorf("error %+v, want invalid_request_error naming %s", e.Error, tc.field)
			}
			if anthropic := tc.path == "/v1/messages"; anthropic != (e.Type == "error") {
				t.Errorf("body %s is not in the caller's shape", body)
			}
			if tc.path != "/v1/messages" && e.Error.Param != tc.field {
				t.Errorf("param = %q, want %q", e.Error.Param, tc.field)
			}
		})
	}
}
