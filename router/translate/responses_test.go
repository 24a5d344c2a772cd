package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A Responses request refused for a target that cannot serve it names the
// client's own field, never the chat field it went through.
func TestResponsesRequestRefusals(t *testing.T) {
	tests := []struct {
		name, body, param string
		toMessagesOnly    bool
	}{
		{"previous_response_id", `{"previous_response_id":"resp_SECRET","input":"hi"}`, "previous_response_id", false},
		{"store", `{"store":true,"input":"hi"}`, "store", false},
		{"conversation", `{"conversation":"conv_1","input":"hi"}`, "conversation", false},
		{"background", `{"background":true,"input":"hi"}`, "background", false},
		{"no input", `{"model":"m"}`, "input", false},
		{"item reference", `{"input":[{"type":"item_reference","id":"msg_SECRET"}]}`, "input[0]", false},
		{"web search tool", `{"tools":[{"type":"web_search"}],"input":"hi"}`, "tools[0].type", false},
		{"computer call item", `{"input":[{"type":"computer_call","call_id":"c"}]}`, "input[0].type", false},
		{"image by file id", `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-SECRET"}]}]}`, "input[0].content[0]", false},
		{"function call without call_id", `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", false},
		// Refused by the Anthropic crossing, named in Responses terms.
		{"image ftp URL", `{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"ftp://SECRET"}]}]}`, "input[0].content[1].image_url", true},
		{"arguments not an object", `{"input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c","name":"f","arguments":"[\"SECRET\"]"}]}`, "input[1].arguments", true},
		{"json_object", `{"text":{"format":{"type":"json_object"}},"input":"hi"}`, "text.format.type", true},
		{"parameters of another type", `{"tools":[{"type":"function","name":"f","parameters":{"type":"string"}}],"input":"hi"}`, "tools[0].parameters.type", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err error) {
				var re *RequestError
				if !errors.As(err, &re) || re.Param != tt.param || !strings.HasPrefix(re.Message, tt.param) || strings.Contains(re.Message, "SECRET") {
					t.Errorf("%s: error %v (%+v), want param %q", what, err, re, tt.param)
				}
			}
			if !tt.toMessagesOnly {
				_, err := ResponsesToChat([]byte(tt.body), "gpt")
				check("ResponsesToChat", err)
			}
			_, err := ResponsesToMessages([]byte(tt.body), "claude", nil)
			check("ResponsesToMessages", err)
		})
	}
}

// A Responses request whose history went through another target keeps its
// meaning: the assistant's text and calls before their outputs, reasoning
// items left out.
func TestResponsesAgentTurn(t *testing.T) {
	body := `{"model":"m","instructions":"Be brief.","input":[` +
		`{"role":"user","content":"weather in Paris?"},` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}]},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},` +
		`{"type":"function_call","call_id":"call_a","name":"weather","arguments":"{\"city\":\"Paris\"}"},` +
		`{"type":"function_call","call_id":"call_b","name":"time","arguments":""},` +
		`{"type":"function_call_output","call_id":"call_a","output":"sunny"},` +
		`{"type":"function_call_output","call_id":"call_b","output":[{"type":"input_text","text":"noon"}]}],` +
		`"tools":[{"type":"function","name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},{"type":"function","name":"time"}]}`
	chat, err := ResponsesToChat([]byte(body), "gpt")
	must(t, err)
	must(t, checkChatRequest(chat))
	var r struct {
		Messages []struct {
			Role      string
			Content   any
			ToolCalls []struct{ ID string } `json:"tool_calls"`
		}
	}
	must(t, json.Unmarshal(chat, &r))
	roles := ""
	for _, m := range r.Messages {
		roles += m.Role + " "
	}
	if roles != "system user assistant tool tool " || len(r.Messages[2].ToolCalls) != 2 || r.Messages[2].Content != "Checking." {
		t.Errorf("messages %s", chat)
	}
	msgs, err := ResponsesToMessages([]byte(body), "claude", NewToolIDs([]byte(body), Responses))
	must(t, err)
	must(t, checkMessagesRequest(msgs))
}

// The Responses answers of both upstream kinds, unary and streamed, tell
// the same story: a refusal is a refusal part, a length cut is incomplete.
func TestResponsesAnswers(t *testing.T) {
	a := Answer{Model: "m", Created: 1}
	refused := `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"No."},"finish_reason":"stop"}]}`
	out, _, err := TranslateAnswer(Chat, []byte(refused), Responses, a)
	must(t, err)
	if r, err := checkResponse(out); err != nil || r.Refusal != "No." || r.Text != "" {
		t.Errorf("%+v %v", r, err)
	}
	cut := `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"Once upon"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":2}}`
	out, _, err = TranslateAnswer(Messages, []byte(cut), Responses, a)
	must(t, err)
	if r, err := checkResponse(out); err != nil || r.Status != "incomplete" || r.Incomplete != "max_output_tokens" || r.Text != "Once upon" {
		t.Errorf("%+v %v", r, err)
	}
	stream := sse(aEvent("message_start", aStart),
		aEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		aEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I can"}}`),
		aEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
		aEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":2}}`),
		aEvent("message_stop", `{"type":"message_stop"}`))
	sout, err := feedPieces(NewModelStream(Messages, Responses, a), stream)
	must(t, err)
	// A streamed refusal is said once: the text that went out before the
	// upstream said it refused, in one message item, and the status; no
	// second item with a note.
	if r, err := checkResponsesStream(string(sout)); err != nil || r.Text != "I can" || r.Refusal != "" || r.Incomplete != "content_filter" || r.Usage == nil || r.Usage.InputTokens != 10 {
		t.Errorf("%+v %v\n%s", r, err, sout)
	}
	// Refused without a word: one refusal item says so.
	silent := sse(aEvent("message_start", aStart),
		aEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":0}}`),
		aEvent("message_stop", `{"type":"message_stop"}`))
	sout, err = feedPieces(NewModelStream(Messages, Responses, a), silent)
	must(t, err)
	if r, err := checkResponsesStream(string(sout)); err != nil || r.Text != "" || r.Refusal == "" || strings.Count(string(sout), "event: response.output_item.added") != 1 {
		t.Errorf("%+v %v\n%s", r, err, sout)
	}
	// A tool call without arguments ends with "{}".
	noArgs := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"now","arguments":""}}]}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), oEvent("[DONE]"))
	sout, err = feedPieces(NewModelStream(Chat, Responses, a), noArgs)
	must(t, err)
	if r, err := checkResponsesStream(string(sout)); err != nil || len(r.Tools) != 1 || r.Tools[0].Args != "{}" {
		t.Errorf("%+v %v", r, err)
	}
	// A malformed chunk breaks the stream.
	bad := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"content":12}}]}`))
	if _, err := feedPieces(NewModelStream(Chat, Responses, a), bad); !errors.Is(err, ErrInvalidUpstream) {
		t.Errorf("content 12: %v", err)
	}
}

// The gateway's own mid-stream error, for a Responses client, is the API's
// error event, carrying the error object an SDK raises on.
func TestResponsesStreamErrorEvent(t *testing.T) {
	out := StreamErrorEvent(Responses, `cut "short"`)
	r, err := checkResponsesStream(string(out))
	if err != nil || r.Err != `cut "short"` {
		t.Errorf("%s: %+v %v", out, r, err)
	}
}

// With the client's model name asked for, a relayed stream names it
// wherever the upstream named its own; nothing else changes.
func TestPassThroughModel(t *testing.T) {
	chat := sse(oEvent(`{"id":"c","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"hi"}}]}`), oEvent("[DONE]"))
	out, err := feedPieces(NewPassThrough(Chat, false, "my-model"), chat)
	must(t, err)
	if want := bytes.ReplaceAll(chat, []byte("gpt-4o-2024-08-06"), []byte("my-model")); !bytes.Equal(out, want) {
		t.Errorf("chat:\n%s\nwant\n%s", out, want)
	}
	msgs := sse(aEvent("message_start", aStart), aEvent("ping", `{"type":"ping"}`))
	out, err = NewPassThrough(Messages, false, "my-model").Feed(nil, msgs) // no message_stop: Finish would say it is cut
	must(t, err)
	if want := bytes.ReplaceAll(msgs, []byte("claude-sonnet-4-5-20250929"), []byte("my-model")); !bytes.Equal(out, want) {
		t.Errorf("messages:\n%s\nwant\n%s", out, want)
	}
	unary := []byte(` {"id":"x","model":"gpt-4o-2024-08-06","choices":[]} `)
	if got := WithAnswerModel(unary, "my-model"); string(got) != ` {"id":"x","model":"my-model","choices":[]} ` {
		t.Errorf("WithAnswerModel = %s", got)
	}
}

// A Responses stream's usage says how many output tokens went to reasoning
// when the upstream says (an OpenAI-compatible server's
// completion_tokens_details), and leaves the count out when it cannot
// (Anthropic): unknown is not 0.
func TestResponsesStreamReasoningTokens(t *testing.T) {
	a := Answer{Model: "m", Created: 1}
	chat := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"content":"4"}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		oEvent(`{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":7}}}`),
		oEvent("[DONE]"))
	out, err := feedPieces(NewModelStream(Chat, Responses, a), chat)
	must(t, err)
	if !strings.Contains(string(out), `"output_tokens":9,"output_tokens_details":{"reasoning_tokens":7}`) {
		t.Errorf("reasoning tokens from a Chat upstream not carried:\n%s", out)
	}
	msgs := sse(aEvent("message_start", aStart),
		aEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"4"}}`),
		aEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
		aEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`),
		aEvent("message_stop", `{"type":"message_stop"}`))
	out, err = feedPieces(NewModelStream(Messages, Responses, a), msgs)
	must(t, err)
	if strings.Contains(string(out), "reasoning_tokens") {
		t.Errorf("an Anthropic upstream's stream says a reasoning count it never gave:\n%s", out)
	}
}
