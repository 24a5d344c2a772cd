package router_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// errorAnswer is a gateway error in either API's shape, decoded.
type errorAnswer struct {
	Type  string `json:"type"` // Anthropic: "error"
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"` // OpenAI only
	} `json:"error"`
}

// decodeError decodes an error answer and checks it is in the shape of the
// API the request used.
func decodeError(t *testing.T, resp *http.Response, anthropic bool) errorAnswer {
	t.Helper()
	body := readAll(t, resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json (body %s)", ct, body)
	}
	var e errorAnswer
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, body)
	}
	if anthropic {
		if e.Type != "error" || e.Error.Code != nil {
			t.Errorf("body %s is not Anthropic-shaped ({\"type\":\"error\",\"error\":{\"type\",\"message\"}})", body)
		}
	} else if e.Type != "" || e.Error.Code == nil {
		t.Errorf("body %s is not OpenAI-shaped ({\"error\":{\"message\",\"type\",\"code\"}})", body)
	}
	return e
}

// orderPool serves client model "m" on a and b (openai) and on an
// (anthropic); c serves only "other". All answer as their API does.
func orderPool(t *testing.T) (*http.Response, func(path, body string, hdr ...string) *http.Response, *upstreamStub) {
	t.Helper()
	up := newUpstream(t, apiAnswer)
	yaml := fmt.Sprintf(`strategy: {mode: fallback}
providers:
  a:  {kind: openai, base_url: %[1]q}
  b:  {kind: openai, base_url: %[1]q}
  an: {kind: anthropic, base_url: %[1]q}
  c:  {kind: openai, base_url: %[1]q}
targets:
  - {virtual_key: a,  model_map: {m: m}}
  - {virtual_key: b,  model_map: {m: m}}
  - {virtual_key: an, model_map: {m: m}}
  - {virtual_key: c,  model_map: {other: other}}
`, up.URL+"/v1")
	srv := serveGuarded(t, newGatewayFromYAML(t, yaml, router.Options{}).Handler())
	send := func(path, body string, hdr ...string) *http.Response {
		return post(t, srv.URL, path, body, hdr...)
	}
	// A control: a valid order is obeyed, so a 400 below is the header's doing.
	ok := send("/v1/chat/completions", chatBody, router.HeaderProviderOrder, "b")
	return ok, send, up
}

const messagesBody = `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`

// TestProviderOrderNamingAnIneligibleTarget: a name in
// X-Firstbyte-Provider-Order that is not an eligible target for the
// request's model and endpoint is a 400 (code invalid_provider_order) whose
// message names it, in the caller's API shape, and nothing goes upstream.
func TestProviderOrderNamingAnIneligibleTarget(t *testing.T) {
	t.Parallel()
	ok, send, up := orderPool(t)
	if ok.StatusCode != 200 || ok.Header.Get(router.HeaderTarget) != "b" || ok.Header.Get(router.HeaderSelection) != "manual" {
		t.Fatalf("control: order b gave %d target %q selection %q, want 200 from b, manual",
			ok.StatusCode, ok.Header.Get(router.HeaderTarget), ok.Header.Get(router.HeaderSelection))
	}
	readAll(t, ok.Body)
	before := up.hits.Load()

	tests := []struct {
		name, path, body, order string
		anthropic               bool
		named                   string // what the message must quote
	}{
		{"unknown target, OpenAI", "/v1/chat/completions", chatBody, "nope", false, `"nope"`},
		{"unknown target, Anthropic", "/v1/messages", messagesBody, "nope", true, `"nope"`},
		{"unknown after a valid one", "/v1/chat/completions", chatBody, "a, nope", false, `"nope"`},
		{"unknown after a valid one, Anthropic", "/v1/messages", messagesBody, "b,nope,a", true, `"nope"`},
		{"a target that does not serve the model", "/v1/chat/completions", chatBody, "c", false, `"c"`},
		{"a target that does not serve the model, Anthropic", "/v1/messages", messagesBody, "a,c", true, `"c"`},
		// Embeddings go to openai targets only: an anthropic one serving the
		// model is configured, but not eligible there.
		{"a target of the wrong kind for the endpoint", "/v1/embeddings", `{"model":"m","input":"hi"}`, "an", false, `"an"`},
		{"names are case-sensitive", "/v1/chat/completions", chatBody, "A", false, `"A"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := send(tt.path, tt.body, router.HeaderProviderOrder, tt.order)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", resp.StatusCode)
			}
			e := decodeError(t, resp, tt.anthropic)
			if e.Error.Type != "invalid_request_error" {
				t.Errorf("error type = %q, want invalid_request_error", e.Error.Type)
			}
			if !tt.anthropic && (e.Error.Code == nil || *e.Error.Code != "invalid_provider_order") {
				t.Errorf("error code = %v, want invalid_provider_order", e.Error.Code)
			}
			if !strings.Contains(e.Error.Message, tt.named) || !strings.Contains(e.Error.Message, router.HeaderProviderOrder) {
				t.Errorf("message %q does not name %s and the header", e.Error.Message, tt.named)
			}
			for _, h := range []string{router.HeaderAttempts, router.HeaderTarget, router.HeaderSelection} {
				if v := resp.Header.Get(h); v != "" {
					t.Errorf("%s = %q on a refused request, want none (no attempt was made)", h, v)
				}
			}
		})
	}
	if n := up.hits.Load() - before; n != 0 {
		t.Errorf("%d requests went upstream for refused orders, want 0", n)
	}
}

// TestProviderOrderEmpty: a header that is present but names nothing (an
// empty value, or an empty name between commas) is refused like an unknown
// name, its message saying "(empty)"; it is not taken as "no order".
func TestProviderOrderEmpty(t *testing.T) {
	t.Parallel()
	_, send, up := orderPool(t)
	before := up.hits.Load()
	for _, tt := range []struct {
		name, path, body, order string
		anthropic               bool
	}{
		{"empty value, OpenAI", "/v1/chat/completions", chatBody, "", false},
		{"empty value, Anthropic", "/v1/messages", messagesBody, "", true},
		{"blank value", "/v1/chat/completions", chatBody, "   ", false},
		{"empty name between commas", "/v1/chat/completions", chatBody, "a,,b", false},
		{"trailing comma", "/v1/messages", messagesBody, "a,", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := send(tt.path, tt.body, router.HeaderProviderOrder, tt.order)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", resp.StatusCode)
			}
			e := decodeError(t, resp, tt.anthropic)
			if !strings.Contains(e.Error.Message, `"(empty)"`) {
				t.Errorf("message %q does not say the name is empty", e.Error.Message)
			}
			if !tt.anthropic && (e.Error.Code == nil || *e.Error.Code != "invalid_provider_order") {
				t.Errorf("error code = %v, want invalid_provider_order", e.Error.Code)
			}
		})
	}
	if n := up.hits.Load() - before; n != 0 {
		t.Errorf("%d requests went upstream for refused orders, want 0", n)
	}
}
