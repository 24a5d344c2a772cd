package translate

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// member decodes one top-level member of a JSON body, for table tests that
// look at one parameter.
func member(t *testing.T, body []byte, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, body)
	}
	return m[key]
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const userHi = `"messages":[{"role":"user","content":"hi"}]`

func TestChatToMessagesParameters(t *testing.T) {
	tests := []struct {
		name, body, key, want string
	}{
		{"max_completion_tokens wins over max_tokens", `{"max_completion_tokens":10,"max_tokens":20,` + userHi + `}`, "max_tokens", `10`},
		{"max_tokens alone", `{"max_tokens":20,` + userHi + `}`, "max_tokens", `20`},
		{"neither: the default Anthropic needs", `{` + userHi + `}`, "max_tokens", `4096`},
		{"null counts as absent", `{"max_completion_tokens":null,"max_tokens":7,` + userHi + `}`, "max_tokens", `7`},
		{"temperature within Anthropic's range", `{"temperature":0.3,` + userHi + `}`, "temperature", `0.3`},
		{"temperature above 1 is sent as 1", `{"temperature":2,` + userHi + `}`, "temperature", `1`},
		{"top_p", `{"top_p":0.5,` + userHi + `}`, "top_p", `0.5`},
		{"stop string", `{"stop":"x",` + userHi + `}`, "stop_sequences", `["x"]`},
		{"stop array", `{"stop":["a","b"],` + userHi + `}`, "stop_sequences", `["a","b"]`},
		{"empty stop array is left out", `{"stop":[],` + userHi + `}`, "stop_sequences", `null`},
		{"user", `{"user":"u1",` + userHi + `}`, "metadata", `{"user_id":"u1"}`},
		{"safety_identifier when no user", `{"safety_identifier":"s1",` + userHi + `}`, "metadata", `{"user_id":"s1"}`},
		{"user wins over safety_identifier", `{"user":"u1","safety_identifier":"s1",` + userHi + `}`, "metadata", `{"user_id":"u1"}`},
		{"stream", `{"stream":true,` + userHi + `}`, "stream", `true`},
		{"stream false is left out", `{"stream":false,` + userHi + `}`, "stream", `null`},
		{"system string", `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}]}`, "system", `"S"`},
		{"system and developer, anywhere, in order", `{"messages":[{"role":"system","content":"A"},{"role":"user","content":"hi"},{"role":"developer","content":[{"type":"text","text":"B"}]}]}`,
			"system", `[{"text":"A","type":"text"},{"text":"B","type":"text"}]`},
		{"dropped: penalties, seed, logit_bias", `{"presence_penalty":1,"frequency_penalty":1,"seed":1,"logit_bias":{"1":1},` + userHi + `}`, "seed", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := ChatToMessages([]byte(tt.body), "up", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkMessagesRequest(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := asJSON(member(t, out, tt.key)); got != tt.want {
				t.Errorf("%s = %s, want %s\n%s", tt.key, got, tt.want, out)
			}
		})
	}
}

func TestChatToMessagesToolChoice(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f"}}],`
	tests := []struct {
		name, choice, want string
	}{
		{"absent", ``, `null`},
		{"auto", `"tool_choice":"auto",`, `{"type":"auto"}`},
		{"none", `"tool_choice":"none",`, `{"type":"none"}`},
		{"required", `"tool_choice":"required",`, `{"type":"any"}`},
		{"named", `"tool_choice":{"type":"function","function":{"name":"f"}},`, `{"name":"f","type":"tool"}`},
		{"parallel false alone", `"parallel_tool_calls":false,`, `{"disable_parallel_tool_use":true,"type":"auto"}`},
		{"parallel false with required", `"tool_choice":"required","parallel_tool_calls":false,`, `{"disable_parallel_tool_use":true,"type":"any"}`},
		{"parallel false with none", `"tool_choice":"none","parallel_tool_calls":false,`, `{"type":"none"}`},
		{"parallel true", `"parallel_tool_calls":true,`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := ChatToMessages([]byte(`{`+tools+tt.choice+userHi+`}`), "up", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(member(t, out, "tool_choice")); got != tt.want {
				t.Errorf("tool_choice = %s, want %s", got, tt.want)
			}
		})
	}
	// Without tools, tool_choice and parallel_tool_calls have nothing to act on.
	out, _, err := ChatToMessages([]byte(`{"tool_choice":"required","parallel_tool_calls":false,`+userHi+`}`), "up", nil)
	if err != nil || member(t, out, "tool_choice") != nil || member(t, out, "tools") != nil {
		t.Errorf("no tools: %s, %v", out, err)
	}
}

func TestChatToMessagesIncludeUsage(t *testing.T) {
	tests := []struct {
		name, body string
		want       bool
	}{
		{"streaming, asked", `{"stream":true,"stream_options":{"include_usage":true},` + userHi + `}`, true},
		{"streaming, not asked", `{"stream":true,` + userHi + `}`, false},
		{"streaming, asked false", `{"stream":true,"stream_options":{"include_usage":false},` + userHi + `}`, false},
		{"not streaming", `{"stream_options":{"include_usage":true},` + userHi + `}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := ChatToMessages([]byte(tt.body), "up", nil)
			if err != nil || got != tt.want {
				t.Errorf("includeUsage = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// What cannot cross over is refused with the client's parameter named, and the
// error never quotes the request (a prompt here says SECRET).
func TestChatToMessagesRefuses(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"not JSON", `{"messages":`, ""},
		{"not an object", `["SECRET"]`, ""},
		{"no messages", `{"model":"m"}`, "messages"},
		{"n 2", `{"n":2,` + userHi + `}`, "n"},
		{"n not a number", `{"n":"SECRET",` + userHi + `}`, "n"},
		{"logprobs", `{"logprobs":true,` + userHi + `}`, "logprobs"},
		{"top_logprobs", `{"top_logprobs":3,` + userHi + `}`, "top_logprobs"},
		{"json_object", `{"response_format":{"type":"json_object"},` + userHi + `}`, "response_format.type"},
		{"json_schema without a schema", `{"response_format":{"type":"json_schema","json_schema":{"name":"SECRET"}},` + userHi + `}`, "response_format.json_schema.schema"},
		{"parameters of another type", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string","description":"SECRET"}}}],` + userHi + `}`, "tools[0].function.parameters.type"},
		{"unknown reasoning effort", `{"reasoning_effort":"SECRET",` + userHi + `}`, "reasoning_effort"},
		{"audio output", `{"audio":{"voice":"alloy","format":"wav"},` + userHi + `}`, "audio"},
		{"audio modality", `{"modalities":["text","audio"],` + userHi + `}`, "modalities"},
		{"functions", `{"functions":[{"name":"f"}],` + userHi + `}`, "functions"},
		{"web search", `{"web_search_options":{},` + userHi + `}`, "web_search_options"},
		{"temperature a string", `{"temperature":"SECRET",` + userHi + `}`, "temperature"},
		{"stop of numbers", `{"stop":[1],` + userHi + `}`, "stop"},
		{"unknown role", `{"messages":[{"role":"SECRET","content":"SECRET"}]}`, "messages[0].role"},
		{"message not an object", `{"messages":["SECRET"]}`, "messages[0]"},
		{"audio input", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"SECRET","format":"wav"}}]}]}`, "messages[0].content[0]"},
		{"file by id", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-SECRET"}}]}]}`, "messages[0].content[0].file"},
		{"file not a PDF", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/plain;base64,U0VDUkVU"}}]}]}`, "messages[0].content[0].file.file_data"},
		{"image ftp URL", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://SECRET"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"image data URL not base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/svg+xml,<svg>SECRET"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"unknown part", `{"messages":[{"role":"user","content":[{"type":"video","video":"SECRET"}]}]}`, "messages[0].content[0].type"},
		{"arguments not an object", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[\"SECRET\"]"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"arguments not JSON", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"SECRET"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"tool call without id", `{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].id"},
		{"custom tool call", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"f","input":"SECRET"}}]}]}`, "messages[0].tool_calls[0].type"},
		{"legacy function_call message", `{"messages":[{"role":"assistant","function_call":{"name":"f","arguments":"SECRET"}}]}`, "messages[0].function_call"},
		{"tool message without id", `{"messages":[{"role":"tool","content":"SECRET"}]}`, "messages[0].tool_call_id"},
		{"custom tool", `{"tools":[{"type":"custom","custom":{"name":"SECRET"}}],` + userHi + `}`, "tools[0].type"},
		{"allowed_tools choice", `{"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}},` + userHi + `}`, "tool_choice.type"},
		{"system image", `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/SECRET"}}]},{"role":"user","content":"hi"}]}`, "messages[0].content[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := ChatToMessages([]byte(tt.body), "up", nil)
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("ChatToMessages = %s, %v; want a *RequestError", out, err)
			}
			if re.Param != tt.param || !strings.HasPrefix(re.Message, tt.param) {
				t.Errorf("error %+v, want param %q", re, tt.param)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q quotes the request", err)
			}
		})
	}
}

func TestMessagesToChatParameters(t *testing.T) {
	tests := []struct {
		name, body, key, want string
	}{
		{"max_tokens", `{"max_tokens":10,` + userHi + `}`, "max_completion_tokens", `10`},
		{"no max_tokens", `{` + userHi + `}`, "max_completion_tokens", `null`},
		{"stop_sequences", `{"stop_sequences":["a"],` + userHi + `}`, "stop", `["a"]`},
		{"temperature", `{"temperature":0.2,` + userHi + `}`, "temperature", `0.2`},
		{"top_k dropped", `{"top_k":5,` + userHi + `}`, "top_k", `null`},
		{"metadata.user_id", `{"metadata":{"user_id":"u"},` + userHi + `}`, "user", `"u"`},
		{"stream asks for usage", `{"stream":true,` + userHi + `}`, "stream_options", `{"include_usage":true}`},
		{"not streaming", `{"stream":false,` + userHi + `}`, "stream_options", `null`},
		{"thinking dropped", `{"thinking":{"type":"enabled","budget_tokens":1024},` + userHi + `}`, "thinking", `null`},
		{"system blocks", `{"system":[{"type":"text","text":"A"}],` + userHi + `}`, "messages", `[{"content":"A","role":"system"},{"content":"hi","role":"user"}]`},
		{"empty system left out", `{"system":"",` + userHi + `}`, "messages", `[{"content":"hi","role":"user"}]`},
		{"empty user turn kept empty", `{"messages":[{"role":"user","content":[]}]}`, "messages", `[{"content":"","role":"user"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MessagesToChat([]byte(tt.body), "up")
			if err != nil {
				t.Fatal(err)
			}
			if err := checkChatRequest(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := asJSON(member(t, out, tt.key)); got != tt.want {
				t.Errorf("%s = %s, want %s\n%s", tt.key, got, tt.want, out)
			}
		})
	}
}

func TestMessagesToChatToolChoice(t *testing.T) {
	const tools = `"tools":[{"name":"f","input_schema":{"type":"object"}}],`
	tests := []struct {
		name, choice, want, parallel string
	}{
		{"absent", ``, `null`, `null`},
		{"auto", `"tool_choice":{"type":"auto"},`, `"auto"`, `null`},
		{"any", `"tool_choice":{"type":"any"},`, `"required"`, `null`},
		{"none", `"tool_choice":{"type":"none"},`, `"none"`, `null`},
		{"tool", `"tool_choice":{"type":"tool","name":"f"},`, `{"function":{"name":"f"},"type":"function"}`, `null`},
		{"no parallel", `"tool_choice":{"type":"auto","disable_parallel_tool_use":true},`, `"auto"`, `false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MessagesToChat([]byte(`{`+tools+tt.choice+userHi+`}`), "up")
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(member(t, out, "tool_choice")); got != tt.want {
				t.Errorf("tool_choice = %s, want %s", got, tt.want)
			}
			if got := asJSON(member(t, out, "parallel_tool_calls")); got != tt.parallel {
				t.Errorf("parallel_tool_calls = %s, want %s", got, tt.parallel)
			}
		})
	}
}

func TestMessagesToChatRefuses(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"not JSON", `{`, ""},
		{"no messages", `{"max_tokens":1}`, "messages"},
		{"server tool", `{"tools":[{"type":"web_search_20250305","name":"web_search"}],` + userHi + `}`, "tools[0].type"},
		{"mcp servers", `{"mcp_servers":[{"type":"url","url":"https://SECRET"}],` + userHi + `}`, "mcp_servers"},
		{"role system in messages", `{"messages":[{"role":"system","content":"SECRET"}]}`, "messages[0].role"},
		{"content a number", `{"messages":[{"role":"user","content":7}]}`, "messages[0].content"},
		{"image by file id", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"SECRET"}}]}]}`, "messages[0].content[0].source.type"},
		{"document by url", `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://SECRET"}}]}]}`, "messages[0].content[0].source"},
		{"search result block", `{"messages":[{"role":"user","content":[{"type":"search_result","source":"SECRET"}]}]}`, "messages[0].content[0].type"},
		{"server tool use in history", `{"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{"q":"SECRET"}}]}]}`, "messages[0].content[0].type"},
		{"document inside a tool result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"SECRET"}}]}]}]}`, "messages[0].content[0].content[0].type"},
		{"tool choice of another kind", `{"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"SECRET"},` + userHi + `}`, "tool_choice.type"},
		{"image in tool result, bad source", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"file","file_id":"SECRET"}}]}]}]}`, "messages[0].content[0].content[0].source.type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MessagesToChat([]byte(tt.body), "up")
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("MessagesToChat = %s, %v; want a *RequestError", out, err)
			}
			if re.Param != tt.param {
				t.Errorf("error %+v, want param %q", re, tt.param)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q quotes the request", err)
			}
		})
	}
}

// Translating there and back keeps what both APIs can say: roles, text, images,
// tool calls with their arguments and results.
func TestRequestRoundTrip(t *testing.T) {
	const in = `{"model":"m","max_tokens":50,"stop":["x"],"temperature":0.5,"messages":[
		{"role":"system","content":"sys"},
		{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},
		{"role":"assistant","content":"calling","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2]}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"done"}],
		"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],"tool_choice":"required"}`
	mid, _, err := ChatToMessages([]byte(in), "claude", nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := MessagesToChat(mid, "gpt")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkChatRequest(back); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []oToolCall     `json:"tool_calls"`
			ID        string          `json:"tool_call_id"`
		} `json:"messages"`
		MaxTokens  int             `json:"max_completion_tokens"`
		Stop       []string        `json:"stop"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"system", "user", "assistant", "tool"}) || got.MaxTokens != 50 ||
		!reflect.DeepEqual(got.Stop, []string{"x"}) || string(got.ToolChoice) != `"required"` {
		t.Fatalf("round trip lost something:\n%s", back)
	}
	if string(got.Messages[1].Content) != `[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]` {
		t.Errorf("user content = %s", got.Messages[1].Content)
	}
	if tc := got.Messages[2].ToolCalls; len(tc) != 1 || tc[0].ID != "c1" || tc[0].Function.Arguments != `{"a":[1,2]}` || string(got.Messages[2].Content) != `"calling"` {
		t.Errorf("assistant = %+v %s", tc, got.Messages[2].Content)
	}
	if got.Messages[3].ID != "c1" || string(got.Messages[3].Content) != `"done"` {
		t.Errorf("tool message = %+v", got.Messages[3])
	}
}

func TestWithStreamUsage(t *testing.T) {
	tests := []struct {
		name, in, want string
		asked          bool
	}{
		{"absent", `{"model":"m","stream":true}`, `{"stream_options":{"include_usage":true},"model":"m","stream":true}`, false},
		{"absent, whitespace kept", " {\n \"model\": \"m\" }\n", " {\"stream_options\":{\"include_usage\":true},\n \"model\": \"m\" }\n", false},
		{"empty object", `{}`, `{"stream_options":{"include_usage":true}}`, false},
		{"asked already", `{"model":"m","stream_options":{"include_usage":true}}`, `{"model":"m","stream_options":{"include_usage":true}}`, true},
		{"asked false", `{"model":"m","stream_options":{"include_usage":false}}`, `{"model":"m","stream_options":{"include_usage":true}}`, false},
		{"other options kept", `{"stream_options":{"include_obfuscation":false},"model":"m"}`, `{"stream_options":{"include_usage":true,"include_obfuscation":false},"model":"m"}`, false},
		{"null", `{"model":"m","stream_options":null}`, `{"model":"m","stream_options":{"include_usage":true}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, asked, err := WithStreamUsage([]byte(tt.in))
			if err != nil || string(out) != tt.want || asked != tt.asked {
				t.Errorf("WithStreamUsage = %s, %v, %v\nwant %s, %v", out, asked, err, tt.want, tt.asked)
			}
		})
	}
	for _, bad := range []string{`{"stream_options":`, `[]`, `{"stream_options":"yes"}`} {
		if out, _, err := WithStreamUsage([]byte(bad)); err == nil {
			t.Errorf("WithStreamUsage(%s) = %s, want an error", bad, out)
		}
	}
}
