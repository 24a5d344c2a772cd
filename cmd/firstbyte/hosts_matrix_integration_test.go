//go:build integration

package main

// Every host through the real binary: both client formats, unary and
// stream, with usage in the answer and in the cost metric; and each host's
// refusals (429, 403, Bedrock's exception frames) handled as
// docs/providers.md says.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// everyHost is one provider of each kind the sims speak, by name.
var everyHost = []struct{ name, kind, family string }{
	{"anthropic", "anthropic", "claude"},
	{"openai", "openai", "gpt"},
	{"azure", sim.HostAzure, "gpt"},
	{"bedrock", sim.HostBedrock, "claude"},
	{"vertex", sim.HostVertex, "claude"},
	{"converse", sim.HostBedrock, "llama"},
	{"vertex-gemini", sim.HostVertex, "gemini"},
	{"vertex-openai", sim.HostVertex, "llama"},
	{"gemini", sim.HostGemini, "gemini"},
}

// hostCall is one of the four ways a client asks, and what its answer must
// hold: the format's end, and its usage.
type hostCall struct {
	name, path, body string
	want             []string
}

func hostCalls(model string) []hostCall {
	return []hostCall{
		{"chat unary", "/v1/chat/completions", `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"object":"chat.completion"`, `"prompt_tokens":`, `"completion_tokens":`}},
		{"chat stream", "/v1/chat/completions", `{"model":"` + model + `","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			[]string{"data: [DONE]", `"prompt_tokens":`, `"completion_tokens":`}},
		{"messages unary", "/v1/messages", `{"model":"` + model + `","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"type":"message"`, `"input_tokens":`, `"output_tokens":`}},
		{"messages stream", "/v1/messages", `{"model":"` + model + `","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{"event: message_stop", `"input_tokens":`, `"output_tokens":`}},
	}
}

// TestEveryHostServesBothFormatsWithUsageAndCost: each host is a model of
// its own, priced; all four calls are served with usage, and the gateway
// counts tokens and cost for each host.
func TestEveryHostServesBothFormatsWithUsageAndCost(t *testing.T) {
	t.Parallel()
	var providers, targets strings.Builder
	for _, h := range everyHost {
		up := startSimProvider(t, sim.Provider{Name: h.name, Stream: sim.Pace{Chunks: 4}, Host: hostOf(h.kind, h.name)})
		model := upstreamModel(h.kind, h.family)
		fmt.Fprintf(&providers, "  %s: %s\n", h.name, providerEntry(t, h.kind, h.name, up.URL(), fmt.Sprintf(", pricing: {%q: {input: 3, output: 15}}", model)))
		fmt.Fprintf(&targets, "  - {virtual_key: %s, model_map: {m-%s: %q}}\n", h.name, h.name, model)
	}
	gw := startGatewayProc(t, "gateway", "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nstrategy: {mode: fallback}\nproviders:\n"+
		providers.String()+"targets:\n"+targets.String(), awsEnv(t)...)
	for _, h := range everyHost {
		for _, c := range hostCalls("m-" + h.name) {
			r := postAPI(t, gw.api, c.path, c.body)
			if r.status != http.StatusOK || r.target() != h.name {
				t.Errorf("%s %s: %d from %q, want 200 from %s: %s", h.name, c.name, r.status, r.target(), h.name, tailOf(r.body, 500))
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(r.body, w) {
					t.Errorf("%s %s: no %s in the answer: %s", h.name, c.name, w, tailOf(r.body, 800))
				}
			}
		}
	}
	for _, h := range everyHost {
		target := `target="` + h.name + `"`
		pollUntil(t, 5*time.Second, h.name+"'s tokens and cost in /metrics", func() bool {
			return scrapeMetric(t, gw.admin, "firstbyte_tokens_total", target, `type="input"`) > 0 &&
				scrapeMetric(t, gw.admin, "firstbyte_tokens_total", target, `type="output"`) > 0 &&
				scrapeMetric(t, gw.admin, "firstbyte_cost_usd_total", target) > 0
		})
		t.Logf("%s: tokens in %.0f, out %.0f, cost $%.6f", h.name,
			scrapeMetric(t, gw.admin, "firstbyte_tokens_total", target, `type="input"`),
			scrapeMetric(t, gw.admin, "firstbyte_tokens_total", target, `type="output"`),
			scrapeMetric(t, gw.admin, "firstbyte_cost_usd_total", target))
	}
}

// refusalVerdict is what the gateway must make of a host's refusal:
// "rate_limited" cools the target, anything else is
// firstbyte_target_disabled's reason (every host's 403 the sim sends is
// coded as the key's).
func refusalVerdict(kind string, status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	}
	// OpenAI and Azure: unsupported_country_region_territory, the account
	// refused; Vertex: PERMISSION_DENIED; Anthropic: permission_error and
	// Bedrock: AccessDeniedException, the key refused what was asked for
	// (auth, that target only).
	return "auth"
}

// TestEveryHostsRefusals: a 429 (Google's RESOURCE_EXHAUSTED with its
// RetryInfo on Vertex, ThrottlingException on Bedrock) and a 403
// (AccessDeniedException, PERMISSION_DENIED, ...) from every host, each
// the first of two targets: what fails over, fails over to the next
// target, and the next request goes there first (the refusing target is
// cooled or disabled, and says so in /metrics); what is the caller's
// reaches the client as it was.
func TestEveryHostsRefusals(t *testing.T) {
	t.Parallel()
	good := startSimProvider(t, sim.Provider{Name: "good", Stream: sim.Pace{Chunks: 2}})
	var providers, targets strings.Builder
	fmt.Fprintf(&providers, "  good: {kind: openai, base_url: %q, api_key: sim-key-good}\n", good.URL())
	verdicts := map[string]string{}
	for _, h := range everyHost {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
			name := fmt.Sprintf("%s-%d", h.name, status)
			up := startSimProvider(t, sim.Provider{Name: name, Host: hostOf(h.kind, name),
				Errors: sim.ErrorRate{Rate: 1, Status: status, After: time.Millisecond}})
			fmt.Fprintf(&providers, "  %s: %s\n", name, providerEntry(t, h.kind, name, up.URL(), ""))
			fmt.Fprintf(&targets, "  - {virtual_key: %s, model_map: {m-%s: %q}}\n  - {virtual_key: good, model_map: {m-%s: good-model}}\n",
				name, name, upstreamModel(h.kind, h.family), name)
			verdicts[name] = refusalVerdict(h.kind, status)
		}
	}
	gw := startGatewayProc(t, "gateway", "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nstrategy: {mode: fallback}\nproviders:\n"+
		providers.String()+"targets:\n"+targets.String(), awsEnv(t)...)
	for name, verdict := range verdicts {
		for i, path := range []string{"/v1/messages", "/v1/chat/completions"} {
			r := postAPI(t, gw.api, path, `{"model":"m-`+name+`","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
			attempts := r.header.Get("X-Firstbyte-Attempts")
			wantTarget, wantStatus, wantAttempts := "good", http.StatusOK, "2"
			if i == 1 {
				wantAttempts = "1" // the refusing target is no longer first
			}
			if r.status != wantStatus || r.target() != wantTarget || attempts != wantAttempts {
				t.Errorf("%s, %s (request %d): %d from %q after %s attempts, want %d from %s after %s: %s",
					name, path, i+1, r.status, r.target(), attempts, wantStatus, wantTarget, wantAttempts, tailOf(r.body, 300))
			}
		}
		target := `target="` + name + `"`
		switch verdict {
		case "rate_limited":
			if v := scrapeMetric(t, gw.admin, "firstbyte_rate_limited_until_seconds", target); v < float64(time.Now().Add(-5*time.Second).Unix()) {
				t.Errorf("%s: firstbyte_rate_limited_until_seconds = %v, want the cooling's end", name, v)
			}
		default:
			if v := scrapeMetric(t, gw.admin, "firstbyte_target_disabled", target, `reason="`+verdict+`"`); v != 1 {
				t.Errorf("%s: firstbyte_target_disabled{reason=%q} = %v, want 1", name, verdict, v)
			}
		}
	}
}

// bedrockFrame is one AWS event-stream message: a chunk event carrying an
// Anthropic event, or an exception.
func bedrockFrame(t *testing.T, w http.ResponseWriter, exception, payload string) {
	t.Helper()
	var m eventstream.Message
	if exception != "" {
		m.Headers.Set(":message-type", eventstream.StringValue("exception"))
		m.Headers.Set(":exception-type", eventstream.StringValue(exception))
		m.Payload = []byte(payload)
	} else {
		m.Headers.Set(":message-type", eventstream.StringValue("event"))
		m.Headers.Set(":event-type", eventstream.StringValue("chunk"))
		m.Payload, _ = json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(payload)), "p": "abc"})
	}
	if err := eventstream.NewEncoder().Encode(w, m); err != nil {
		t.Error(err)
	}
	http.NewResponseController(w).Flush()
}

// TestBedrockExceptionFrames: an exception frame as a Bedrock stream's
// first message fails over (a throttlingException as a rate limit); one
// after content has been relayed ends the client's stream with an error
// event.
func TestBedrockExceptionFrames(t *testing.T) {
	t.Parallel()
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		if strings.Contains(r.URL.Path, "before") {
			bedrockFrame(t, w, "throttlingException", `{"message":"Too many requests, please wait before trying again."}`)
			return
		}
		bedrockFrame(t, w, "", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}`)
		bedrockFrame(t, w, "", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		bedrockFrame(t, w, "", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`)
		bedrockFrame(t, w, "modelStreamErrorException", `{"message":"The model stream failed."}`)
	}))
	t.Cleanup(stub.Close)
	good := startSimProvider(t, sim.Provider{Name: "good", Stream: sim.Pace{Chunks: 2}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
strategy: {mode: fallback}
providers:
  bedrock: {kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-stub-key-1}
  good:    {kind: anthropic, base_url: %q, api_key: sim-key-good}
targets:
  - {virtual_key: bedrock, model_map: {before: "anthropic.before-v1:0", after: "anthropic.after-v1:0"}}
  - {virtual_key: good, model_map: {before: claude-good, after: claude-good}}
`, stub.URL, good.URL()), awsEnv(t)...)
	stream := func(model string) apiResponse {
		return postAPI(t, gw.api, "/v1/messages", `{"model":"`+model+`","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	}
	if r := stream("before"); r.status != http.StatusOK || r.target() != "good" || r.header.Get("X-Firstbyte-Attempts") != "2" ||
		!strings.Contains(r.body, "event: message_stop") {
		t.Errorf("exception before the first byte: %d from %q after %s attempts, want good's whole stream after 2: %s",
			r.status, r.target(), r.header.Get("X-Firstbyte-Attempts"), tailOf(r.body, 500))
	}
	if r := stream("after"); r.status != http.StatusOK || r.target() != "bedrock" || !strings.Contains(r.body, "Hello") ||
		!strings.Contains(r.body, "event: error") || strings.Contains(r.body, "message_stop") {
		t.Errorf("exception after the first byte: %d from %q, want bedrock's content then an error event and no message_stop: %s",
			r.status, r.target(), tailOf(r.body, 800))
	}
}
