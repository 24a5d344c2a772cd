package router_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router"
)

// chunkedBody hands out its data in the pieces it was split into, as a
// provider's stream arrives in reads of any size.
type chunkedBody struct{ pieces [][]byte }

func (b *chunkedBody) Read(p []byte) (int, error) {
	for len(b.pieces) > 0 && len(b.pieces[0]) == 0 {
		b.pieces = b.pieces[1:]
	}
	if len(b.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.pieces[0])
	b.pieces[0] = b.pieces[0][n:]
	return n, nil
}

func (b *chunkedBody) Close() error { return nil }

// FuzzStreamRelay: whatever a provider's stream holds, split however it
// arrives, a client gets exactly its bytes (a stream is relayed, never
// rewritten), with the gateway's headers, and, when the stream broke its
// API (an event that is not JSON, no [DONE] at the end), what it got of it
// followed by an error event: a broken stream never ends cleanly. An empty
// stream, or one broken before a byte of it could be sent, fails over. The
// relay must never panic or hang.
func FuzzStreamRelay(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"), uint8(7))
	f.Add([]byte("event: message_start\ndata: {}\n\n"), uint8(1))
	f.Add([]byte{}, uint8(3))
	f.Add(bytes.Repeat([]byte("x"), 20000), uint8(200))
	var pieces [][]byte // what the next upstream answer holds (a worker runs one input at a time)
	tr := &memTransport{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream"}},
		body: func() io.ReadCloser { return &chunkedBody{pieces: pieces} }}
	cfg, err := config.Parse([]byte("strategy: {mode: fallback}\nproviders:\n  up: {base_url: \"http://127.0.0.1:1/v1\", models: [m], circuit_breaker: {failures: 1000000000}}\ntargets:\n  - {virtual_key: up}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		f.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Transport: tr})
	if err != nil {
		f.Fatal(err)
	}
	handler := gw.Handler()
	f.Fuzz(func(t *testing.T, stream []byte, split uint8) {
		size := int(split)%64 + 1
		pieces = nil
		for rest := stream; len(rest) > 0; {
			n := min(size, len(rest))
			pieces = append(pieces, bytes.Clone(rest[:n]))
			rest = rest[n:]
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		handler.ServeHTTP(rec, req)
		if len(stream) == 0 {
			if rec.Code != http.StatusBadGateway {
				t.Fatalf("empty stream: status %d, want 502", rec.Code)
			}
			return
		}
		body := rec.Body.Bytes()
		if rec.Code == http.StatusBadGateway && bytes.Contains(body, []byte(`"all_targets_failed"`)) {
			return // broken before a byte of it was the client's: failed over
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d, want 200", rec.Code)
		}
		if !bytes.Equal(body, stream) {
			i := bytes.LastIndex(body, []byte(`data: {"error":`))
			if i < 0 {
				t.Fatalf("relayed %d bytes of %d, not the stream and no error event", len(body), len(stream))
			}
			if got := body[:i]; !bytes.HasPrefix(stream, got) && !bytes.HasPrefix(stream, bytes.TrimSuffix(got, []byte("\n\n"))) {
				t.Fatalf("relayed %q before the error event, not a prefix of the stream", got)
			}
		}
		if rec.Header().Get(router.HeaderTarget) != "up" || rec.Header().Get("Content-Length") != "" {
			t.Fatalf("headers %v", rec.Header())
		}
	})
}
