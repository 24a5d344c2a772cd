package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Tool calls, images and usage, as the clients of each API read them.

const (
	openAITools    = `"tools":[` + weatherTool + `,` + timeTool + `]`
	anthropicTools = `"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},{"name":"get_time","input_schema":{"type":"object"}}]`
)

func TestChatToolCallUnary(t *testing.T) {
	rec := &sleepRecorder{}
	r := startSim(t, Provider{TTFB: Fixed(3), Stream: Pace{Chunks: 8, Interval: 5}}, Options{Sleep: rec.Sleep})
	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions",
		`{"model":"m",`+openAITools+`,"messages":[{"role":"user","content":"SECRET weather?"}]}`))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	c := decode[chatCompletion](t, body)
	msg := c.Choices[0].Message
	if c.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 {
		t.Fatalf("completion = %s", pretty(body))
	}
	tc := msg.ToolCalls[0]
	if !strings.HasPrefix(tc.ID, "call_") || tc.Type != "function" || tc.Function.Name != "get_weather" || tc.Function.Arguments != weatherArgs {
		t.Errorf("tool call = %+v", tc)
	}
	if !strings.Contains(string(body), `"content":null`) {
		t.Errorf("content beside tool calls must be null: %s", body)
	}
	if u := c.Usage; u.CompletionTokens != 14 || u.PromptTokens < 1 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v", u)
	}
	if strings.Contains(string(body), "SECRET") {
		t.Errorf("the answer echoes the prompt: %s", body)
	}
	// A tool answer takes its two steps of pace, like a stream of it would.
	if got := rec.take(); !reflect.DeepEqual(got, []time.Duration{3, 10}) {
		t.Errorf("sleeps = %v, want [3 10]", got)
	}
}

func TestChatToolCallStream(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 8}}, Options{})
	resp := post(t, context.Background(), nil, r.URL()+"/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},`+openAITools+`,"messages":[{"role":"user","content":"sim:parallel please"}]}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	// role, 2 calls × 2 pieces, finish, usage, [DONE]
	if len(events) != 8 || events[7].data != "[DONE]" {
		t.Fatalf("%d events: %v", len(events), events)
	}
	type call struct{ id, name, args string }
	var calls []call
	var pieces int
	for _, e := range events[1:5] {
		ch := decode[chatChunk](t, []byte(e.data))
		for _, tc := range ch.Choices[0].Delta.ToolCalls {
			pieces++
			if tc.Index == nil {
				t.Fatalf("tool call delta without index: %s", e.data)
			}
			if *tc.Index == len(calls) {
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
					t.Fatalf("first delta of call %d lacks id, type or name: %s", *tc.Index, e.data)
				}
				calls = append(calls, call{id: tc.ID, name: tc.Function.Name})
			} else if tc.ID != "" || tc.Function.Name != "" {
				t.Errorf("later delta repeats the header: %s", e.data)
			}
			calls[*tc.Index].args += tc.Function.Arguments
		}
	}
	if pieces != 4 || len(calls) != 2 || calls[0].name != "get_weather" || calls[0].args != weatherArgs ||
		calls[1].name != "get_time" || calls[1].args != "{}" || calls[0].id == calls[1].id {
		t.Errorf("assembled calls %+v from %d pieces", calls, pieces)
	}
	finish := decode[chatChunk](t, []byte(events[5].data))
	if fr := finish.Choices[0].FinishReason; fr == nil || *fr != "tool_calls" {
		t.Errorf("finish chunk = %s", events[5].data)
	}
	usage := decode[chatChunk](t, []byte(events[6].data))
	if usage.Usage == nil || len(usage.Choices) != 0 || usage.Usage.CompletionTokens != 14+3 { // (11+42+3)/4 + (8+2+3)/4
		t.Errorf("usage chunk = %s", events[6].data)
	}
}

func TestMessagesToolUseUnaryAndStream(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 8}, ParallelToolCalls: true}, Options{})
	const req = `{"model":"claude","max_tokens":100,` + anthropicTools + `,"messages":[{"role":"user","content":"weather?"}]}`
	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/messages", req))
	m := decode[anthropicMessage](t, body)
	wantContent := []anthropicContent{
		{Type: "tool_use", ID: m.Content[0].ID, Name: "get_weather", Input: `{"city":"example"}`},
		{Type: "tool_use", ID: m.Content[1].ID, Name: "get_time", Input: `{}`},
	}
	if status != 200 || !reflect.DeepEqual(m.Content, wantContent) || m.StopReason == nil || *m.StopReason != "tool_use" ||
		!strings.HasPrefix(m.Content[0].ID, "toolu_") || m.Content[0].ID == m.Content[1].ID {
		t.Fatalf("message = %s", pretty(body))
	}
	if strings.Contains(string(body), `"text"`) {
		t.Errorf("tool_use blocks carry a text member: %s", body)
	}

	resp := post(t, context.Background(), nil, r.URL()+"/messages", strings.Replace(req, `"max_tokens"`, `"stream":true,"max_tokens"`, 1))
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if got := eventNames(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	inputs := map[int]string{}
	for _, e := range events {
		var ev struct {
			Type         string
			Index        int
			ContentBlock *anthropicContent `json:"content_block"`
			Delta        struct {
				Type        string
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			}
			Usage *anthropicUsage
		}
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil || ev.Type != e.name {
			t.Fatalf("%s: %s (%v)", e.name, e.data, err)
		}
		switch e.name {
		case "content_block_start":
			if b := ev.ContentBlock; b.Type != "tool_use" || b.ID == "" || b.Name == "" || b.Input != "{}" {
				t.Errorf("block start = %s", e.data)
			}
		case "content_block_delta":
			if ev.Delta.Type != "input_json_delta" || ev.Delta.PartialJSON == "" {
				t.Errorf("delta = %s", e.data)
			}
			inputs[ev.Index] += ev.Delta.PartialJSON
		case "message_delta":
			if ev.Delta.StopReason != "tool_use" || ev.Usage == nil || ev.Usage.OutputTokens != m.Usage.OutputTokens {
				t.Errorf("message_delta = %s, want tool_use and output tokens %d", e.data, m.Usage.OutputTokens)
			}
		}
	}
	if !reflect.DeepEqual(inputs, map[int]string{0: `{"city":"example"}`, 1: `{}`}) {
		t.Errorf("assembled inputs = %v", inputs)
	}
}

// After the tool's result comes back, the answer is text; images are counted.
func TestToolResultAndImagesAnswerText(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 3}}, Options{})
	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions",
		`{"model":"m",`+openAITools+`,"messages":[{"role":"user","content":[{"type":"text","text":"what?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"9am"}]}`))
	c := decode[chatCompletion](t, body)
	if status != 200 || c.Choices[0].FinishReason != "stop" || c.Choices[0].Message.Content != "I see 2 image(s). The quick" || len(c.Choices[0].Message.ToolCalls) != 0 {
		t.Errorf("answer = %s", pretty(body))
	}

	resp := post(t, context.Background(), nil, r.URL()+"/messages",
		`{"model":"c","max_tokens":9,"stream":true,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"what?"}]}]}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, e := range events {
		if e.name == "content_block_delta" {
			var d struct{ Delta struct{ Text string } }
			json.Unmarshal([]byte(e.data), &d)
			text.WriteString(d.Delta.Text)
		}
	}
	if got := text.String(); got != "I see 1 image(s). The quick" {
		t.Errorf("streamed text = %q", got)
	}
}

// Usage everywhere: unary bodies of both formats, OpenAI's usage chunk only
// when asked, Anthropic's message_start and message_delta.
func TestUsageInEveryAnswer(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 4}}, Options{})
	const prompt = `"messages":[{"role":"user","content":"` + "0123456789abcdef0123456789abcdef" + `"}]`
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},` + prompt + `}`
	resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", body)
	events, _ := readSSE(resp.Body)
	resp.Body.Close()
	u := decode[chatChunk](t, []byte(events[len(events)-2].data)).Usage
	if u == nil || u.PromptTokens != len(body)/4 || u.CompletionTokens != 4 || u.TotalTokens != len(body)/4+4 {
		t.Errorf("OpenAI stream usage = %+v, want %d + 4", u, len(body)/4)
	}

	body = `{"model":"c","max_tokens":9,"stream":true,` + prompt + `}`
	resp = post(t, context.Background(), nil, r.URL()+"/messages", body)
	events, _ = readSSE(resp.Body)
	resp.Body.Close()
	var start struct{ Message anthropicMessage }
	var delta struct{ Usage anthropicUsage }
	json.Unmarshal([]byte(events[0].data), &start)
	json.Unmarshal([]byte(events[len(events)-2].data), &delta)
	if start.Message.Usage.InputTokens != len(body)/4 || delta.Usage.OutputTokens != 4 {
		t.Errorf("Anthropic stream usage: message_start %+v, message_delta %+v", start.Message.Usage, delta.Usage)
	}
}

// Parallel calls follow the request as well as the knob, and the same request
// always gets the same answer.
func TestToolAnswersAreDeterministic(t *testing.T) {
	r := startSim(t, Provider{}, Options{})
	const req = `{"model":"m",` + openAITools + `,"messages":[{"role":"user","content":"sim:parallel"}]}`
	var first []chatToolCall
	for i := range 3 {
		status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/chat/completions", req))
		if status != http.StatusOK {
			t.Fatal(status)
		}
		calls := decode[chatCompletion](t, body).Choices[0].Message.ToolCalls
		for j := range calls {
			calls[j].ID = "" // numbered per response
		}
		if i == 0 {
			first = calls
		} else if !reflect.DeepEqual(calls, first) {
			t.Errorf("answer %d = %+v, want %+v", i, calls, first)
		}
	}
	if len(first) != 2 {
		t.Errorf("calls = %+v, want two", first)
	}
}
