package router_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router"
)

// TestUpstreamResponseHeadersBounded: through the gateway's own transport
// (router.NewTransport), an upstream whose response header is larger than
// 1 MiB is a provider fault of class transport: the request fails over to
// a healthy target, unary and streaming, and the client never sees the
// header. A header of half that size is relayed as any other (the bound is
// where it says, not lower).
func TestUpstreamResponseHeadersBounded(t *testing.T) {
	const stream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name       string
		headerSize int
		body       string
		wantServer string // target that serves
	}{
		{"2 MB, unary", 2 << 20, chatBody, "b"},
		{"2 MB, stream", 2 << 20, stream, "b"},
		{"just over 1 MiB", 1<<20 + 1, chatBody, "b"},
		{"512 KiB, unary (control)", 512 << 10, chatBody, "a"},
		{"512 KiB, stream (control)", 512 << 10, stream, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			big := strings.Repeat("h", tt.headerSize)
			a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Ratelimit-Padding", big)
				answerChatOrStream(w, r)
			})
			b := newUpstream(t, answerChatOrStream)
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			gw := newGatewayWith(t, "fallback", "", router.Options{TracerProvider: tp}, // Transport nil: NewTransport()
				target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()

			resp := post(t, srv.URL, "/v1/chat/completions", tt.body)
			body := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.200s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Firstbyte-Target"); got != tt.wantServer {
				t.Errorf("served by %q (attempts %s), want %q", got, resp.Header.Get("X-Firstbyte-Attempts"), tt.wantServer)
			}
			relayed := resp.Header.Get("X-Ratelimit-Padding")
			if tt.wantServer == "b" && relayed != "" {
				t.Errorf("the client saw the oversized header (%d bytes)", len(relayed))
			}
			if tt.wantServer == "a" && len(relayed) != tt.headerSize {
				t.Errorf("the control header reached the client with %d bytes, want %d", len(relayed), tt.headerSize)
			}
			if tt.wantServer != "b" {
				return
			}
			if a.hits.Load() != 1 || b.hits.Load() != 1 {
				t.Errorf("upstream hits a=%d b=%d, want 1 each", a.hits.Load(), b.hits.Load())
			}
			for _, s := range waitForSpans(t, exp, 3) {
				attrs := attrMap(s.Attributes)
				if s.SpanKind != trace.SpanKindClient || attrs["firstbyte.target"].AsString() != "a" {
					continue
				}
				if got := attrs["error.type"].AsString(); got != fault.ErrorTransport {
					t.Errorf("a's attempt error.type = %q, want %q", got, fault.ErrorTransport)
				}
				if got := attrs["firstbyte.fault"].AsString(); got == "" || got == "none" {
					t.Errorf("a's attempt firstbyte.fault = %q, want a provider fault", got)
				}
			}
		})
	}
}

// answerChatOrStream answers an OpenAI chat request, unary or streaming.
func answerChatOrStream(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), `"stream":true`) {
		apiAnswer(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":null}]}\n\n"+
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}
