//go:build integration

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestNonStandardStatusHasItsReasonPhrase: a status net/http has no text
// for reaches the client with its phrase on the status line, through the
// real binary and a raw HTTP/1.1 connection: an upstream 529 that was the
// last failure ("Site is overloaded", not "status code 529"), and a 499
// passed through as it came.
func TestNonStandardStatusHasItsReasonPhrase(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Header.Get("Authorization"), "key-499") {
			w.WriteHeader(499)
			io.WriteString(w, `{"error":{"message":"client closed","type":"invalid_request_error"}}`)
			return
		}
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}))
	t.Cleanup(upstream.Close)
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
strategy: {mode: fallback}
providers:
  busy:   {kind: openai, base_url: %[1]q, api_key: key-529}
  closed: {kind: openai, base_url: %[1]q, api_key: key-499}
targets:
  - {virtual_key: busy, model_map: {m529: m}}
  - {virtual_key: closed, model_map: {m499: m}}
`, upstream.URL+"/v1"))

	conn, err := net.Dial("tcp", gw.api)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for _, tt := range []struct{ model, want string }{
		{"m529", "HTTP/1.1 529 Site is overloaded\r\n"},
		{"m499", "HTTP/1.1 499 Client Closed Request\r\n"},
		{"m529", "HTTP/1.1 529 Site is overloaded\r\n"}, // the next answer on the kept-alive connection too
	} {
		body := `{"model":"` + tt.model + `","messages":[{"role":"user","content":"hi"}]}`
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line := peekLine(t, br); line != tt.want {
			t.Errorf("%s: status line %q, want %q", tt.model, line, tt.want)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		rest, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.Contains(string(rest), "error") {
			t.Errorf("%s: body %q, %v; want the error body", tt.model, rest, err)
		}
	}
}

// peekLine is the first line buffered in br, CRLF included, as the bytes
// came off the connection; it stays in br.
func peekLine(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for n := 1; n <= 1024; n++ {
		b, err := br.Peek(n)
		if err != nil {
			t.Fatalf("reading the status line: %v", err)
		}
		if strings.HasSuffix(string(b), "\r\n") {
			return string(b)
		}
	}
	t.Fatal("no line in the first 1024 bytes")
	return ""
}
