package router_test

// Failures of the Converse and Gemini hosts end to end: a ConverseStream
// exception before the first byte fails over as the status it stands for,
// after it ends the client's stream with an error event; Google's errors
// (wrapped in a JSON array or not) are read by the failure model, and a
// caller's error reaches the client in the client's shape.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

const converseModel = "meta.llama3-3-70b-instruct-v1:0"

// converseStub answers every ConverseStream with frames: events (type,
// payload), then an exception of type exType when set.
func converseStub(t *testing.T, events [][2]string, exType string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/converse-stream") {
			http.Error(w, "want converse-stream", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		enc := eventstream.NewEncoder()
		for _, ev := range events {
			var m eventstream.Message
			m.Headers.Set(":message-type", eventstream.StringValue("event"))
			m.Headers.Set(":event-type", eventstream.StringValue(ev[0]))
			m.Payload = []byte(ev[1])
			_ = enc.Encode(w, m)
		}
		if exType != "" {
			var m eventstream.Message
			m.Headers.Set(":message-type", eventstream.StringValue("exception"))
			m.Headers.Set(":exception-type", eventstream.StringValue(exType))
			m.Payload = []byte(`{"message":"the host failed"}`)
			_ = enc.Encode(w, m)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// fallbackSim is the Anthropic provider a failed-over request reaches.
func fallbackSim(t *testing.T) string {
	t.Helper()
	next, err := sim.StartProvider(sim.Provider{Name: "claude", Stream: sim.Pace{Chunks: 2}}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close() })
	return next.URL()
}

func TestConverseExceptionBeforeFirstByteFailsOver(t *testing.T) {
	t.Parallel()
	base := converseStub(t, nil, "throttlingException")
	srv, exp := twoTargetGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-test-key-1}", base), converseModel, fallbackSim(t))
	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	attrs := attemptAttrs(t, exp, 2)
	if len(attrs) != 2 || attrs[0]["error.type"] != "429" || attrs[0]["gen_ai.provider.name"] != "aws.bedrock" {
		t.Errorf("attempts %v, want converse's exception as a 429, then claude", attrs)
	}
}

func TestConverseExceptionAfterFirstByteEndsStream(t *testing.T) {
	t.Parallel()
	base := converseStub(t, [][2]string{
		{"messageStart", `{"role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`},
	}, "modelStreamErrorException")
	srv, _ := twoTargetGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-test-key-1}", base), converseModel, fallbackSim(t))
	resp := post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"Hel"`) || !strings.Contains(body, "event: error") || strings.Contains(body, "message_stop") {
		t.Fatalf("want the text, then an error event and no message_stop: %d %s", resp.StatusCode, body)
	}
}

// googleStub answers every call with status and body.
func googleStub(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGeminiErrorsFailOver(t *testing.T) {
	t.Parallel()
	exhausted := `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}]`
	tests := []struct {
		name, provider, want string
	}{
		{"rate limit wrapped in an array", fmt.Sprintf("{kind: gemini, base_url: %q, api_key: gemini-key-1}", googleStub(t, 429, exhausted)), "429"},
		{"refused key", fmt.Sprintf("{kind: gemini, base_url: %q, api_key: a-wrong-gemini-key}",
			startHostSim(t, "gem", sim.Host{Kind: sim.HostGemini, APIKey: "the-right-gemini-key"})+"/v1beta"), "auth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, exp := twoTargetGateway(t, tc.provider, "gemini-2.5-flash", fallbackSim(t))
			resp := post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
			if body := readAll(t, resp.Body); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			attrs := attemptAttrs(t, exp, 2)
			if len(attrs) != 2 || attrs[0]["error.type"] != tc.want || attrs[0]["gen_ai.provider.name"] != "gcp.gemini" {
				t.Errorf("attempts %v, want gemini's failure as %s, then claude", attrs, tc.want)
			}
		})
	}
}

// TestGeminiRetryInfoIsRetryAfter: Google says when to come back in its
// body (google.rpc.RetryInfo's retryDelay), not in a header; when every
// target failed on it, the client's Retry-After says it (whole seconds,
// rounded up), as it would for a provider's own Retry-After header.
func TestGeminiRetryInfoIsRetryAfter(t *testing.T) {
	t.Parallel()
	exhausted := `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"29.2s"}]}}]`
	srv, _ := hostGateway(t, fmt.Sprintf("{kind: gemini, base_url: %q, api_key: gemini-key-1}", googleStub(t, 429, exhausted)), "gemini-2.5-flash")
	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" {
		t.Errorf("%d Retry-After %q %s, want 429 with Retry-After 30", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestGeminiCallerErrorInClientShape: Google's INVALID_ARGUMENT about the
// request is the caller's: it reaches the client in the client's error
// shape, with Google's message.
func TestGeminiCallerErrorInClientShape(t *testing.T) {
	t.Parallel()
	invalid := `[{"error":{"code":400,"message":"Unable to submit request because it has an empty text parameter.","status":"INVALID_ARGUMENT"}}]`
	srv, _ := hostGateway(t, fmt.Sprintf("{kind: gemini, base_url: %q, api_key: gemini-key-1}", googleStub(t, 400, invalid)), "gemini-2.5-flash")
	for _, c := range []struct{ path, body, want string }{
		{"/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`,
			`{"type":"error","error":{"type":"invalid_request_error","message":"Unable to submit request because it has an empty text parameter."}}`},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			`{"error":{"message":"Unable to submit request because it has an empty text parameter.","type":"invalid_request_error"`},
	} {
		resp := post(t, srv.URL, c.path, c.body)
		if body := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.HasPrefix(body, c.want) {
			t.Errorf("%s: %d %s\nwant 400 %s", c.path, resp.StatusCode, body, c.want)
		}
	}
}
