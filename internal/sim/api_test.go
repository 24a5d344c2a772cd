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

// The answers' shapes, as a client of each real API would parse them.

const chatBody = `{"model":"gpt-sim","messages":[{"role":"user","content":"SECRET PROMPT"}]}`

func TestChatUnary(t *testing.T) {
	r := startSim(t, Provider{Name: "alpha", Stream: Pace{Chunks: 5}}, Options{})
	resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", chatBody)
	status, body := readAll(t, resp)
	if status != http.StatusOK {
		t.Fatalf("status = %d, want 200: %s", status, body)
	}
	if got := resp.Header.Get(HeaderProvider); got != "alpha" {
		t.Errorf("%s = %q, want alpha", HeaderProvider, got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	c := decode[chatCompletion](t, body)
	if c.Object != "chat.completion" || c.Model != "gpt-sim" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Created == 0 {
		t.Errorf("completion header fields = %+v", c)
	}
	if len(c.Choices) != 1 {
		t.Fatalf("choices = %+v, want one", c.Choices)
	}
	ch := c.Choices[0]
	if ch.Message.Role != "assistant" || ch.Message.Content != "The quick brown fox jumps" || ch.FinishReason != "stop" {
		t.Errorf("choice = %+v", ch)
	}
	if c.Usage.CompletionTokens != 5 || c.Usage.PromptTokens < 1 || c.Usage.TotalTokens != c.Usage.PromptTokens+5 {
		t.Errorf("usage = %+v", c.Usage)
	}
	if strings.Contains(string(body), "SECRET") {
		t.Errorf("the answer echoes the prompt: %s", body)
	}
}

func TestChatStream(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 4}}, Options{})
	for _, includeUsage := range []bool{false, true} {
		body := `{"model":"gpt-sim","stream":true,"messages":[]}`
		if includeUsage {
			body = `{"model":"gpt-sim","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
		}
		resp := post(t, context.Background(), nil, r.URL()+"/chat/completions", body)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type = %q, want text/event-stream", ct)
		}
		events, err := readSSE(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("stream ended with %v", err)
		}
		// role chunk, 4 content chunks, finish chunk, [usage chunk], [DONE]
		want := 7
		if includeUsage {
			want = 8
		}
		if len(events) != want {
			t.Fatalf("include_usage=%v: %d events, want %d: %v", includeUsage, len(events), want, events)
		}
		if last := events[len(events)-1]; last.data != "[DONE]" || last.name != "" {
			t.Errorf("last event = %+v, want data: [DONE]", last)
		}
		var chunks []chatChunk
		for _, e := range events[:len(events)-1] {
			chunks = append(chunks, decode[chatChunk](t, []byte(e.data)))
		}
		first := chunks[0]
		if first.Object != "chat.completion.chunk" || first.Model != "gpt-sim" || first.Choices[0].Delta.Role != "assistant" {
			t.Errorf("first chunk = %+v, want the assistant role", first)
		}
		var text strings.Builder
		for _, c := range chunks[1:5] {
			if c.ID != first.ID || c.Choices[0].FinishReason != nil {
				t.Errorf("content chunk = %+v", c)
			}
			text.WriteString(*c.Choices[0].Delta.Content)
		}
		if got := text.String(); got != "The quick brown fox" {
			t.Errorf("streamed text = %q, want %q", got, "The quick brown fox")
		}
		if fr := chunks[5].Choices[0].FinishReason; fr == nil || *fr != "stop" {
			t.Errorf("finish chunk = %+v, want finish_reason stop", chunks[5])
		}
		if includeUsage {
			u := chunks[6]
			if len(u.Choices) != 0 || u.Usage == nil || u.Usage.CompletionTokens != 4 {
				t.Errorf("usage chunk = %+v", u)
			}
		}
	}
}

func TestResponsesUnaryAndStream(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 3}}, Options{})

	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/responses", `{"model":"gpt-sim","input":"hi"}`))
	if status != http.StatusOK {
		t.Fatalf("unary status = %d: %s", status, body)
	}
	type response struct {
		Object, Status, Model string
		Output                []struct {
			Type, Role string
			Content    []struct{ Type, Text string }
		}
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	u := decode[response](t, body)
	if u.Object != "response" || u.Status != "completed" || u.Model != "gpt-sim" ||
		len(u.Output) != 1 || u.Output[0].Content[0].Text != "The quick brown" || u.Usage.OutputTokens != 3 {
		t.Errorf("unary response = %+v", u)
	}

	resp := post(t, context.Background(), nil, r.URL()+"/responses", `{"model":"gpt-sim","input":"hi","stream":true}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed",
	}
	if got := eventNames(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	for i, e := range events {
		var d struct {
			Type string `json:"type"`
			Seq  int    `json:"sequence_number"`
		}
		if err := json.Unmarshal([]byte(e.data), &d); err != nil || d.Type != e.name || d.Seq != i {
			t.Errorf("event %d %s: data %s (err %v), want type %s and sequence_number %d", i, e.name, e.data, err, e.name, i)
		}
	}
	done := decode[struct{ Response response }](t, []byte(events[len(events)-1].data))
	if done.Response.Status != "completed" || done.Response.Output[0].Content[0].Text != "The quick brown" {
		t.Errorf("response.completed = %+v", done.Response)
	}
}

func TestEmbeddings(t *testing.T) {
	r := startSim(t, Provider{}, Options{})
	tests := []struct {
		input string
		n     int
	}{
		{`"one"`, 1},
		{`["a","b","c"]`, 3},
		{`[1,2,3]`, 1},
		{`[[1,2],[3]]`, 2},
	}
	for _, tt := range tests {
		status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/embeddings", `{"model":"emb","input":`+tt.input+`}`))
		if status != http.StatusOK {
			t.Fatalf("input %s: status %d: %s", tt.input, status, body)
		}
		e := decode[struct {
			Object string
			Model  string
			Data   []struct {
				Object    string
				Index     int
				Embedding []float64
			}
		}](t, body)
		if e.Object != "list" || e.Model != "emb" || len(e.Data) != tt.n {
			t.Errorf("input %s: embeddings = %+v, want %d", tt.input, e, tt.n)
			continue
		}
		for i, d := range e.Data {
			if d.Object != "embedding" || d.Index != i || len(d.Embedding) != embeddingDims {
				t.Errorf("input %s: data[%d] = %+v", tt.input, i, d)
			}
		}
	}
}

func TestModels(t *testing.T) {
	r := startSim(t, Provider{Name: "p", Models: []string{"m1", "m2"}}, Options{})
	resp, err := http.Get(r.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	status, body := readAll(t, resp)
	l := decode[struct {
		Object string
		Data   []struct{ ID, Object string }
	}](t, body)
	if status != 200 || l.Object != "list" || len(l.Data) != 2 || l.Data[0].ID != "m1" || l.Data[1].Object != "model" {
		t.Errorf("GET /v1/models = %d %s", status, body)
	}
}

func TestMessagesUnary(t *testing.T) {
	r := startSim(t, Provider{Name: "claude-sim", Stream: Pace{Chunks: 2}}, Options{})
	resp := post(t, context.Background(), nil, r.URL()+"/messages", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	status, body := readAll(t, resp)
	if status != http.StatusOK || resp.Header.Get(HeaderProvider) != "claude-sim" {
		t.Fatalf("status = %d, %s = %q: %s", status, HeaderProvider, resp.Header.Get(HeaderProvider), body)
	}
	m := decode[anthropicMessage](t, body)
	if m.Type != "message" || m.Role != "assistant" || m.Model != "claude-x" || !strings.HasPrefix(m.ID, "msg_") ||
		len(m.Content) != 1 || m.Content[0] != (anthropicContent{Type: "text", Text: "The quick"}) ||
		m.StopReason == nil || *m.StopReason != "end_turn" || m.Usage.OutputTokens != 2 || m.Usage.InputTokens < 1 {
		t.Errorf("message = %s", pretty(body))
	}
}

func TestMessagesStream(t *testing.T) {
	r := startSim(t, Provider{Stream: Pace{Chunks: 3}}, Options{})
	resp := post(t, context.Background(), nil, r.URL()+"/messages", `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[]}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"message_start", "content_block_start", "ping",
		"content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop",
	}
	if got := eventNames(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	var text strings.Builder
	for _, e := range events {
		var d struct {
			Type    string
			Message *anthropicMessage
			Delta   struct {
				Type, Text string
				StopReason string `json:"stop_reason"`
			}
		}
		if err := json.Unmarshal([]byte(e.data), &d); err != nil || d.Type != e.name {
			t.Errorf("%s: data %s (err %v): type must repeat the event name", e.name, e.data, err)
		}
		switch e.name {
		case "message_start":
			if d.Message == nil || d.Message.Model != "claude-x" || d.Message.Role != "assistant" {
				t.Errorf("message_start = %s", e.data)
			}
		case "content_block_delta":
			if d.Delta.Type != "text_delta" {
				t.Errorf("delta = %s, want a text_delta", e.data)
			}
			text.WriteString(d.Delta.Text)
		case "message_delta":
			if d.Delta.StopReason != "end_turn" {
				t.Errorf("message_delta = %s, want stop_reason end_turn", e.data)
			}
		}
	}
	if got := text.String(); got != "The quick brown" {
		t.Errorf("streamed text = %q", got)
	}
}

func TestCountTokens(t *testing.T) {
	rec := &sleepRecorder{}
	r := startSim(t, Provider{TTFB: Fixed(7), Stream: Pace{Interval: 1000}}, Options{Sleep: rec.Sleep})
	status, body := readAll(t, post(t, context.Background(), nil, r.URL()+"/messages/count_tokens", `{"model":"claude-x","messages":[]}`))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if n := decode[struct {
		InputTokens int `json:"input_tokens"`
	}](t, body).InputTokens; n < 1 {
		t.Errorf("input_tokens = %d, want > 0", n)
	}
	// The TTFB applies, the generation pace does not.
	if got := rec.take(); !reflect.DeepEqual(got, []time.Duration{7}) {
		t.Errorf("sleeps = %v, want [7ns]", got)
	}
}

// Request validation happens before the TTFB and answers in the endpoint's API shape.
func TestRequestValidation(t *testing.T) {
	rec := &sleepRecorder{}
	r := startSim(t, Provider{TTFB: Fixed(1)}, Options{Sleep: rec.Sleep})
	tests := []struct {
		name, method, path, body string
		status                   int
		anthropic                bool
		contains                 string
	}{
		{"chat bad JSON", "POST", "/chat/completions", `{"model":`, 400, false, "could not parse the JSON body"},
		{"chat not an object", "POST", "/chat/completions", `[1]`, 400, false, "could not parse the JSON body"},
		{"chat missing model", "POST", "/chat/completions", `{"messages":[]}`, 400, false, "model"},
		{"responses missing model", "POST", "/responses", `{"input":"x"}`, 400, false, "model"},
		{"embeddings missing input", "POST", "/embeddings", `{"model":"e"}`, 400, false, "input"},
		{"messages bad JSON", "POST", "/messages", `nope`, 400, true, "could not parse the JSON body"},
		{"messages missing model", "POST", "/messages", `{"max_tokens":1}`, 400, true, "model"},
		{"count_tokens missing model", "POST", "/messages/count_tokens", `{}`, 400, true, "model"},
		{"unknown path", "POST", "/completions", `{}`, 404, false, "Unknown request URL"},
		{"unknown messages path", "POST", "/messages/batches", `{}`, 404, true, "Unknown request URL"},
		{"wrong method", "GET", "/chat/completions", ``, 405, false, "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, r.URL()+tt.path, strings.NewReader(tt.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			status, body := readAll(t, resp)
			if status != tt.status {
				t.Errorf("status = %d, want %d: %s", status, tt.status, body)
			}
			if resp.Header.Get(HeaderProvider) != "sim" {
				t.Errorf("%s missing on an error answer", HeaderProvider)
			}
			checkErrorShape(t, body, tt.anthropic, tt.contains)
			if got := rec.take(); len(got) != 0 {
				t.Errorf("sleeps = %v: a rejected request must not wait the TTFB", got)
			}
		})
	}
}

// checkErrorShape asserts body is an error in the OpenAI or Anthropic shape whose
// message contains want.
func checkErrorShape(t *testing.T, body []byte, anthropic bool, want string) {
	t.Helper()
	if anthropic {
		e := decode[anthropicErrorBody](t, body)
		if e.Type != "error" || e.Error.Type == "" || !strings.Contains(e.Error.Message, want) {
			t.Errorf("Anthropic error = %s, want type error and a message with %q", body, want)
		}
		return
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("OpenAI error is not JSON: %s", body)
	}
	e := raw["error"]
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Errorf("OpenAI error %s lacks %q", body, k)
		}
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, want) {
		t.Errorf("OpenAI error message %q, want it to contain %q", msg, want)
	}
}
