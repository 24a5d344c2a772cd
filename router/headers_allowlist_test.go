package router_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// edgeHeaders are what a provider and the edge in front of it add to an
// answer: none of them is the gateway's to hand on.
var edgeHeaders = map[string]string{
	"Server":                                 "cloudflare",
	"Via":                                    "1.1 google",
	"Alt-Svc":                                `h3=":443"; ma=86400`,
	"Strict-Transport-Security":              "max-age=31536000; includeSubDomains; preload",
	"Set-Cookie":                             "__cf_bm=abc; path=/; HttpOnly",
	"Openai-Organization":                    "org-abc",
	"Anthropic-Organization-Id":              "0d5e-org",
	"Cf-Ray":                                 "8f1a2b3c4d5e6f70-AMS",
	"X-Envoy-Upstream-Service-Time":          "412",
	"X-Unknown-Thing":                        "whatever",
	"Openai-Processing-Ms":                   "412",
	"X-Ratelimit-Remaining-Requests":         "99",
	"X-Ratelimit-Reset-Requests":             "6ms",
	"Anthropic-Ratelimit-Requests-Remaining": "98",
	"Retry-After-Ms":                         "1500",
}

// answerWithEdgeHeaders answers as apiAnswer does (or the stream, or the
// error the Accept header asks for), with every edge header and the
// request id each API names its own way.
func answerWithEdgeHeaders(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range edgeHeaders {
		h.Set(k, v)
	}
	anthropic := strings.HasSuffix(r.URL.Path, "/messages")
	if anthropic {
		h.Set("Request-Id", "req_anthropic_1")
	} else {
		h.Set("X-Request-Id", "req_openai_1")
	}
	accept := r.Header.Get("Accept")
	switch {
	case strings.Contains(accept, "x-case/4xx"):
		body := `{"error":{"message":"bad","type":"invalid_request_error"}}`
		if anthropic {
			body = `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`
		}
		jsonAnswer(http.StatusBadRequest, body)(w, r)
	case strings.Contains(accept, "x-case/429"):
		h.Set("Retry-After", "0x1p4") // garbage: never relayed
		body := `{"error":{"message":"slow down","type":"rate_limit_error"}}`
		if anthropic {
			body = `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`
		}
		jsonAnswer(http.StatusTooManyRequests, body)(w, r)
	case strings.Contains(accept, "x-case/stream") && anthropic:
		h.Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, anthropicStreamOK)
	case strings.Contains(accept, "x-case/stream"):
		h.Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
	default:
		h.Set("Retry-After", "7")
		apiAnswer(w, r)
	}
}

const anthropicStreamOK = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":0}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// relayedResponseHeader reports whether a client may see header k: the
// gateway's own, the framing, and the allow-list.
func relayedResponseHeader(k string) bool {
	switch k {
	case "Content-Type", "Content-Length", "Date", "Retry-After", "Retry-After-Ms", router.HeaderUpstreamRequestID:
		return true
	}
	return strings.HasPrefix(k, "X-Firstbyte-") || strings.HasPrefix(k, "X-Ratelimit-") || strings.HasPrefix(k, "Anthropic-Ratelimit-")
}

// TestResponseHeadersAllowList: of an upstream's response headers only the
// allow-list reaches the client (content type, retry-after as the gateway
// read it, the rate-limit headers, the provider's request id under one
// name), on every relay path: unary, stream, translated (chat to
// Anthropic) unary and stream, a 4xx handed back, and the last failure of
// a request whose every attempt failed.
func TestResponseHeadersAllowList(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, answerWithEdgeHeaders)
	openai := newGateway(t, "fallback", "", target{name: "p", url: up.URL})
	anthropic := serveGuarded(t, newGatewayFromYAML(t, fmt.Sprintf(`strategy: {mode: fallback}
providers:
  an: {kind: anthropic, base_url: %q, api_key: key-an-0123456789, timeout: {first_byte: 5s, total: 30s}}
targets:
  - {virtual_key: an, model_map: {m: m}}
`, up.URL+"/v1"), router.Options{}).Handler())
	stream := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name, gw, body, cse string
		status              int
		ctype, requestID    string
		retryAfter          string
	}{
		{"unary", openai.URL, chatBody, "unary", 200, "application/json", "req_openai_1", "7"},
		{"stream", openai.URL, stream, "stream", 200, "text/event-stream", "req_openai_1", ""},
		{"4xx", openai.URL, chatBody, "4xx", 400, "application/json", "req_openai_1", ""},
		{"all failed 429", openai.URL, chatBody, "429", 429, "application/json", "req_openai_1", ""},
		{"translated unary", anthropic.URL, chatBody, "unary", 200, "application/json", "req_anthropic_1", "7"},
		{"translated stream", anthropic.URL, stream, "stream", 200, "text/event-stream", "req_anthropic_1", ""},
		{"translated 4xx", anthropic.URL, chatBody, "4xx", 400, "application/json", "req_anthropic_1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, tc.gw, "/v1/chat/completions", tc.body, "Accept", "application/json, x-case/"+tc.cse)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			for k, v := range resp.Header {
				if !relayedResponseHeader(k) {
					t.Errorf("client received %s: %q", k, v)
				}
			}
			if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, tc.ctype) {
				t.Errorf("Content-Type = %q, want %q", got, tc.ctype)
			}
			if got := resp.Header.Get(router.HeaderUpstreamRequestID); got != tc.requestID {
				t.Errorf("%s = %q, want %q", router.HeaderUpstreamRequestID, got, tc.requestID)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
			if got := resp.Header.Get("Retry-After-Ms"); got != "1500" {
				t.Errorf("Retry-After-Ms = %q, want 1500", got)
			}
			if got := resp.Header.Get("X-Ratelimit-Remaining-Requests"); got != "99" {
				t.Errorf("X-Ratelimit-Remaining-Requests = %q, want 99: a rate-limit header did not cross", got)
			}
			if got := resp.Header.Get("Anthropic-Ratelimit-Requests-Remaining"); got != "98" {
				t.Errorf("Anthropic-Ratelimit-Requests-Remaining = %q, want 98", got)
			}
		})
	}
}
