package router_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Through real HTTP, with fake upstreams that record what they were sent:
// the Responses API served by every kind of target, the model name rule,
// the refused field named in param, Anthropic's rules for a request that
// goes to an Anthropic target as it came.

// fakeUpstream answers each API path with a fixed body (stream or not, by
// the request's "stream") and records every request it got.
type fakeUpstream struct {
	mu   sync.Mutex
	got  []fakeRequest // guarded by mu
	unar map[string]string
	sse  map[string]string
}

type fakeRequest struct{ path, body string }

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = append(f.got, fakeRequest{r.URL.Path, string(b)})
	f.mu.Unlock()
	var req struct{ Stream bool }
	_ = json.Unmarshal(b, &req)
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, f.sse[path])
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, f.unar[path])
}

func (f *fakeUpstream) last(t *testing.T) fakeRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		t.Fatal("nothing went upstream")
	}
	return f.got[len(f.got)-1]
}

const (
	fakeMessage = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`
	fakeChat    = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"llama-3.3-70b-versatile","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	fakeResp    = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4.1-2025-04-14","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}`
)

var fakeMessageStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

var fakeChatStream = "data: {\"id\":\"c\",\"model\":\"llama-3.3-70b-versatile\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hello\"}}]}\n\n" +
	"data: {\"id\":\"c\",\"model\":\"llama-3.3-70b-versatile\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"c\",\"model\":\"llama-3.3-70b-versatile\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n" +
	"data: [DONE]\n\n"

func newFake(t *testing.T) (*fakeUpstream, string) {
	f := &fakeUpstream{
		unar: map[string]string{"/messages": fakeMessage, "/chat/completions": fakeChat, "/responses": fakeResp},
		sse:  map[string]string{"/messages": fakeMessageStream, "/chat/completions": fakeChatStream},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

// pool is a gateway over fakes: an anthropic provider, an openai one
// without the Responses API and one with it, each its own fake, serving
// model "m" in the order given (fallback), with extra top-level YAML.
func pool(t *testing.T, extra string, kinds ...string) (url string, fakes map[string]*fakeUpstream) {
	t.Helper()
	fakes = map[string]*fakeUpstream{}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "%s\nstrategy: {mode: fallback}\nproviders:\n", extra)
	for _, k := range kinds {
		f, base := newFake(t)
		fakes[k] = f
		switch k {
		case "anthropic":
			fmt.Fprintf(&cfg, "  anthropic: {kind: anthropic, base_url: %q}\n", base)
		case "chat-only":
			fmt.Fprintf(&cfg, "  chat-only: {kind: openai, base_url: %q, responses: false}\n", base)
		case "openai":
			fmt.Fprintf(&cfg, "  openai: {kind: openai, base_url: %q}\n", base)
		}
	}
	cfg.WriteString("targets:\n")
	for _, k := range kinds {
		fmt.Fprintf(&cfg, "  - {virtual_key: %s, model_map: {m: up-%s}}\n", k, k)
	}
	srv := httptest.NewServer(newGatewayFromYAML(t, cfg.String(), router.Options{}).Handler())
	t.Cleanup(srv.Close)
	return srv.URL, fakes
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResponsesOnEveryKind(t *testing.T) {
	for _, tt := range []struct {
		kind, path string // the target, and where its request must go
		model      string // the model the answer names: the one that answered
	}{
		{"anthropic", "/v1/messages", "claude-sonnet-4-5-20250929"},
		{"chat-only", "/v1/chat/completions", "llama-3.3-70b-versatile"},
		{"openai", "/v1/responses", "gpt-4.1-2025-04-14"},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			url, fakes := pool(t, "", tt.kind)
			for _, stream := range []bool{false, true} {
				if tt.kind == "openai" && stream {
					continue // relayed as it came: the fake has no Responses stream
				}
				body := fmt.Sprintf(`{"model":"m","instructions":"be brief","input":"hi","stream":%v}`, stream)
				resp := post(t, url, "/v1/responses", body)
				out := bodyOf(t, resp)
				up := fakes[tt.kind].last(t)
				if resp.StatusCode != 200 || up.path != tt.path {
					t.Fatalf("stream %v: %d %s; upstream got %s", stream, resp.StatusCode, out, up.path)
				}
				if !strings.Contains(out, `"model":"`+tt.model+`"`) || !strings.Contains(out, "hello") {
					t.Errorf("stream %v: answer %s, want the text and model %s", stream, out, tt.model)
				}
				if stream && (!strings.HasPrefix(out, "event: response.created") || !strings.Contains(out, "event: response.completed")) {
					t.Errorf("stream: %s", out)
				}
			}
		})
	}
}

// What needs state the gateway does not keep goes to a provider with the
// Responses API; with none in the pool, the client hears which field.
func TestResponsesStatefulFields(t *testing.T) {
	url, fakes := pool(t, "", "anthropic", "openai")
	resp := post(t, url, "/v1/responses", `{"model":"m","previous_response_id":"resp_0","input":"and then?"}`)
	if out := bodyOf(t, resp); resp.StatusCode != 200 || fakes["openai"].last(t).path != "/v1/responses" {
		t.Errorf("%d %s: want it served by the openai provider", resp.StatusCode, out)
	}
	url, _ = pool(t, "", "anthropic", "chat-only")
	for _, field := range []string{`"previous_response_id":"resp_0"`, `"store":true`} {
		resp := post(t, url, "/v1/responses", `{"model":"m",`+field+`,"input":"hi"}`)
		var e struct {
			Error struct{ Type, Message, Param, Code string }
		}
		if err := json.Unmarshal([]byte(bodyOf(t, resp)), &e); err != nil || resp.StatusCode != 400 ||
			e.Error.Param != strings.Split(field, `"`)[1] || e.Error.Code != "unsupported_parameter" {
			t.Errorf("%s: %d %+v (%v)", field, resp.StatusCode, e, err)
		}
	}
}

// A refused chat parameter is named in param, as the docs promise.
func TestRefusedParameterNamed(t *testing.T) {
	url, _ := pool(t, "", "anthropic")
	resp := post(t, url, "/v1/chat/completions", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`)
	var e struct{ Error struct{ Param *string } }
	if err := json.Unmarshal([]byte(bodyOf(t, resp)), &e); err != nil || resp.StatusCode != 400 || e.Error.Param == nil || *e.Error.Param != "n" {
		t.Errorf("%d param %v (%v)", resp.StatusCode, e.Error.Param, err)
	}
}

// response_model: requested names the client's model on every path,
// relayed answers (unary and streamed) included.
func TestResponseModelRequested(t *testing.T) {
	url, _ := pool(t, "response_model: requested", "chat-only", "anthropic")
	for _, tt := range []struct{ path, body, order string }{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "chat-only"},
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "chat-only"},
		{"/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`, "anthropic"},
		{"/v1/messages", `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "anthropic"},
		{"/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`, "chat-only"},
		{"/v1/responses", `{"model":"m","input":"hi","stream":true}`, "anthropic"},
	} {
		resp := post(t, url, tt.path, tt.body, router.HeaderProviderOrder, tt.order)
		out := bodyOf(t, resp)
		if resp.StatusCode != 200 || !strings.Contains(out, `"model":"m"`) || strings.Contains(out, "llama-3.3") || strings.Contains(out, "claude-sonnet") {
			t.Errorf("%s %s via %s: %d %s", tt.path, tt.body, tt.order, resp.StatusCode, out)
		}
	}
}

// An Anthropic request going to an Anthropic target as it came is held to
// Anthropic's rules: temperature without top_p, and no thinking after a
// tool turn another target served without a thinking block.
func TestAnthropicRulesOnPassThrough(t *testing.T) {
	url, fakes := pool(t, "", "anthropic")
	body := `{"model":"m","max_tokens":4000,"temperature":0.5,"top_p":0.9,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[` +
		`{"role":"user","content":"weather?"},{"role":"assistant","content":[{"type":"tool_use","id":"functions_get_weather_0","name":"w","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"functions_get_weather_0","content":"sunny"}]}]}`
	resp := post(t, url, "/v1/messages", body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, bodyOf(t, resp))
	}
	var up map[string]any
	if err := json.Unmarshal([]byte(fakes["anthropic"].last(t).body), &up); err != nil {
		t.Fatal(err)
	}
	if up["top_p"] != nil || up["thinking"] != nil || up["temperature"] != 0.5 || up["model"] != "up-anthropic" {
		t.Errorf("upstream got %v", up)
	}
}

// A thinking block a Gemini target signed (a Messages client's earlier turn
// that a mixed pool served from Gemini) never reaches an Anthropic target,
// which cannot check it, also when the request asks no thinking.
func TestGeminiThinkingLeftOutForAnthropic(t *testing.T) {
	url, fakes := pool(t, "", "anthropic")
	body := `{"model":"m","max_tokens":400,"messages":[` +
		`{"role":"user","content":"weather?"},{"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"gemini~next~c2ln"},{"type":"tool_use","id":"toolu_0","name":"w","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0","content":"sunny"}]}]}`
	resp := post(t, url, "/v1/messages", body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, bodyOf(t, resp))
	}
	up := fakes["anthropic"].last(t).body
	if strings.Contains(up, "gemini") || !strings.Contains(up, `"tool_use"`) {
		t.Errorf("upstream got %s", up)
	}
}
