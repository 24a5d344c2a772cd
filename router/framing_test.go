package router_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestHTTP10TransferEncodingRefusedAndConnectionClosed: Go's server drops
// Transfer-Encoding from an HTTP/1.0 request and frames its body by
// Content-Length alone (or as empty), so the bytes after that are read as
// the next request: one that a proxy in front framed as part of this one's
// chunked body. Such a request gets a 400 invalid_framing and the
// connection closes, on a kept-alive connection too; the bytes after it
// never reach an upstream.
func TestHTTP10TransferEncodingRefusedAndConnectionClosed(t *testing.T) {
	up := newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, twoKinds(up.URL), router.Options{}).Handler())
	const body = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	// Read by Content-Length: 5, the body is "0\r\n\r\n" and what follows
	// is a whole request of its own.
	smuggled := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	chunkedThenSmuggled := "0\r\n\r\n" + smuggled
	tests := []struct {
		name, path, framing, body string
		wantShape                 string // "openai" | "anthropic"
	}{
		{"both, OpenAI", "/v1/chat/completions", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", chunkedThenSmuggled, "openai"},
		{"both, Anthropic", "/v1/messages", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", chunkedThenSmuggled, "anthropic"},
		{"both, lower case", "/v1/chat/completions", "transfer-encoding: chunked\r\ncontent-length: 5\r\n", chunkedThenSmuggled, "openai"},
		{"Transfer-Encoding alone", "/v1/chat/completions", "Transfer-Encoding: chunked\r\n",
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled), "openai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			// A clean HTTP/1.0 keep-alive request first: the guard looks at
			// each request's own headers.
			clean := fmt.Sprintf("POST %s HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tt.path, len(body), body)
			ok := rawExchange(t, conn, br, clean)
			_, _ = io.Copy(io.Discard, ok.Body)
			if ok.StatusCode != 200 || ok.Close {
				t.Fatalf("clean HTTP/1.0 keep-alive request = %d (close %v), want 200 on a kept-alive connection", ok.StatusCode, ok.Close)
			}
			bad := "POST " + tt.path + " HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n" + tt.framing + "\r\n" + tt.body
			resp := rawExchange(t, conn, br, bad)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400: %s", resp.StatusCode, b)
			}
			if !resp.Close {
				t.Error("the answer does not close the connection")
			}
			var shape struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &shape); err != nil {
				t.Fatalf("body %q: %v", b, err)
			}
			if tt.wantShape == "anthropic" && (shape.Type != "error" || shape.Error.Type != "invalid_request_error") {
				t.Errorf("body %s is not an Anthropic invalid_request_error", b)
			}
			if tt.wantShape == "openai" && (shape.Type != "" || shape.Error.Code != "invalid_framing") {
				t.Errorf("body %s is not an OpenAI invalid_framing error", b)
			}
			if !strings.Contains(shape.Error.Message, "Transfer-Encoding") {
				t.Errorf("message %q does not name Transfer-Encoding", shape.Error.Message)
			}
			if extra, err := br.ReadString(0); err == nil || extra != "" {
				t.Errorf("the connection stayed open or carried more: %q, %v", extra, err)
			}
		})
	}
	if n := up.hits.Load(); n != int64(len(tests)) {
		t.Errorf("upstream got %d requests, want %d (only the clean ones; none smuggled)", n, len(tests))
	}
}
