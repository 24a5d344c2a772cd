package router_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestHeaderHygieneBothWays: through real sockets, per-connection headers
// (those a Connection header names, and Proxy-Connection) cross the gateway
// in neither direction, and no upstream response header that carries the
// provider key reaches a client: not on a unary answer, a stream, or a 4xx
// handed back unchanged. Ordinary headers still cross (the controls).
func TestHeaderHygieneBothWays(t *testing.T) {
	t.Parallel()
	const key = "key-p-0123456789" // a key of realistic length: shorter ones are never scrubbed
	answer := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Connection", "X-Up-Hop")
		h.Set("X-Up-Hop", "per-connection")
		h.Set("Proxy-Connection", "keep-alive")
		h.Set("X-Echo-Auth", "Bearer "+key)
		h.Set("X-Ratelimit-Echo", "Bearer "+key) // an allowed header: the scrub drops it
		h.Set("X-Request-Id", "req-123")
		switch {
		case strings.Contains(r.Header.Get("Accept"), "4xx"):
			jsonAnswer(http.StatusBadRequest, `{"error":{"message":"bad","type":"invalid_request_error"}}`)(w, r)
		case strings.Contains(r.Header.Get("Accept"), "stream"):
			h.Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
		default:
			apiAnswer(w, r)
		}
	}
	var seen []http.Header
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		answer(w, r)
	})
	// The case rides in Accept, a header the gateway forwards.
	cfg := strings.Replace(configYAML("fallback", "", target{name: "p", url: up.URL}), "api_key: key-p,", "api_key: "+key+",", 1)
	gw := serveGuarded(t, newGatewayFromYAML(t, cfg, router.Options{}).Handler())

	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"unary", chatBody, 200},
		{"stream", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 200},
		{"4xx", chatBody, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen = seen[:0]
			req, err := http.NewRequest(http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Connection", "User-Agent, X-Client-Hop")
			req.Header.Set("X-Client-Hop", "per-connection")
			req.Header.Set("Proxy-Connection", "keep-alive")
			req.Header.Set("User-Agent", "named-by-connection")
			req.Header.Set("Accept", "application/json, x-case/"+tc.name) // a forwarded header: the control
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}

			// Client to upstream.
			if len(seen) != 1 {
				t.Fatalf("upstream saw %d requests, want 1", len(seen))
			}
			up := seen[0]
			if got := up.Get("Accept"); !strings.Contains(got, "x-case/"+tc.name) {
				t.Errorf("upstream Accept = %q: the forwarded control header did not cross", got)
			}
			if got := up.Get("User-Agent"); got == "named-by-connection" {
				t.Error("a request header named by the client's Connection header was forwarded")
			}
			for _, k := range []string{"X-Client-Hop", "Proxy-Connection"} {
				if v := up.Get(k); v != "" {
					t.Errorf("upstream received %s: %q", k, v)
				}
			}

			// Upstream to client.
			if got := resp.Header.Get(router.HeaderUpstreamRequestID); got != "req-123" {
				t.Errorf("%s = %q: the request id (the control) did not cross", router.HeaderUpstreamRequestID, got)
			}
			for _, k := range []string{"X-Up-Hop", "Proxy-Connection", "X-Echo-Auth", "X-Ratelimit-Echo"} {
				if v := resp.Header.Get(k); v != "" {
					t.Errorf("client received %s: %q", k, v)
				}
			}
			for k, vs := range resp.Header {
				for _, v := range vs {
					if strings.Contains(v, key) {
						t.Errorf("client header %s carries the provider key", k)
					}
				}
			}
			if strings.Contains(body, key) {
				t.Error("the answer body carries the provider key")
			}
		})
	}
}

// TestShortKeyKeepsStreamContentType: a placeholder key ("a") is in
// almost every header value; a stream still reaches the client as
// text/event-stream, its rate-limit headers with it.
func TestShortKeyKeepsStreamContentType(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Ratelimit-Reset-Requests", "a")
		_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
	})
	cfg := strings.Replace(configYAML("fallback", "", target{name: "p", url: up.URL}), "api_key: key-p,", "api_key: a,", 1)
	gw := serveGuarded(t, newGatewayFromYAML(t, cfg, router.Options{}).Handler())
	resp := post(t, gw.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", got)
	}
	if got := resp.Header.Get("X-Ratelimit-Reset-Requests"); got != "a" {
		t.Errorf("X-Ratelimit-Reset-Requests = %q, want %q: a short key scrubbed it", got, "a")
	}
}
