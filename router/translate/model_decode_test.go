package translate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Every request the golden tests translate decodes into the model.
func TestDecodeRequestGoldenInputs(t *testing.T) {
	for dir, f := range map[string]Format{"chat_request": Chat, "messages_request": Messages, "responses_request": Responses} {
		ins, _ := filepath.Glob(filepath.Join("testdata", dir, "*.in.json"))
		if len(ins) == 0 {
			t.Fatalf("no inputs in %s", dir)
		}
		for _, in := range ins {
			body, err := os.ReadFile(in)
			must(t, err)
			if _, err := DecodeRequest(f, body); err != nil {
				t.Errorf("DecodeRequest(%s, %s): %v", f, in, err)
			}
		}
	}
}

func TestDecodeChatRequest(t *testing.T) {
	body := []byte(`{"model":"m","messages":[
	{"role":"system","content":"Be brief.","cache_control":{"type":"ephemeral"}},
	{"role":"user","content":[{"type":"text","text":"What is \"this\"?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]},
	{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]},
	{"role":"tool","tool_call_id":"call_1","content":"found"}],
	"max_tokens":10,"max_completion_tokens":20,"stop":"END","stream":true,"stream_options":{"include_usage":true},
	"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"},"strict":true}}],
	"tool_choice":"required","reasoning_effort":"low","response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object"}}}}`)
	r, err := DecodeRequest(Chat, body)
	must(t, err)
	if len(r.System) != 1 || string(r.System[0].Text) != `"Be brief."` || string(r.System[0].Cache) != `{"type":"ephemeral"}` {
		t.Errorf("system = %+v", r.System)
	}
	if len(r.Turns) != 3 || r.Turns[0].At != 1 || r.Turns[1].Role != RoleAssistant || r.Turns[2].Role != RoleUser {
		t.Fatalf("turns = %+v", r.Turns)
	}
	if p := r.Turns[0].Parts[0]; string(p.Text) != `"What is \"this\"?"` {
		t.Errorf("text = %s, want the escaped token as it came", p.Text)
	}
	if p := r.Turns[0].Parts[1]; p.Kind != PartImage || string(p.MediaType) != "image/png" || string(p.Data) != "iVBO" || p.At != 1 {
		t.Errorf("image = %+v", p)
	}
	if p := r.Turns[1].Parts[0]; p.Kind != PartToolCall || string(p.Args) != `"{\"q\":1}"` || !p.ArgsQuoted {
		t.Errorf("call = %+v", p)
	}
	if p := r.Turns[2].Parts[0]; p.Kind != PartToolResult || string(p.ID) != `"call_1"` || string(p.Text) != `"found"` {
		t.Errorf("result = %+v", p)
	}
	if string(r.Limits.MaxTokens) != "20" || len(r.Limits.Stop) != 1 || !r.Stream || !r.IncludeUsage {
		t.Errorf("limits %+v stream %v usage %v", r.Limits, r.Stream, r.IncludeUsage)
	}
	if r.ToolChoice.Mode != ToolAny || len(r.Tools) != 1 || string(r.Tools[0].Strict) != "true" || r.Reasoning.Effort != "low" || string(r.Output.Name) != `"a"` {
		t.Errorf("tools %+v choice %+v reasoning %+v output %+v", r.Tools, r.ToolChoice, r.Reasoning, r.Output)
	}
}

func TestDecodeMessagesRequest(t *testing.T) {
	body := []byte(`{"model":"m","max_tokens":100,"top_k":5,"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],
	"messages":[{"role":"user","content":"hi"},
	{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"bad"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}],
	"thinking":{"type":"enabled","budget_tokens":2048},"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true},
	"tools":[{"name":"f","input_schema":{"type":"object"}}],"stop_sequences":["x","y"],"metadata":{"user_id":"u"}}`)
	r, err := DecodeRequest(Messages, body)
	must(t, err)
	if len(r.Turns) != 3 || r.Turns[1].Parts[0].Kind != PartThinking || string(r.Turns[1].Parts[0].Signature) != `"sig"` {
		t.Fatalf("turns = %+v", r.Turns)
	}
	res := r.Turns[2].Parts[0]
	if res.Kind != PartToolResult || !res.IsError || len(res.Content) != 2 || res.Content[1].Kind != PartImage {
		t.Errorf("result = %+v", res)
	}
	if r.Reasoning.Budget != 2048 || string(r.Limits.TopK) != "5" || len(r.Limits.Stop) != 2 || string(r.User) != `"u"` {
		t.Errorf("reasoning %+v limits %+v user %s", r.Reasoning, r.Limits, r.User)
	}
	if r.ToolChoice.Mode != ToolNamed || string(r.ParallelToolCalls) != "false" {
		t.Errorf("choice %+v parallel %s", r.ToolChoice, r.ParallelToolCalls)
	}
}

func TestDecodeResponsesRequest(t *testing.T) {
	body := []byte(`{"model":"m","instructions":"I","include":["reasoning.encrypted_content"],"reasoning":{"effort":"high","summary":"auto"},
	"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"sig"},
	{"type":"function_call","call_id":"c1","name":"f","arguments":""},
	{"type":"function_call_output","call_id":"c1","output":[{"type":"input_image","image_url":"data:image/jpeg;base64,AA=="}]}],
	"text":{"format":{"type":"json_object"}},"max_output_tokens":50,"stream":true}`)
	r, err := DecodeRequest(Responses, body)
	must(t, err)
	if len(r.System) != 1 || len(r.Turns) != 4 {
		t.Fatalf("system %+v turns %+v", r.System, r.Turns)
	}
	if p := r.Turns[1].Parts[0]; p.Kind != PartThinking || string(p.Text) != `"think"` || string(p.Signature) != `"sig"` {
		t.Errorf("thinking = %+v", p)
	}
	if p := r.Turns[3].Parts[0]; p.Kind != PartToolResult || len(p.Content) != 1 || p.Content[0].Kind != PartImage {
		t.Errorf("output = %+v", p)
	}
	if !r.Output.JSONObject || !r.Reasoning.Encrypted || !r.Reasoning.Summary || r.Reasoning.Effort != "high" || !r.Stream {
		t.Errorf("output %+v reasoning %+v", r.Output, r.Reasoning)
	}
}

// A refusal by an encoder names the client's own field.
func TestEncodeRequestNamesClientFields(t *testing.T) {
	tests := []struct {
		from        Format
		to          Format
		body, param string
	}{
		{Chat, Messages, `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[1].function.arguments"},
		{Responses, Converse, `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"7"}]}`, "input[0].arguments"},
		{Chat, Messages, `{"messages":[],"response_format":{"type":"json_object"}}`, "response_format.type"},
		{Responses, Messages, `{"input":"x","text":{"format":{"type":"json_object"}}}`, "text.format.type"},
	}
	for _, tt := range tests {
		_, _, err := EncodeRequest(tt.from, []byte(tt.body), tt.to, "up", nil)
		var re *RequestError
		if !errors.As(err, &re) || re.Param != tt.param {
			t.Errorf("EncodeRequest(%s to %s, %s) = %v, want a RequestError naming %s", tt.from, tt.to, tt.body, err, tt.param)
		}
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	tests := []struct {
		f           Format
		body, param string
	}{
		{Chat, `{"messages":[],"n":2}`, "n"},
		{Chat, `{"messages":[],"logprobs":true}`, "logprobs"},
		{Chat, `{"messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "messages[0].content[0]"},
		{Chat, `{"messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
		{Chat, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"f"}}]}]}`, "messages[0].tool_calls[0].type"},
		{Chat, `{"messages":[],"tool_choice":{"type":"allowed_tools"}}`, "tool_choice.type"},
		{Chat, `{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}]}`, "tools[0].function.parameters.type"},
		{Responses, `{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"array"}}]}`, "tools[0].parameters.type"},
		{Chat, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x"}}]}]}`, "messages[0].content[0].image_url.url"},
		{Chat, `{"messages":[],"tools":[{"type":"custom"}]}`, "tools[0].type"},
		{Chat, `{"messages":[],"reasoning_effort":"max"}`, "reasoning_effort"},
		{Messages, `{"messages":[{"role":"user","content":[{"type":"server_tool_use"}]}]}`, "messages[0].content[0].type"},
		{Messages, `{"messages":[],"tools":[{"type":"web_search_20250305","name":"w"}]}`, "tools[0].type"},
		{Messages, `{"messages":[],"tool_choice":{"type":"sometimes"}}`, "tool_choice.type"},
		{Responses, `{"input":"x","previous_response_id":"r"}`, "previous_response_id"},
		{Responses, `{"input":[{"type":"web_search_call"}]}`, "input[0].type"},
		{Responses, `{"input":[{"type":"function_call","call_id":"","name":"f"}]}`, "input[0].call_id"},
		{Responses, `{"input":"x","tools":[{"type":"file_search"}]}`, "tools[0].type"},
	}
	for _, tt := range tests {
		_, err := DecodeRequest(tt.f, []byte(tt.body))
		var re *RequestError
		if !errors.As(err, &re) || re.Param != tt.param {
			t.Errorf("DecodeRequest(%s, %s) = %v, want a RequestError naming %s", tt.f, tt.body, err, tt.param)
		}
	}
}
