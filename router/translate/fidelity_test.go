package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Translation fidelity: each case is a way a mixed pool used to break an
// agent loop or lose meaning, driven the way an SDK would meet it.

// sse joins events into a stream body.
func sse(events ...string) []byte { return []byte(strings.Join(events, "")) }

func aEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
func oEvent(data string) string       { return "data: " + data + "\n\n" }

const aStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`

// A streamed tool call without input gets "{}" as its arguments, as the
// unary answer does, never "" (which a strict client fails to parse).
func TestStreamedToolCallWithoutArguments(t *testing.T) {
	in := sse(aEvent("message_start", aStart),
		aEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_time","input":{}}}`),
		aEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
		aEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`),
		aEvent("message_stop", `{"type":"message_stop"}`))
	out, err := feedPieces(NewModelStream(Messages, Chat, Answer{Model: "m"}), in)
	must(t, err)
	r, err := checkChatStream(string(out), true)
	must(t, err)
	if len(r.Tools) != 1 || r.Tools[0].Args != "{}" {
		t.Errorf("tools %+v, want one call with arguments {}\n%s", r.Tools, out)
	}
}

// Tool ids an OpenAI-compatible server makes (vLLM serving Kimi K2) reach
// an Anthropic client valid for Anthropic, so its next turn can go to an
// Anthropic target; unary and streaming alike.
func TestToolIDsForAnthropicClients(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	unary := `{"id":"c","model":"kimi-k2","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{}"}},` +
		`{"id":"functions.get_weather_0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
	out, _, err := TranslateAnswer(Chat, []byte(unary), Messages, Answer{Model: "m", IDs: NewToolIDs([]byte(`{"messages":[]}`), Messages)})
	must(t, err)
	m, err := checkMessage(out)
	must(t, err)
	var ids []string
	for _, b := range m.Content {
		ids = append(ids, b.ID)
	}
	if len(ids) != 2 || !valid.MatchString(ids[0]) || ids[0] == ids[1] {
		t.Errorf("unary ids %q: want two distinct valid ids", ids)
	}

	stream := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), oEvent("[DONE]"))
	sout, err := feedPieces(NewModelStream(Chat, Messages, Answer{Model: "m"}), stream)
	must(t, err)
	r, err := checkMessagesStream(string(sout), true)
	must(t, err)
	if len(r.Tools) != 1 || r.Tools[0].ID != "functions_get_weather_0" {
		t.Errorf("streamed tools %+v", r.Tools)
	}
}

// Ids an Anthropic target would refuse become valid on the way in, the
// same in a call and its result, and two that would become one stay two.
func TestToolIDsOnTheWayIn(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[` +
		`{"id":"call.1","type":"function","function":{"name":"f","arguments":"{}"}},` +
		`{"id":"call:1","type":"function","function":{"name":"f","arguments":"{}"}},` +
		`{"id":"call_1_2","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call:1","content":"b"},{"role":"tool","tool_call_id":"call.1","content":"a"},{"role":"tool","tool_call_id":"call_1_2","content":"c"}]}`
	ids := NewToolIDs([]byte(body), Chat)
	out, _, err := ChatToMessages([]byte(body), "claude", ids)
	must(t, err)
	must(t, checkMessagesRequest(out)) // valid ids, each result for a known call
	var raw struct {
		Messages []struct {
			Content []map[string]any
		}
	}
	must(t, json.Unmarshal(out, &raw))
	uses := map[string]bool{}
	for _, b := range raw.Messages[1].Content {
		uses[b["id"].(string)] = true
	}
	if len(uses) != 3 {
		t.Fatalf("tool_use ids %v, want three distinct ones", uses)
	}
	results := map[string]string{} // content -> tool_use_id
	for _, b := range raw.Messages[2].Content {
		results[b["content"].(string)] = b["tool_use_id"].(string)
	}
	if results["a"] != "call_1" || results["b"] == results["a"] || results["c"] != "call_1_2" || results["b"] == "call_1_2" {
		t.Errorf("results %v: call.1 -> call_1, call:1 -> a third id, call_1_2 kept", results)
	}
	// The answer's ids the gateway made up come back as the client wrote them.
	ans := `{"id":"m","type":"message","role":"assistant","model":"c","content":[{"type":"tool_use","id":"call_1","name":"f","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`
	chat, _, err := TranslateAnswer(Messages, []byte(ans), Chat, Answer{Model: "m", IDs: ids})
	must(t, err)
	if !strings.Contains(string(chat), `"id":"call.1"`) {
		t.Errorf("answer %s: want the id given back as call.1", chat)
	}
}

// Rules an Anthropic target holds a request to, which a mixed pool's
// history breaks.
func TestAnthropicRules(t *testing.T) {
	t.Run("temperature with top_p", func(t *testing.T) {
		out, _, err := ChatToMessages([]byte(`{"temperature":0.5,"top_p":0.9,`+userHi+`}`), "claude", nil)
		must(t, err)
		must(t, checkMessagesRequest(out))
		if member(t, out, "temperature") != 0.5 || member(t, out, "top_p") != nil {
			t.Errorf("%s: want temperature only", out)
		}
		fit := FitForAnthropic([]byte(`{"model":"c","temperature":0.5,"top_p":0.9,"max_tokens":10,` + userHi + `}`))
		if member(t, fit, "top_p") != nil || member(t, fit, "temperature") != 0.5 || member(t, fit, "max_tokens") != 10.0 {
			t.Errorf("FitForAnthropic = %s", fit)
		}
	})
	t.Run("thinking after a turn without thinking", func(t *testing.T) {
		history := `"messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"w","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"sunny"}]}]`
		body := []byte(`{"model":"c","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2000},` + history + `}`)
		if fit := FitForAnthropic(body); member(t, fit, "thinking") != nil || member(t, fit, "messages") == nil {
			t.Errorf("FitForAnthropic kept thinking: %s", fit)
		}
		withBlock := strings.Replace(string(body), `"content":[{"type":"tool_use"`, `"content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"tool_use"`, 1)
		if fit := FitForAnthropic([]byte(withBlock)); string(fit) != withBlock {
			t.Errorf("a history with its thinking block changed: %s", fit)
		}
		chat := `{"reasoning_effort":"high","messages":[{"role":"user","content":"weather?"},{"role":"assistant","tool_calls":[{"id":"t1","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"t1","content":"sunny"}]}`
		out, _, err := ChatToMessages([]byte(chat), "claude", nil)
		must(t, err)
		must(t, checkMessagesRequest(out))
		if member(t, out, "thinking") != nil {
			t.Errorf("%s: thinking after a tool turn without a thinking block", out)
		}
	})
	t.Run("an empty parameters schema", func(t *testing.T) {
		for _, params := range []string{`{}`, `{"properties":{"a":{"type":"string"}}}`, `null`} {
			out, _, err := ChatToMessages([]byte(`{"tools":[{"type":"function","function":{"name":"f","parameters":`+params+`}}],`+userHi+`}`), "claude", nil)
			must(t, err)
			must(t, checkMessagesRequest(out)) // input_schema of type object
		}
	})
}

// Structured outputs cross in both directions, and so does strict on tools.
func TestStructuredOutputs(t *testing.T) {
	schema := `{"type":"object","properties":{"answer":{"type":"number"}},"required":["answer"],"additionalProperties":false}`
	out, err := MessagesToChat([]byte(`{"model":"c","max_tokens":100,"output_config":{"format":{"type":"json_schema","schema":`+schema+`}},`+
		`"tools":[{"name":"f","strict":true,"input_schema":{"type":"object"}}],`+userHi+`}`), "gpt")
	must(t, err)
	must(t, checkChatRequest(out))
	rf := asJSON(member(t, out, "response_format"))
	if !strings.Contains(rf, `"type":"json_schema"`) || !strings.Contains(rf, `"answer"`) || !strings.Contains(asJSON(member(t, out, "tools")), `"strict":true`) {
		t.Errorf("response_format %s, tools %s", rf, asJSON(member(t, out, "tools")))
	}
	back, _, err := ChatToMessages(out, "claude", nil)
	must(t, err)
	must(t, checkMessagesRequest(back))
	if oc := asJSON(member(t, back, "output_config")); !strings.Contains(oc, `"json_schema"`) || !strings.Contains(oc, `"answer"`) ||
		!strings.Contains(asJSON(member(t, back, "tools")), `"strict":true`) {
		t.Errorf("output_config %s, tools %s", oc, asJSON(member(t, back, "tools")))
	}
}

// reasoning_effort and the thinking budget map both ways, each effort's
// budget coming back as itself.
func TestReasoningEffortThinking(t *testing.T) {
	for _, effort := range []string{"low", "medium", "high"} {
		out, _, err := ChatToMessages([]byte(`{"reasoning_effort":"`+effort+`","temperature":0.3,`+userHi+`}`), "claude", nil)
		must(t, err)
		must(t, checkMessagesRequest(out)) // a budget below max_tokens, no temperature beside it
		back, err := MessagesToChat(out, "gpt")
		must(t, err)
		if got := member(t, back, "reasoning_effort"); got != effort {
			t.Errorf("%s -> %s -> %v", effort, asJSON(member(t, out, "thinking")), got)
		}
	}
	out, _, err := ChatToMessages([]byte(`{"reasoning_effort":"high","max_tokens":1000,`+userHi+`}`), "claude", nil)
	must(t, err)
	if member(t, out, "thinking") != nil {
		t.Errorf("%s: a limit below the smallest budget leaves no room for thinking", out)
	}
}

// An OpenAI refusal reaches an Anthropic client as stop_reason refusal, and
// an Anthropic one reaches an OpenAI client as a content filter stop, what
// it said before kept as content (TestRefusalUnaryAndStreamAgree: as a
// stream must say it).
func TestRefusals(t *testing.T) {
	chat := `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`
	out, _, err := TranslateAnswer(Chat, []byte(chat), Messages, Answer{Model: "m"})
	must(t, err)
	if m, err := checkMessage(out); err != nil || m.StopReason != "refusal" {
		t.Errorf("%s (%v): want stop_reason refusal", out, err)
	}
	stream := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","refusal":"No."}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), oEvent("[DONE]"))
	sout, err := feedPieces(NewModelStream(Chat, Messages, Answer{Model: "m"}), stream)
	must(t, err)
	if r, err := checkMessagesStream(string(sout), true); err != nil || r.Stop != "refusal" || r.Text != "No." {
		t.Errorf("stream %+v (%v)", r, err)
	}

	msg := `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"I won't."}],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":1}}`
	cout, _, err := TranslateAnswer(Messages, []byte(msg), Chat, Answer{Model: "m"})
	must(t, err)
	var c struct {
		Choices []struct {
			Message struct{ Content, Refusal *string }
		}
	}
	must(t, json.Unmarshal(cout, &c))
	if m := c.Choices[0].Message; m.Content == nil || *m.Content != "I won't." || m.Refusal != nil || !strings.Contains(string(cout), `"finish_reason":"content_filter"`) {
		t.Errorf("%s: want the text as content, finish_reason content_filter", cout)
	}
}

// Cache writes are shown to OpenAI clients, unary and streaming.
func TestCacheWritesForOpenAIClients(t *testing.T) {
	msg := `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":2}}`
	out, _, err := TranslateAnswer(Messages, []byte(msg), Chat, Answer{Model: "m"})
	must(t, err)
	usage := asJSON(member(t, out, "usage"))
	if !strings.Contains(usage, `"cache_creation_input_tokens":1000`) || !strings.Contains(usage, `"cache_write_tokens":1000`) || !strings.Contains(usage, `"prompt_tokens":1005`) {
		t.Errorf("usage %s", usage)
	}
}

// cache_control marks on OpenAI content parts, messages and tools are
// carried to the Anthropic blocks they mark.
func TestCacheControlCarried(t *testing.T) {
	cc := `{"type":"ephemeral"}`
	body := `{"messages":[{"role":"system","content":[{"type":"text","text":"long system","cache_control":` + cc + `}]},` +
		`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"long doc","cache_control":` + cc + `}]},` +
		`{"role":"assistant","content":"ok","cache_control":` + cc + `},{"role":"user","content":"q"}],` +
		`"tools":[{"type":"function","function":{"name":"f"},"cache_control":` + cc + `}]}`
	out, _, err := ChatToMessages([]byte(body), "claude", nil)
	must(t, err)
	must(t, checkMessagesRequest(out))
	if n := strings.Count(string(out), `"cache_control":{"type":"ephemeral"}`); n != 4 {
		t.Errorf("%d cache_control marks, want 4 (system, user part, assistant message, tool):\n%s", n, out)
	}
}

// The stop sequence that matched crosses both ways (OpenAI-compatible
// servers that say it put it in choices[].stop_reason).
func TestMatchedStopSequence(t *testing.T) {
	chat := `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"1 2 3"},"finish_reason":"stop","stop_reason":"4"}]}`
	out, _, err := TranslateAnswer(Chat, []byte(chat), Messages, Answer{Model: "m"})
	must(t, err)
	if m, err := checkMessage(out); err != nil || m.StopReason != "stop_sequence" || m.StopSequence == nil || *m.StopSequence != "4" {
		t.Errorf("%s (%v)", out, err)
	}
	msg := `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"1 2 3"}],"stop_reason":"stop_sequence","stop_sequence":"4","usage":{"input_tokens":1,"output_tokens":1}}`
	cout, _, err := TranslateAnswer(Messages, []byte(msg), Chat, Answer{Model: "m"})
	must(t, err)
	if !strings.Contains(string(cout), `"finish_reason":"stop","stop_reason":"4"`) {
		t.Errorf("%s", cout)
	}
}

// A malformed upstream chunk ends the stream with an error, never a clean
// end_turn; a tool input that is not an object is a broken answer.
func TestMalformedUpstream(t *testing.T) {
	for name, chunk := range map[string]string{
		"content a number":      `{"id":"c","choices":[{"index":0,"delta":{"content":12}}]}`,
		"refusal an object":     `{"id":"c","choices":[{"index":0,"delta":{"refusal":{}}}]}`,
		"tool_calls an object":  `{"id":"c","choices":[{"index":0,"delta":{"tool_calls":{}}}]}`,
		"arguments a number":    `{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":1}}]}}]}`,
		"choices a string":      `{"id":"c","choices":"x"}`,
		"finish_reason numeric": `{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":3}]}`,
	} {
		in := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"a"}}]}`), oEvent(chunk),
			oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), oEvent("[DONE]"))
		if _, err := feedPieces(NewModelStream(Chat, Messages, Answer{Model: "m"}), in); !errors.Is(err, ErrInvalidUpstream) {
			t.Errorf("%s: err %v, want ErrInvalidUpstream", name, err)
		}
	}
	unary := `{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"notobj"}],"stop_reason":"tool_use"}`
	if out, _, err := TranslateAnswer(Messages, []byte(unary), Chat, Answer{Model: "m"}); !errors.Is(err, ErrInvalidUpstream) {
		t.Errorf("tool_use input a string: %s, %v", out, err)
	}
	stream := sse(aEvent("message_start", aStart),
		aEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":"notobj"}}`))
	if _, err := feedPieces(NewModelStream(Messages, Chat, Answer{Model: "m"}), stream); !errors.Is(err, ErrInvalidUpstream) {
		t.Errorf("streamed tool_use input a string: %v", err)
	}
}

// The model an answer names is the upstream's, unless the client's name is
// asked for.
func TestAnswerModel(t *testing.T) {
	msg := `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	for _, tt := range []struct {
		a    Answer
		want string
	}{
		{Answer{Model: "claude-sonnet-4-5", UpstreamModel: true}, "claude-sonnet-4-5-20250929"},
		{Answer{Model: "my-alias"}, "my-alias"},
	} {
		out, _, err := TranslateAnswer(Messages, []byte(msg), Chat, tt.a)
		must(t, err)
		if got := member(t, out, "model"); got != tt.want {
			t.Errorf("%+v: model %v, want %s", tt.a, got, tt.want)
		}
		sout, err := NewModelStream(Messages, Chat, tt.a).Feed(nil, sse(aEvent("message_start", aStart)))
		must(t, err)
		want := tt.want
		if tt.a.UpstreamModel {
			want = "claude-sonnet-4-5-20250929"
		}
		if !strings.Contains(string(sout), `"model":"`+want+`"`) {
			t.Errorf("%+v: stream %s", tt.a, sout)
		}
	}
}

// geminiTurnTwo is the next turn's request of a client that got the Gemini
// answer in (a testdata/gemini_response fixture) translated for it: the
// answer's content (Messages) or output items (Responses) sent back as
// they came, then a result for each call.
func geminiTurnTwo(t *testing.T, client Format, fixture string) []byte {
	t.Helper()
	in, err := os.ReadFile("testdata/gemini_response/" + fixture)
	must(t, err)
	out, _, err := TranslateAnswer(Gemini, in, client, goldenAnswer)
	must(t, err)
	var answer struct {
		Content []map[string]any `json:"content"`
		Output  []map[string]any `json:"output"`
	}
	must(t, json.Unmarshal(out, &answer))
	var req map[string]any
	switch client {
	case Messages:
		var results []any
		for _, b := range answer.Content {
			if b["type"] == "tool_use" {
				results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"})
			}
		}
		msgs := []any{
			map[string]any{"role": "user", "content": "weather?"},
			map[string]any{"role": "assistant", "content": answer.Content},
		}
		if results != nil {
			msgs = append(msgs, map[string]any{"role": "user", "content": results})
		} else {
			msgs = append(msgs, map[string]any{"role": "user", "content": "and?"})
		}
		req = map[string]any{"model": "m", "max_tokens": 4096, "messages": msgs,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}
	case Responses:
		input := []any{map[string]any{"role": "user", "content": "weather?"}}
		for _, it := range answer.Output {
			delete(it, "status")
			input = append(input, it)
		}
		req = map[string]any{"model": "m", "input": input, "include": []any{"reasoning.encrypted_content"}}
	}
	body, err := json.Marshal(req)
	must(t, err)
	return body
}

// A signature Gemini gave reaches a Messages or Responses client (a
// thinking block, a reasoning item's encrypted_content), goes back to
// Gemini on the part it came with, and never to Anthropic or Bedrock.
func TestGeminiSignatureRoundTrip(t *testing.T) {
	for _, client := range []Format{Messages, Responses} {
		t.Run(client.String(), func(t *testing.T) {
			body := geminiTurnTwoWithOutputs(t, client, "function_calls.in.json")
			if !bytes.Contains(body, []byte(`gemini~next~c2ln`)) {
				t.Fatalf("the client never got the signature: %s", body)
			}
			r, err := DecodeRequest(client, body)
			must(t, err)
			gem, err := EncodeGemini(r)
			must(t, err)
			var g struct {
				Contents []struct {
					Role  string           `json:"role"`
					Parts []map[string]any `json:"parts"`
				} `json:"contents"`
			}
			must(t, json.Unmarshal(gem, &g))
			model := g.Contents[1]
			if model.Role != "model" || len(model.Parts) != 2 {
				t.Fatalf("model turn = %+v, want the two calls: %s", model, gem)
			}
			if sig := model.Parts[0]["thoughtSignature"]; sig != "c2ln" || model.Parts[0]["functionCall"] == nil {
				t.Errorf("first call's part = %v, want functionCall with thoughtSignature c2ln", model.Parts[0])
			}
			if _, ok := model.Parts[1]["thoughtSignature"]; ok {
				t.Errorf("second call's part = %v, want no signature (Gemini gave none)", model.Parts[1])
			}
			for name, out := range encodeElsewhere(t, r) {
				if bytes.Contains(out, []byte("gemini")) || bytes.Contains(out, []byte("c2ln")) {
					t.Errorf("%s got Gemini's signature: %s", name, out)
				}
			}
		})
	}
}

// encodeElsewhere is r for the upstreams that cannot check a Gemini
// signature.
func encodeElsewhere(t *testing.T, r *Request) map[string][]byte {
	t.Helper()
	msgs, err := EncodeMessages(r, "claude", nil)
	must(t, err)
	must(t, checkMessagesRequest(msgs))
	conv, err := EncodeConverse(r, nil)
	must(t, err)
	chat, err := EncodeChat(r, "gpt")
	must(t, err)
	return map[string][]byte{"messages": msgs, "converse": conv, "chat": chat}
}

// geminiTurnTwoWithOutputs is geminiTurnTwo with a Responses client's
// function_call_output items after its calls.
func geminiTurnTwoWithOutputs(t *testing.T, client Format, fixture string) []byte {
	body := geminiTurnTwo(t, client, fixture)
	if client != Responses {
		return body
	}
	var req map[string]any
	must(t, json.Unmarshal(body, &req))
	input := req["input"].([]any)
	for _, it := range input {
		if m, ok := it.(map[string]any); ok && m["type"] == "function_call" {
			input = append(input, map[string]any{"type": "function_call_output", "call_id": m["call_id"], "output": "ok"})
		}
	}
	req["input"] = input
	out, err := json.Marshal(req)
	must(t, err)
	return out
}

// A Messages history holding a Gemini-signed thinking block, going to an
// Anthropic target as it came, loses that block (Anthropic would refuse the
// request); thinking then goes off, as after any tool turn without it.
func TestFitForAnthropicDropsGeminiThinking(t *testing.T) {
	body := geminiTurnTwo(t, Messages, "function_calls.in.json")
	out := FitForAnthropic(body)
	if bytes.Contains(out, []byte("gemini")) {
		t.Fatalf("FitForAnthropic kept Gemini's signature: %s", out)
	}
	if !json.Valid(out) || bytes.Contains(out, []byte(`"thinking":{`)) {
		t.Errorf("FitForAnthropic = %s, want valid JSON without thinking on", out)
	}
	if !strings.Contains(string(out), `"type":"tool_use"`) {
		t.Errorf("FitForAnthropic lost the calls: %s", out)
	}
	// An Anthropic signature stays.
	anth := []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqQB"},{"type":"text","text":"gemini~"}]}]}`)
	if got := FitForAnthropic(anth); !bytes.Equal(got, anth) {
		t.Errorf("FitForAnthropic changed an Anthropic history: %s", got)
	}
}

// The signature on a text answer goes back on its text; a signature Gemini
// sent on an empty last part goes back as that part.
func TestGeminiSignatureOnText(t *testing.T) {
	body := geminiTurnTwo(t, Messages, "text.in.json")
	r, err := DecodeRequest(Messages, body)
	must(t, err)
	gem, err := EncodeGemini(r)
	must(t, err)
	want := `{"role":"model","parts":[{"text":"Let me think about unicorns.","thought":true},{"text":"Unicorns are \"mythical\".","thoughtSignature":"Z3NpZw=="}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}

	r = &Request{Client: Messages, Turns: []Turn{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: tok("hi")}}},
		{Role: RoleAssistant, Parts: []Part{
			{Kind: PartText, Text: tok("hello")},
			{Kind: PartThinking, Text: tok(""), Signature: tok("gemini~next~U0lH")},
		}},
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: tok("more")}}},
	}}
	gem, err = EncodeGemini(r)
	must(t, err)
	want = `{"role":"model","parts":[{"text":"hello"},{"text":"","thoughtSignature":"U0lH"}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}
}

// An Anthropic client's prefill (its last message the assistant's text,
// which the answer continues) is refused for an OpenAI-compatible target,
// which would start a new answer, naming the message; Bedrock and Gemini
// get it as their own last assistant (model) turn, which they continue.
func TestAnthropicPrefill(t *testing.T) {
	body := []byte(`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"Name a colour as JSON."},{"role":"assistant","content":"{\"colour\":"}]}`)
	_, err := MessagesToChat(body, "gpt")
	var re *RequestError
	if !errors.As(err, &re) || re.Param != "messages[1]" {
		t.Errorf("MessagesToChat(prefill) = %v, want a refusal naming messages[1]", err)
	}
	for _, to := range []Format{Converse, Gemini} {
		out, _, err := EncodeRequest(Messages, body, to, "m", nil)
		must(t, err)
		if !bytes.Contains(out, []byte(`{"text":"{\"colour\":"}]}]`)) {
			t.Errorf("%v: %s, want the prefill as the last turn", to, out)
		}
	}
	// Calls awaiting their results are not a prefill.
	calls := []byte(`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"let me look"},{"type":"tool_use","id":"t1","name":"f","input":{}}]}]}`)
	if _, err := MessagesToChat(calls, "gpt"); err != nil {
		t.Errorf("MessagesToChat(pending calls) = %v", err)
	}
}

// A streamed Gemini answer whose last text part carries the signature
// reaches a Messages client as one text block and, after it, a block of
// the signature; sent back, the signature is on that text, and the thought
// that came unsigned goes without one.
func TestGeminiStreamedTextSignatureRoundTrip(t *testing.T) {
	in, err := os.ReadFile("testdata/gemini_stream/text_signature.in.sse")
	must(t, err)
	out, err := translateStream(NewModelStream(Gemini, Messages, goldenAnswer), in)
	must(t, err)
	var blocks []map[string]any
	for _, line := range strings.Split(string(out), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        map[string]any `json:"delta"`
		}
		must(t, json.Unmarshal([]byte(data), &ev))
		switch ev.Type {
		case "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
		case "content_block_delta":
			b := blocks[ev.Index]
			switch ev.Delta["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + ev.Delta["text"].(string)
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + ev.Delta["thinking"].(string)
			case "signature_delta":
				b["signature"] = ev.Delta["signature"]
			}
		}
	}
	if len(blocks) != 3 || blocks[1]["text"] != "Hello, world." {
		t.Fatalf("blocks %v, want the thought, one text block, the signature", blocks)
	}
	body, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": []any{
		map[string]any{"role": "user", "content": "hi"},
		map[string]any{"role": "assistant", "content": blocks},
		map[string]any{"role": "user", "content": "more"},
	}})
	must(t, err)
	r, err := DecodeRequest(Messages, body)
	must(t, err)
	gem, err := EncodeGemini(r)
	must(t, err)
	want := `{"role":"model","parts":[{"text":"Weighing it up.","thought":true},{"text":"Hello, world.","thoughtSignature":"U0lHLTE="}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}
	for name, out := range encodeElsewhere(t, r) {
		if bytes.Contains(out, []byte("gemini")) || bytes.Contains(out, []byte("Weighing")) && name == "messages" {
			t.Errorf("%s got Gemini's thinking: %s", name, out)
		}
	}
}

// A text's signature goes back on the part before its block, unless that
// part has one already: then on an empty text part, as Gemini sends one.
func TestGeminiPrevSignatureOnSignedPart(t *testing.T) {
	r := &Request{Client: Messages, Turns: []Turn{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: tok("hi")}}},
		{Role: RoleAssistant, Parts: []Part{
			{Kind: PartThinking, Text: tok(""), Signature: tok("gemini~")}, // an empty unsigned thought: nothing
			{Kind: PartThinking, Text: tok(""), Signature: tok("gemini~next~QQ==")},
			{Kind: PartToolCall, ID: tok("c1"), Name: tok("f"), Args: []byte(`{}`)},
			{Kind: PartThinking, Text: tok(""), Signature: tok("gemini~prev~Qg==")},
		}},
	}}
	gem, err := EncodeGemini(r)
	must(t, err)
	want := `{"role":"model","parts":[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"QQ=="},{"text":"","thoughtSignature":"Qg=="}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}
}
