package router_test

// End to end through real HTTP: the upstream formats no client speaks,
// Bedrock Converse (SigV4, event-stream frames) and Gemini (the Gemini
// API with its key, Gemini on Vertex with OAuth tokens), served by the
// simulator, for Chat, Messages and Responses clients, unary and
// streaming, with tool calls.

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// modelCalls are the ways a client asks, and what its answer must say:
// content or a tool call, the finish reason, the usage.
var modelCalls = []struct {
	name, path, body string
	want             []string
}{
	{"chat unary", "/v1/chat/completions", `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		[]string{`"object":"chat.completion"`, `"finish_reason":"stop"`, `"prompt_tokens":`, `"completion_tokens":`}},
	{"chat stream", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
		[]string{`"finish_reason":"stop"`, `"prompt_tokens":`, "data: [DONE]"}},
	{"chat tool call", "/v1/chat/completions", chatWithTool,
		[]string{`"finish_reason":"tool_calls"`, `"name":"get_weather"`, `\"city\"`}},
	{"messages unary", "/v1/messages", `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
		[]string{`"type":"message"`, `"stop_reason":"end_turn"`, `"output_tokens":`}},
	{"messages stream", "/v1/messages", `{"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		[]string{"event: message_start", `"stop_reason":"end_turn"`, `"output_tokens":`, "event: message_stop"}},
	{"messages tool stream", "/v1/messages", strings.Replace(messagesWithTool, `"max_tokens":100,`, `"max_tokens":100,"stream":true,`, 1),
		[]string{`"type":"tool_use"`, `"name":"get_weather"`, `"stop_reason":"tool_use"`, "event: message_stop"}},
	{"responses unary", "/v1/responses", `{"model":"m","input":"hi"}`,
		[]string{`"object":"response"`, `"status":"completed"`, `"output_tokens":`}},
	{"responses stream", "/v1/responses", `{"model":"m","stream":true,"input":"hi"}`,
		[]string{"response.output_text.delta", "response.completed", `"output_tokens":`}},
}

// checkModelCalls makes every call of modelCalls through srv and checks
// the answer and the attempt span: provider name, host, output tokens.
func checkModelCalls(t *testing.T, srv *httptest.Server, exp *tracetest.InMemoryExporter, provider string) {
	t.Helper()
	for _, c := range modelCalls {
		exp.Reset()
		resp := post(t, srv.URL, c.path, c.body)
		body := readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %s in %s", c.name, w, body)
			}
		}
		if !strings.Contains(c.name, "tool") && !strings.Contains(body, "quick") {
			t.Errorf("%s: no content: %s", c.name, body)
		}
		attrs := attemptAttrs(t, exp, 1)
		last := attrs[len(attrs)-1]
		if last["gen_ai.provider.name"] != provider || last["server.address"] != "127.0.0.1" {
			t.Errorf("%s: span provider %v at %v, want %s at 127.0.0.1", c.name, last["gen_ai.provider.name"], last["server.address"], provider)
		}
		if n, _ := last["gen_ai.usage.output_tokens"].(int64); n <= 0 {
			t.Errorf("%s: span output tokens %v, want > 0", c.name, last["gen_ai.usage.output_tokens"])
		}
	}
}

func TestConverseEndToEnd(t *testing.T) {
	// The AWS default chain reads the environment: not parallel.
	t.Setenv("AWS_ACCESS_KEY_ID", simAWS.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", simAWS.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	base := startHostSim(t, "br", sim.Host{Kind: sim.HostBedrock, AWSKeys: []sim.AWSKey{simAWS}, Region: "us-west-2"})
	srv, exp := hostGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q}", base), "meta.llama3-3-70b-instruct-v1:0")
	checkModelCalls(t, srv, exp, "aws.bedrock")
}

func TestGeminiAPIEndToEnd(t *testing.T) {
	t.Parallel()
	base := startHostSim(t, "gem", sim.Host{Kind: sim.HostGemini, APIKey: "gemini-sim-key-1"})
	srv, exp := hostGateway(t, fmt.Sprintf("{kind: gemini, base_url: %q, api_key: gemini-sim-key-1}", base+"/v1beta"), "gemini-2.5-flash")
	checkModelCalls(t, srv, exp, "gcp.gemini")
}

func TestVertexGeminiEndToEnd(t *testing.T) {
	t.Parallel()
	base := startHostSim(t, "vx", sim.Host{Kind: sim.HostVertex})
	creds := serviceAccountFile(t, base+"/token")
	srv, exp := hostGateway(t, fmt.Sprintf("{kind: vertex, region: global, project: p, base_url: %q, credentials: %q}", base, creds), "gemini-2.5-pro")
	checkModelCalls(t, srv, exp, "gcp.vertex_ai")
}
