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
// rewritten), with the gateway's headers; an empty stream fails over. The
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
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), stream) {
			t.Fatalf("status %d, relayed %d bytes of %d (differ: %v)", rec.Code, rec.Body.Len(), len(stream), !bytes.Equal(rec.Body.Bytes(), stream))
		}
		if rec.Header().Get(router.HeaderTarget) != "up" || rec.Header().Get("Content-Length") != "" {
			t.Fatalf("headers %v", rec.Header())
		}
	})
}
