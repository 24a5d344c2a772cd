package router_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestAllFailedNamesTheTransportFailure: when the only target's port is
// closed, the client's 502 says the connection was refused (not only
// "transport"), and nothing of the address it tried.
func TestAllFailedNamesTheTransportFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	gw := newGatewayFromYAML(t, fmt.Sprintf(`strategy: {mode: fallback}
providers:
  a: {base_url: "http://%s/v1", api_key: key-a}
targets: [{virtual_key: a, model_map: {m: m}}]
`, closed), router.Options{})
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)

	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	const want = "all 1 attempts failed: attempt 1 a: transport (connection refused)"
	if resp.StatusCode != http.StatusBadGateway || e.Error.Message != want {
		t.Errorf("%d %q, want 502 %q", resp.StatusCode, e.Error.Message, want)
	}
	_, port, _ := net.SplitHostPort(closed)
	if strings.Contains(string(body), port) {
		t.Errorf("the answer names the upstream's port %s: %s", port, body)
	}
}
