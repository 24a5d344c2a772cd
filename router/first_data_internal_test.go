package router

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A stream's first byte is its first event that carries data: an SSE
// comment (OpenRouter's ": PROCESSING") sent at once is no first byte, for
// the time-to-first-byte sample and for the hedge alike. The tests act on
// what the gateway has read of the upstream's body, counted by the
// transport, and on an injected clock and hedge timer.

const (
	processing = ": PROCESSING\n\n"
	dataChunk  = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"from %s\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
)

// readCounter is a transport whose answers' bodies count the bytes the
// gateway has read of them.
type readCounter struct {
	base http.RoundTripper
	n    atomic.Int64
	read chan struct{} // signalled after a read that returned bytes (one pending at most)
}

func newReadCounter(t *testing.T) *readCounter {
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	return &readCounter{base: base, read: make(chan struct{}, 1)}
}

func (c *readCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		resp.Body = countedBody{resp.Body, c}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	c *readCounter
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.n.Add(int64(n))
		select {
		case b.c.read <- struct{}{}:
		default:
		}
	}
	return n, err
}

// waitRead waits until the gateway has read n bytes of upstream bodies.
func (c *readCounter) waitRead(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for c.n.Load() < int64(n) {
		select {
		case <-c.read:
		case <-deadline:
			t.Fatalf("timed out waiting for the gateway to read %s", what)
		}
	}
}

// commentFirst answers a stream with a comment at once and its data (the
// answer of name) once release is closed; arrived is signalled when a
// request comes.
func commentFirst(name string, arrived, release chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		arrived <- struct{}{}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, processing)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, strings.ReplaceAll(dataChunk, "%s", name))
	}
}

// serveBody sends one request to g at path and returns its answer,
// asynchronously.
func serveBody(g *Gateway, path, body string) chan *httptest.ResponseRecorder {
	out := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		g.Handler().ServeHTTP(rec, req)
		out <- rec
	}()
	return out
}

func gatewayOf(t *testing.T, yaml string, o Options) *Gateway {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestACommentIsNotTheFirstByte: an upstream that sends ": PROCESSING" at
// once and its first data d later has a time to first byte of d, relayed
// as it came (the comment held until the data) or translated.
func TestACommentIsNotTheFirstByte(t *testing.T) {
	const d = 1500 * time.Millisecond
	for _, tc := range []struct{ name, path, body, first string }{
		{"OpenAI client, passed through", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, processing + "data: {"},
		{"Anthropic client, translated", "/v1/messages", `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "event: message_start\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived, release := make(chan struct{}, 1), make(chan struct{})
			up := httptest.NewServer(commentFirst("up", arrived, release))
			t.Cleanup(up.Close)
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			clock, rc := NewFakeClockAt(t0), newReadCounter(t)
			g := gatewayOf(t, "strategy: {mode: fallback}\nproviders:\n  up: {base_url: \""+up.URL+"/v1\", models: [m]}\ntargets:\n  - {virtual_key: up}\n",
				Options{TracerProvider: tp, Now: clock.Now, Transport: rc})
			done := serveBody(g, tc.path, tc.body)
			WaitFor(t, arrived, "the attempt")
			rc.waitRead(t, len(processing), "the comment")
			clock.Advance(d)
			close(release)
			rec := <-done
			if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), tc.first) {
				t.Fatalf("%d %q: want a stream starting %q", rec.Code, rec.Body.String(), tc.first)
			}
			var ttfb float64
			for _, s := range exp.GetSpans() {
				if s.SpanKind != trace.SpanKindClient {
					continue
				}
				for _, kv := range s.Attributes {
					if kv.Key == telemetry.KeyTimeToFirstByte {
						ttfb = kv.Value.AsFloat64()
					}
				}
			}
			if got := time.Duration(ttfb * float64(time.Second)); got != d {
				t.Fatalf("time to first byte %v, want %v: the comment is not a first byte", got, d)
			}
		})
	}
}

// TestACommentDoesNotStopTheHedge: the first attempt sent a comment at
// once and no data since; when the hedge's delay passes, the hedge starts
// and serves the request.
func TestACommentDoesNotStopTheHedge(t *testing.T) {
	aArrived, bArrived, never, now := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	close(now)
	a := &heldUpstream{Server: httptest.NewServer(commentFirst("a", aArrived, never)), name: "a"}
	b := &heldUpstream{Server: httptest.NewServer(commentFirst("b", bArrived, now)), name: "b"}
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	t.Cleanup(func() { close(never) }) // before the servers close: a's handler ends
	rc := newReadCounter(t)
	g, timers := hedgedGatewayWith(t, Options{Transport: rc}, 1, 1, a, b)
	done := serveBody(g, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	WaitFor(t, aArrived, "the first attempt")
	rc.waitRead(t, len(processing), "the first attempt's comment")
	(<-timers).c <- time.Time{} // no data from a yet: the hedge is due
	WaitFor(t, bArrived, "the hedge")
	rec := <-done
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "from b") || strings.Contains(body, "from a") {
		t.Fatalf("%d %q: want b's stream alone", rec.Code, body)
	}
	if h := rec.Header(); h.Get(HeaderHedged) != HedgeWon || h.Get(HeaderTarget) != "b" {
		t.Fatalf("headers %v: want hedged won, target b", h)
	}
}
