package router_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Keep-alives are not data: Anthropic's ping events, SSE comments and
// empty events neither count as a stream's first byte (the first-byte
// timeout still runs while only they come) nor reset the idle watch
// after it.

const (
	msgPing      = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	sseComment   = ": keep-alive\n\n"
	emptyEvent   = "data:\n\n"
	keepAliveGap = 20 * time.Millisecond
)

// keepingAlive writes events, then keepAlive every keepAliveGap until the
// request ends or lasting has passed; then it ends the body (without a
// terminator).
func keepingAlive(keepAlive string, lasting time.Duration, events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, ev := range events {
			_, _ = io.WriteString(w, ev)
		}
		w.(http.Flusher).Flush()
		tick := time.NewTicker(keepAliveGap)
		defer tick.Stop()
		end := time.After(lasting)
		for {
			select {
			case <-tick.C:
				_, _ = io.WriteString(w, keepAlive)
				w.(http.Flusher).Flush()
			case <-end:
				return
			case <-r.Context().Done():
				return
			}
		}
	}
}

// keepAliveGateway is streamGateway with first_byte and idle of its own.
func keepAliveGateway(t *testing.T, kind, firstByte, idle string, handle http.HandlerFunc) (string, *tracetest.InMemoryExporter, *upstreamStub) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	up := newUpstream(t, handle)
	spare := newUpstream(t, sseAnswer("text/event-stream", 0, chatDelta, chatStop, chatDone))
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  up: {kind: " + kind + ", base_url: \"" + up.URL + "/v1\", models: [m], timeout: {first_byte: " + firstByte + ", idle: " + idle + ", total: 30s}}\n" +
		"  spare: {base_url: \"" + spare.URL + "/v1\", models: [m]}\n" +
		"targets:\n  - {virtual_key: up}\n  - {virtual_key: spare}\n"
	srv := newServer(t, gatewayFromYAML(t, cfg, router.Options{TracerProvider: tp}))
	return srv.URL, exp, spare
}

func TestKeepAlivesAreNoFirstByte(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind, client, body, keepAlive string
	}{
		{"Anthropic pings, passed through", "anthropic", "/v1/messages", streamMessages, msgPing},
		{"Anthropic pings, translated", "anthropic", "/v1/chat/completions", streamChat, msgPing},
		{"OpenAI comments, passed through", "openai", "/v1/chat/completions", streamChat, sseComment},
		{"OpenAI empty events, passed through", "openai", "/v1/chat/completions", streamChat, emptyEvent},
		{"OpenAI comments, translated", "openai", "/v1/messages", streamMessages, sseComment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, exp, spare := keepAliveGateway(t, tc.kind, "300ms", "10s", keepingAlive(tc.keepAlive, 3*time.Second))
			start := time.Now()
			resp := post(t, url, tc.client, tc.body)
			body := readAll(t, resp.Body)
			if took := time.Since(start); took > 2500*time.Millisecond {
				t.Errorf("took %v: keep-alives held off the first-byte timeout", took)
			}
			if spare.hits.Load() != 1 || resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "spare" {
				t.Fatalf("%d from %q (spare hit %d times): %q; want the spare's answer after the first-byte timeout",
					resp.StatusCode, resp.Header.Get(router.HeaderTarget), spare.hits.Load(), body)
			}
			if strings.Contains(body, "ping") || strings.Contains(body, "keep-alive") {
				t.Fatalf("the failed attempt's keep-alives reached the client: %q", body)
			}
			if span := attemptOf(t, exp, 3, "up"); span["error.type"] != "timeout" {
				t.Fatalf("up's attempt: error.type %q, want timeout", span["error.type"])
			}
		})
	}
}

func TestKeepAlivesDoNotFeedTheIdleWatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind, client, body, keepAlive string
		events                              []string
	}{
		{"Anthropic pings, passed through", "anthropic", "/v1/messages", streamMessages, msgPing, []string{msgStart, msgBlock, msgDelta}},
		{"Anthropic pings, translated", "anthropic", "/v1/chat/completions", streamChat, msgPing, []string{msgStart, msgBlock, msgDelta}},
		{"OpenAI comments, passed through", "openai", "/v1/chat/completions", streamChat, sseComment, []string{chatDelta}},
		{"OpenAI empty events, translated", "openai", "/v1/messages", streamMessages, emptyEvent, []string{chatDelta}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, exp, spare := keepAliveGateway(t, tc.kind, "2s", "300ms", keepingAlive(tc.keepAlive, 3*time.Second, tc.events...))
			start := time.Now()
			resp := post(t, url, tc.client, tc.body)
			body := readAll(t, resp.Body)
			if took := time.Since(start); took > 2500*time.Millisecond {
				t.Errorf("took %v: keep-alives held off the idle timeout", took)
			}
			if spare.hits.Load() != 0 || !strings.Contains(body, "stalled") {
				t.Fatalf("spare hit %d times; body %q: want the stream ended by its idle timeout", spare.hits.Load(), body)
			}
			if span := attemptOf(t, exp, 2, "up"); span["error.type"] != "stall" {
				t.Fatalf("up's attempt: error.type %q, want stall", span["error.type"])
			}
		})
	}
}
