package router_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Streams are watched after their first byte: a pause past timeout.idle, a
// stream cut without its terminator, an event that is not JSON, or an
// answer that is not a stream at all is a provider fault and never a
// success; before the first byte it fails over, after it the stream ends
// with an error event in the client's format.

const streamChat = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
const streamMessages = `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`

// sseAnswer writes events (each a whole SSE event), flushing each, then
// waits for hold before ending the body.
func sseAnswer(contentType string, hold time.Duration, events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(200)
		for _, ev := range events {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
		}
	}
}

const (
	chatDelta   = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
	chatStop    = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":20,\"total_tokens\":23}}\n\n"
	chatDone    = "data: [DONE]\n\n"
	msgStart    = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	msgBlock    = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	msgDelta    = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	msgStopText = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":20}}\n\n"
	msgStop     = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// streamGateway serves a gateway over one upstream (kind openai or
// anthropic) and a healthy second one, recording spans.
func streamGateway(t *testing.T, kind, idle string, handle http.HandlerFunc) (*httptest.Server, *tracetest.InMemoryExporter, *upstreamStub) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	up := newUpstream(t, handle)
	spare := newUpstream(t, sseAnswer("text/event-stream", 0, chatDelta, chatStop, chatDone))
	cfg := "strategy: {mode: fallback}\nproviders:\n" +
		"  up: {kind: " + kind + ", base_url: \"" + up.URL + "/v1\", models: [m], timeout: {first_byte: 2s, idle: " + idle + ", total: 30s}}\n" +
		"  spare: {base_url: \"" + spare.URL + "/v1\", models: [m]}\n" +
		"targets:\n  - {virtual_key: up}\n  - {virtual_key: spare}\n"
	gw := gatewayFromYAML(t, cfg, router.Options{TracerProvider: tp})
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv, exp, spare
}

// attemptOf is the attempt span of target among the spans.
func attemptOf(t *testing.T, exp *tracetest.InMemoryExporter, n int, target string) map[string]string {
	t.Helper()
	for _, s := range waitForSpans(t, exp, n) {
		if s.SpanKind != trace.SpanKindClient {
			continue
		}
		attrs := attrMap(s.Attributes)
		if attrs["firstbyte.target"].AsString() == target {
			out := map[string]string{}
			for k, v := range attrs {
				out[k] = v.Emit()
			}
			return out
		}
	}
	t.Fatalf("no attempt span of %s", target)
	return nil
}

func TestStreamsAreWatchedAfterTheFirstByte(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind, client, body string
		handle                   http.HandlerFunc
		failover                 bool   // before the first byte: the spare serves
		errorType                string // the bad attempt's error.type
		tail                     string // the client's stream ends with this (after the first byte)
	}{
		{"OpenAI stalls", "openai", "/v1/chat/completions", streamChat,
			sseAnswer("text/event-stream", 5*time.Second, chatDelta), false, "stall", `"code":"stream_interrupted"}}` + "\n\n"},
		{"Anthropic stalls", "anthropic", "/v1/messages", streamMessages,
			sseAnswer("text/event-stream", 5*time.Second, msgStart, msgBlock, msgDelta), false, "stall", "\"type\":\"api_error\""},
		{"OpenAI cut without [DONE]", "openai", "/v1/chat/completions", streamChat,
			sseAnswer("text/event-stream", 0, chatDelta, chatDelta), false, "broken_stream", `"code":"stream_interrupted"}}` + "\n\n"},
		{"OpenAI event not JSON", "openai", "/v1/chat/completions", streamChat,
			sseAnswer("text/event-stream", 0, chatDelta, "data: {not json\n\n", chatDone), false, "broken_stream", `"code":"stream_interrupted"}}` + "\n\n"},
		{"Anthropic cut without message_stop", "anthropic", "/v1/messages", streamMessages,
			sseAnswer("text/event-stream", 0, msgStart, msgBlock, msgDelta, msgStopText), false, "broken_stream", "\"type\":\"api_error\""},
		{"HTML to stream: true", "openai", "/v1/chat/completions", streamChat,
			sseAnswer("text/html", 0, "<html>maintenance</html>"), true, "broken_stream", ""},
		{"the first event not JSON", "openai", "/v1/chat/completions", streamChat,
			sseAnswer("text/event-stream", 0, "data: {oops\n\n"), true, "broken_stream", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, exp, spare := streamGateway(t, tc.kind, "300ms", tc.handle)
			start := time.Now()
			resp := post(t, srv.URL, tc.client, tc.body)
			body := readAll(t, resp.Body)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v: the stream was not ended by the idle timeout", took)
			}
			served := spare.hits.Load() == 1
			if served != tc.failover {
				t.Fatalf("failed over %v, want %v: %s", served, tc.failover, body)
			}
			if tc.failover {
				if resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "spare" || !strings.HasSuffix(body, chatDone) {
					t.Fatalf("after failover: %d from %s: %q", resp.StatusCode, resp.Header.Get(router.HeaderTarget), body)
				}
			} else if !strings.Contains(body[len(body)-min(len(body), 200):], tc.tail) {
				t.Fatalf("the stream ends %q, want an error event with %s", body[max(0, len(body)-200):], tc.tail)
			}
			n := 2
			if tc.failover {
				n = 3
			}
			span := attemptOf(t, exp, n, "up")
			if span["error.type"] != tc.errorType || span["firstbyte.fault"] != "full" || span["firstbyte.outcome"] == "success" {
				t.Fatalf("span: error.type %q fault %q outcome %q; want %q, full, not success", span["error.type"], span["firstbyte.fault"], span["firstbyte.outcome"], tc.errorType)
			}
		})
	}
}

func TestWholeStreamsRecordTheirOutputRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind, client, body string
		handle                   http.HandlerFunc
	}{
		{"OpenAI", "openai", "/v1/chat/completions", streamChat, sseAnswer("text/event-stream", 0, chatDelta, chatStop, chatDone)},
		{"Anthropic", "anthropic", "/v1/messages", streamMessages, sseAnswer("text/event-stream", 0, msgStart, msgBlock, msgDelta, msgStopText, msgStop)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, exp, _ := streamGateway(t, tc.kind, "1s", tc.handle)
			resp := post(t, srv.URL, tc.client, tc.body)
			body := readAll(t, resp.Body)
			if strings.Contains(body, "error") {
				t.Fatalf("a whole stream got an error event: %s", body)
			}
			span := attemptOf(t, exp, 2, "up")
			if span["firstbyte.outcome"] != "success" || span["gen_ai.usage.output_tokens"] != "20" || span["firstbyte.output_tokens_per_second"] == "" {
				t.Fatalf("span %v: want success with 20 output tokens and an output rate", span)
			}
		})
	}
}
