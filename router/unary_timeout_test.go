package router_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
)

// A unary answer's first byte is its response headers: timeout.first_byte
// bounds the wait for them, and timeout.total bounds the body after them.
// A slow but valid answer (headers at once, the body after twice the
// first-byte timeout) is served by the one attempt that started it: no
// failover to a target that would start (and bill) the work again, no
// fault counted, no circuit opened.
func TestSlowUnaryBodyIsServedWithinTotal(t *testing.T) {
	t.Parallel()
	const firstByte = 100 * time.Millisecond
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // the headers, at once
		select {
		case <-time.After(2 * firstByte): // the upstream's own delay
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"slow but sure"},"finish_reason":"stop"}]}`)
	})
	other := newUpstream(t, apiAnswer)
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  a: {base_url: \"" + slow.URL + "/v1\", api_key: key-a, models: [m], timeout: {first_byte: 100ms, total: 5s}, circuit_breaker: {failures: 1, cooldown: 30s}}\n" +
		"  b: {base_url: \"" + other.URL + "/v1\", api_key: key-b, models: [m]}\n" +
		"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
	gw := gatewayFromYAML(t, cfg, router.Options{})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "slow but sure") {
		t.Fatalf("slow unary answer: %d %s, want 200 with a's body", resp.StatusCode, body)
	}
	if got := resp.Header.Get(router.HeaderTarget); got != "a" {
		t.Errorf("%s = %q, want a", router.HeaderTarget, got)
	}
	if got := resp.Header.Get(router.HeaderAttempts); got != "1" {
		t.Errorf("%s = %q, want 1 (no failover)", router.HeaderAttempts, got)
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("b was sent %d requests, want 0", n)
	}
	row := routingRow(t, gw, "m", "a")
	if row.CircuitOpen || row.Faults != 0 || row.Disabled != "" {
		t.Errorf("a after a slow valid answer: circuit %s, faults %v, disabled %q; want closed, 0, none", row.Circuit, row.Faults, row.Disabled)
	}
}

// The body of a unary answer is still bounded: by timeout.total. An
// upstream that sends its headers and then never its body is a timeout
// that fails over.
func TestUnaryBodyPastTotalFailsOver(t *testing.T) {
	t.Parallel()
	hung := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the body never comes
	})
	other := newUpstream(t, apiAnswer)
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  a: {base_url: \"" + hung.URL + "/v1\", api_key: key-a, models: [m], timeout: {first_byte: 50ms, total: 150ms}}\n" +
		"  b: {base_url: \"" + other.URL + "/v1\", api_key: key-b, models: [m]}\n" +
		"targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n"
	gw := gatewayFromYAML(t, cfg, router.Options{})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(router.HeaderTarget) != "b" {
		t.Fatalf("a's body hangs past total: %d from %q, want 200 from b", resp.StatusCode, resp.Header.Get(router.HeaderTarget))
	}
	if got := resp.Header.Get(router.HeaderAttempts); got != "2" {
		t.Errorf("%s = %q, want 2", router.HeaderAttempts, got)
	}
}
