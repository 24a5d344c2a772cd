package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

// upstreamStub is a real HTTP server standing in for a provider. It records
// what it received and answers with handle.
type upstreamStub struct {
	*httptest.Server
	hits     atomic.Int64
	mu       sync.Mutex
	lastBody []byte
	lastHdr  http.Header
}

func newUpstream(t *testing.T, handle http.HandlerFunc) *upstreamStub {
	t.Helper()
	u := &upstreamStub{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.lastBody, u.lastHdr = body, r.Header.Clone()
		u.mu.Unlock()
		u.hits.Add(1)
		r.Body = io.NopCloser(bytes.NewReader(body)) // the handler may read it too
		handle(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstreamStub) last() ([]byte, http.Header) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastBody, u.lastHdr
}

func jsonAnswer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// apiAnswer answers as a provider of the path's API does, minimally: a
// chat completion on /chat/completions, a message on /messages (so a
// translated answer is the real thing).
func apiAnswer(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/messages") {
		jsonAnswer(200, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`)(w, r)
		return
	}
	jsonAnswer(200, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)(w, r)
}

// target is one provider+target in a generated test config.
type target struct {
	name      string
	url       string
	retry     int
	firstByte string
	upstream  string // upstream model for client model "m"; "" = "m"
}

// newGateway starts the gateway over targets, all serving client model "m".
func newGateway(t *testing.T, mode string, extra string, targets ...target) *httptest.Server {
	t.Helper()
	gw := newGatewayWith(t, mode, extra, router.Options{}, targets...)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func configYAML(mode, extra string, targets ...target) string {
	var b strings.Builder
	fmt.Fprintf(&b, "strategy: {mode: %s}\n%s\nproviders:\n", mode, extra)
	for _, tg := range targets {
		fb := tg.firstByte
		if fb == "" {
			fb = "5s"
		}
		fmt.Fprintf(&b, "  %s: {base_url: %q, api_key: key-%s, timeout: {first_byte: %s, total: 30s}}\n", tg.name, tg.url+"/v1", tg.name, fb)
	}
	b.WriteString("targets:\n")
	for _, tg := range targets {
		up := tg.upstream
		if up == "" {
			up = "m"
		}
		fmt.Fprintf(&b, "  - {virtual_key: %s, model_map: {m: %q}, retry: {attempts: %d}}\n", tg.name, up, tg.retry)
	}
	return b.String()
}

func newGatewayWith(t *testing.T, mode, extra string, o router.Options, targets ...target) *router.Gateway {
	t.Helper()
	return newGatewayFromYAML(t, configYAML(mode, extra, targets...), o)
}

// breakerYAML is a fallback config over a and b, in that order, whose
// provider a opens its circuit after 2 consecutive faults, for 10s.
func breakerYAML(aURL, bURL string) string {
	cfg := configYAML("fallback", "", target{name: "a", url: aURL}, target{name: "b", url: bURL})
	return strings.Replace(cfg, "timeout: {first_byte: 5s, total: 30s}}", "timeout: {first_byte: 5s, total: 30s}, circuit_breaker: {failures: 2, cooldown: 10s}}", 1)
}

func post(t *testing.T, url, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantHeaders(t *testing.T, resp *http.Response, target, attempts, selection string) {
	t.Helper()
	for _, h := range []struct{ k, want string }{
		{router.HeaderTarget, target}, {router.HeaderAttempts, attempts}, {router.HeaderSelection, selection},
	} {
		if got := resp.Header.Get(h.k); got != h.want {
			t.Errorf("%s = %q, want %q", h.k, got, h.want)
		}
	}
}

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"n":1}`

func TestUnaryProxiedByteForByte(t *testing.T) {
	t.Parallel()
	answer := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"héllo \u2603"}}],"weird":  [1, 2 ]}`
	up := newUpstream(t, jsonAnswer(200, answer))
	gw := newGateway(t, "fallback", "", target{name: "a", url: up.URL, upstream: "up-model/v1"})

	resp := post(t, gw.URL, "/v1/chat/completions", chatBody, "Authorization", "Bearer client-secret")
	if got := readAll(t, resp.Body); got != answer {
		t.Errorf("body = %s, want %s", got, answer)
	}
	if resp.StatusCode != 200 {
		t.Errorf("status = %d", resp.StatusCode)
	}
	wantHeaders(t, resp, "a", "1", "order")

	body, hdr := up.last()
	wantBody := strings.Replace(chatBody, `"model":"m"`, `"model":"up-model/v1"`, 1)
	if string(body) != wantBody {
		t.Errorf("upstream got body %s, want %s (only model swapped)", body, wantBody)
	}
	if got := hdr.Get("Authorization"); got != "Bearer key-a" {
		t.Errorf("upstream Authorization = %q, want the provider key, never the client's", got)
	}
}

func TestStreamingRelayedChunkByChunk(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	chunks := []string{
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"one\"}}]}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"two\"}}]}\n\n",
		"data: [DONE]\n\n",
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, chunks[0])
		w.(http.Flusher).Flush()
		<-release // the client must see the first chunk before the rest exist
		for _, c := range chunks[1:] {
			_, _ = io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	})
	gw := newGateway(t, "fallback", "", target{name: "a", url: up.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	first := make([]byte, len(chunks[0]))
	if _, err := io.ReadFull(br, first); err != nil {
		t.Fatalf("first chunk did not arrive before the upstream went on: %v", err)
	}
	close(release)
	rest := readAll(t, br)
	if got, want := string(first)+rest, strings.Join(chunks, ""); got != want {
		t.Errorf("stream = %q, want %q", got, want)
	}
	wantHeaders(t, resp, "a", "1", "order")
}

func TestFailoverOn503(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, jsonAnswer(503, `{"error":{"message":"overloaded"}}`))
	b := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 200 || readAll(t, resp.Body) != `{"ok":true}` {
		t.Fatalf("status = %d, want 200 from b", resp.StatusCode)
	}
	wantHeaders(t, resp, "b", "2", "order")
}

func TestFailoverSafeFailures(t *testing.T) {
	t.Parallel()
	closedPort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}
	tests := []struct {
		name      string
		first     target
		handle    http.HandlerFunc
		wantFirst int64
	}{
		{"408", target{name: "a"}, jsonAnswer(408, `{}`), 1},
		{"429", target{name: "a"}, jsonAnswer(429, `{}`), 1},
		{"500", target{name: "a"}, jsonAnswer(500, `{}`), 1},
		{"context length exceeded", target{name: "a"}, jsonAnswer(400, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), 1},
		{"anthropic-style prompt too long", target{name: "a"}, jsonAnswer(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens"}}`), 1},
		{"first-byte timeout", target{name: "a", firstByte: "100ms"}, slow, 1},
		{"transport error (closed port)", target{name: "a", url: closedPort()}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := tt.first
			var a *upstreamStub
			if tt.handle != nil {
				a = newUpstream(t, tt.handle)
				first.url = a.URL
			}
			b := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
			gw := newGateway(t, "fallback", "", first, target{name: "b", url: b.URL})
			resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want 200 served by b: %s", resp.StatusCode, readAll(t, resp.Body))
			}
			wantHeaders(t, resp, "b", "2", "order")
			if a != nil && a.hits.Load() != tt.wantFirst {
				t.Errorf("first target got %d requests, want %d", a.hits.Load(), tt.wantFirst)
			}
		})
	}
}

// TestEmptyStreamAnswerFailsOver: a 2xx stream that ends before a byte is
// a transport failure: the next target serves it, and alone the target's
// failure is a 502 naming transport.
func TestEmptyStreamAnswerFailsOver(t *testing.T) {
	t.Parallel()
	const stream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	empty := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
	}
	a := newUpstream(t, empty)
	b := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"from\":\"b\"}\n\ndata: [DONE]\n\n")
	})
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", stream)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.HasPrefix(body, `data: {"from":"b"}`) {
		t.Errorf("%d %q, want b's stream", resp.StatusCode, body)
	}
	wantHeaders(t, resp, "b", "2", "order")

	gw = newGateway(t, "fallback", "", target{name: "a", url: a.URL})
	resp = post(t, gw.URL, "/v1/chat/completions", stream)
	if body := readAll(t, resp.Body); resp.StatusCode != 502 || !strings.Contains(body, `"error":"transport"`) {
		t.Errorf("alone: %d %s, want a 502 naming transport", resp.StatusCode, body)
	}
}

func TestClientErrorReturnedUnchanged(t *testing.T) {
	t.Parallel()
	errBody := `{"error":{"message":"bad temperature","type":"invalid_request_error","code":"invalid_value"}}`
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(422)
		_, _ = io.WriteString(w, errBody)
	})
	b := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 422 {
		t.Errorf("status = %d, want 422", resp.StatusCode)
	}
	if got := readAll(t, resp.Body); got != errBody {
		t.Errorf("body = %s, want the upstream's unchanged", got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want the upstream's", ct)
	}
	if n := b.hits.Load(); n != 0 {
		t.Errorf("second target received %d requests, want 0", n)
	}
	wantHeaders(t, resp, "a", "1", "order")
}

// TestLongClientErrorRelayedWhole: a 400 longer than the gateway holds of
// an error body (it holds the first 64 KiB to look for a context
// overflow) reaches a client of the same format whole, with or without a
// Content-Length; a client of the other format gets its own error shape
// made from what was held.
func TestLongClientErrorRelayedWhole(t *testing.T) {
	t.Parallel()
	long := `{"error":{"message":"` + strings.Repeat("m", 200<<10) + `","type":"invalid_request_error"}}`
	for _, withLength := range []bool{true, false} {
		a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if withLength {
				w.Header().Set("Content-Length", strconv.Itoa(len(long)))
			}
			w.WriteHeader(400)
			_, _ = io.WriteString(w, long)
		})
		gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL})
		resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
		if got := readAll(t, resp.Body); resp.StatusCode != 400 || got != long {
			t.Errorf("Content-Length %v: %d with %d bytes, want 400 with the upstream's %d", withLength, resp.StatusCode, len(got), len(long))
		}
		wantHeaders(t, resp, "a", "1", "order")

		resp = post(t, gw.URL, "/v1/messages", messagesBody)
		got := readAll(t, resp.Body)
		if resp.StatusCode != 400 || !strings.HasPrefix(got, `{"type":"error","error":{"type":"invalid_request_error"`) || !json.Valid([]byte(got)) || len(got) > 8<<10 {
			t.Errorf("Content-Length %v, translated: %d %.120s (%d bytes), want a short 400 in the Anthropic shape", withLength, resp.StatusCode, got, len(got))
		}
	}
}

// TestLongClientErrorIsNotHeldWhole: past what it holds, a long error body
// reaches the client as it comes: the client reads its first 100 KiB while
// the upstream is still waiting to send the rest.
func TestLongClientErrorIsNotHeldWhole(t *testing.T) {
	t.Parallel()
	first, rest := `{"error":{"message":"`+strings.Repeat("m", 100<<10), strings.Repeat("m", 100<<10)+`","type":"invalid_request_error"}}`
	got := make(chan struct{})
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
		}
		_, _ = io.WriteString(w, rest)
	})
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL})
	start := time.Now()
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	head := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != first {
		t.Fatalf("first part: %v", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("the first 100 KiB took %v: the gateway held the error body until it was whole", waited)
	}
	close(got)
	if tail := readAll(t, resp.Body); resp.StatusCode != 400 || tail != rest {
		t.Errorf("%d, the rest %d bytes, want 400 and %d", resp.StatusCode, len(tail), len(rest))
	}
}

func TestRetryCountHonoured(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, jsonAnswer(503, `{}`))
	b := newUpstream(t, jsonAnswer(200, `{"ok":1}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL, retry: 2}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if n := a.hits.Load(); n != 3 {
		t.Errorf("first target tried %d times, want 1 + retry.attempts = 3", n)
	}
	wantHeaders(t, resp, "b", "4", "order")
}

func TestAllFailed(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, jsonAnswer(500, `{}`))
	b := newUpstream(t, jsonAnswer(429, `{}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	if resp.StatusCode != 429 {
		t.Errorf("status = %d, want the last failure's 429", resp.StatusCode)
	}
	var e struct {
		Error struct {
			Message  string `json:"message"`
			Code     string `json:"code"`
			Attempts []struct {
				Target string `json:"target"`
				Status int    `json:"status"`
			} `json:"firstbyte_attempts"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if e.Error.Code != "all_targets_failed" || len(e.Error.Attempts) != 2 || e.Error.Attempts[0].Target != "a" || e.Error.Attempts[1].Status != 429 {
		t.Errorf("error = %+v, want both attempts named", e.Error)
	}
	if e.Error.Message != "all 2 attempts failed: attempt 1 a: 500; attempt 2 b: 429" {
		t.Errorf("message = %q, want it to name the attempts", e.Error.Message)
	}
	wantHeaders(t, resp, "b", "2", "order")
}

func TestAllFailedTransportIs502AndTimeoutIs504(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	gw := newGateway(t, "fallback", "", target{name: "a", url: dead})
	if resp := post(t, gw.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 502 {
		t.Errorf("transport failure status = %d, want 502", resp.StatusCode)
	}
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	gw2 := newGateway(t, "fallback", "", target{name: "a", url: slow.URL, firstByte: "50ms"})
	if resp := post(t, gw2.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 504 {
		t.Errorf("timeout status = %d, want 504", resp.StatusCode)
	}
}

func TestMidStreamCutEndsWithErrorEvent(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"one\"}}]}\n\ndata: {\"cho")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-event
	})
	b := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", `{"model":"m","stream":true}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Errorf("status = %d, want 200 (the stream had started)", resp.StatusCode)
	}
	if !strings.HasPrefix(body, "data: {\"choices\"") {
		t.Errorf("stream lost its first chunk: %q", body)
	}
	if !strings.HasSuffix(body, "\n\ndata: {\"error\":{\"message\":\"upstream stream interrupted after the first byte\",\"type\":\"upstream_error\",\"param\":null,\"code\":\"stream_interrupted\"}}\n\n") {
		t.Errorf("stream does not end with an error event: %q", body)
	}
	if n := b.hits.Load(); n != 0 {
		t.Errorf("second target got %d requests after the first byte, want 0", n)
	}
}

func TestRequestValidation(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGateway(t, "fallback", "limits: {max_body: 1KiB}", target{name: "a", url: up.URL})
	tests := []struct {
		name, body, ctype string
		status            int
		code, msgPart     string
	}{
		{"malformed JSON", `{"model":`, "application/json", 400, "invalid_request", "not valid JSON"},
		{"missing model", `{"messages":[]}`, "application/json", 400, "invalid_request", `missing required field "model"`},
		{"model not a string", `{"model":42}`, "application/json", 400, "invalid_request", `"model" must be a string`},
		{"stream not a boolean", `{"model":"m","stream":"yes"}`, "application/json", 400, "invalid_request", `"stream" must be a boolean`},
		{"not an object", `["model"]`, "application/json", 400, "invalid_request", "JSON object"},
		{"wrong content type", chatBody, "text/plain", 415, "unsupported_media_type", "application/json"},
		{"too large", `{"model":"m","x":"` + strings.Repeat("a", 2000) + `"}`, "application/json", 413, "request_too_large", "max_body"},
		{"unknown model", `{"model":"gpt-nope"}`, "application/json", 404, "model_not_found", `"gpt-nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, gw.URL, "/v1/chat/completions", tt.body, "Content-Type", tt.ctype)
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			var e struct {
				Error struct{ Message, Type, Code string } `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("error body is not OpenAI-shaped JSON: %v", err)
			}
			if e.Error.Code != tt.code || !strings.Contains(e.Error.Message, tt.msgPart) {
				t.Errorf("error = %+v, want code %q and message containing %q", e.Error, tt.code, tt.msgPart)
			}
			if resp.Header.Get(router.HeaderAttempts) != "" {
				t.Errorf("%s set although no attempt was made", router.HeaderAttempts)
			}
		})
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("upstream received %d requests from invalid input, want 0", n)
	}
}

func TestAuthKeys(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGateway(t, "fallback", `auth: {keys: ["sekrit"]}`, target{name: "a", url: up.URL})
	if resp := post(t, gw.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 401 {
		t.Errorf("no key: status = %d, want 401", resp.StatusCode)
	}
	if resp := post(t, gw.URL, "/v1/chat/completions", chatBody, "Authorization", "Bearer wrong"); resp.StatusCode != 401 {
		t.Errorf("wrong key: status = %d, want 401", resp.StatusCode)
	}
	if resp := post(t, gw.URL, "/v1/chat/completions", chatBody, "Authorization", "Bearer sekrit"); resp.StatusCode != 200 {
		t.Errorf("bearer key: status = %d, want 200", resp.StatusCode)
	}
	if resp := post(t, gw.URL, "/v1/chat/completions", chatBody, "x-api-key", "sekrit"); resp.StatusCode != 200 {
		t.Errorf("x-api-key: status = %d, want 200", resp.StatusCode)
	}
	_, hdr := up.last()
	if hdr.Get("x-api-key") != "" || hdr.Get("Authorization") != "Bearer key-a" {
		t.Errorf("client key leaked upstream: %v", hdr)
	}
}

func TestProviderOrderHeader(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, jsonAnswer(200, `{"from":"a"}`))
	b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "b, a")
	if got := readAll(t, resp.Body); got != `{"from":"b"}` {
		t.Errorf("body = %s, want b's", got)
	}
	wantHeaders(t, resp, "b", "1", "manual")
}

func TestListModels(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, jsonAnswer(200, `{}`))
	gw := newGateway(t, "fallback", "", target{name: "a", url: up.URL})
	resp, err := http.Get(gw.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "m" || list.Data[0].Object != "model" {
		t.Errorf("models = %+v, want one model m", list)
	}
}

// TestClientDisconnectCancelsUpstream: when the client goes away, the
// upstream request is cancelled and no goroutine is left behind.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	upstreamCancelled := make(chan struct{})
	started := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(upstreamCancelled)
	})
	gwHandler := newGatewayWith(t, "fallback", "", router.Options{}, target{name: "a", url: up.URL}).Handler()
	gw := httptest.NewServer(gwHandler)
	defer gw.Close()

	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	resp.Body.Close()
	select {
	case <-upstreamCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request was not cancelled after the client left")
	}
	requireGoroutinesBack(t, before)
}

// requireGoroutinesBack fails t unless, within 5 s of the client's idle
// connections closing, no more goroutines run than before (a client that
// left must leave nothing behind).
func requireGoroutinesBack(t *testing.T, before int) {
	t.Helper()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // a poll's interval: nothing signals a goroutine's exit
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after the client left\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestCircuitBreaker: after circuit_breaker.failures consecutive failures
// the provider is skipped (failover without a request) until the cooldown
// has passed; then one probe goes through and its success closes it.
func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	failing.Store(true)
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			jsonAnswer(503, `{}`)(w, r)
			return
		}
		jsonAnswer(200, `{"from":"a"}`)(w, r)
	})
	b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
	clock := router.NewFakeClock()
	gw := newGatewayFromYAML(t, breakerYAML(a.URL, b.URL), router.Options{Now: clock.Now})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	for range 2 { // two failures open the circuit
		post(t, srv.URL, "/v1/chat/completions", chatBody)
	}
	if n := a.hits.Load(); n != 2 {
		t.Fatalf("a got %d requests, want 2", n)
	}
	if a := routingOf(gw, "a"); !a.CircuitOpen || a.Circuit != "open" || a.Rank != 2 {
		t.Fatalf("after 2 failures a is %+v, want circuit open, ranked after b", a)
	}
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp.Body); got != `{"from":"b"}` || a.hits.Load() != 2 {
		t.Errorf("open circuit: body %s, a hits %d; want b to serve without a being asked", got, a.hits.Load())
	}
	wantHeaders(t, resp, "b", "1", "order") // a skip is not an attempt
	if got := resp.Header.Get(router.HeaderSkipped); got != "" {
		t.Errorf("%s = %q, want none: an open circuit is ordered after the closed ones, so b served first", router.HeaderSkipped, got)
	}
	// Naming a first puts it first: then it is skipped, and said so.
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "a")
	if got := readAll(t, resp.Body); got != `{"from":"b"}` || a.hits.Load() != 2 {
		t.Errorf("manual order with a open: body %s, a hits %d; want b, a not asked", got, a.hits.Load())
	}
	wantHeaders(t, resp, "b", "1", "manual")
	if got := resp.Header.Get(router.HeaderSkipped); got != "a" {
		t.Errorf("%s = %q, want a", router.HeaderSkipped, got)
	}

	failing.Store(false)
	clock.Advance(11 * time.Second) // cooldown over: one probe
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp.Body); got != `{"from":"a"}` {
		t.Errorf("after cooldown: body %s, want a's (the probe)", got)
	}
	if a := routingOf(gw, "a"); a.CircuitOpen || a.Circuit != "closed" {
		t.Errorf("after a successful probe a is %+v, want closed", a)
	}
}

func routingOf(gw *router.Gateway, target string) routingview.Target {
	for _, m := range gw.Routing() {
		for _, t := range m.Targets {
			if t.Target == target {
				return t
			}
		}
	}
	return routingview.Target{}
}

// TestConcurrencyQueueFull: with max_concurrency 1 and no queue, a second
// request while one is in flight fails over to the next target.
func TestConcurrencyQueueFull(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		jsonAnswer(200, `{"from":"a"}`)(w, r)
	})
	b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
	cfg := configYAML("fallback", "", target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	cfg = strings.Replace(cfg, "timeout: {first_byte: 5s, total: 30s}}", "timeout: {first_byte: 5s, total: 30s}, max_concurrency: 1, queue: 0}", 1)
	parsed, err := config.Parse([]byte(cfg), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(parsed, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	first := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatBody))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		first <- string(b)
	}()
	<-entered
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp.Body); got != `{"from":"b"}` {
		t.Errorf("second request: %s, want b's (a's only slot is taken)", got)
	}
	wantHeaders(t, resp, "b", "1", "order") // a full queue is a skip, not an attempt
	if got := resp.Header.Get(router.HeaderSkipped); got != "a" {
		t.Errorf("%s = %q, want a", router.HeaderSkipped, got)
	}
	close(release)
	if got := <-first; got != `{"from":"a"}` {
		t.Errorf("first request: %s, want a's", got)
	}
}

func TestUnroutedAndWrongMethodAnswerInShape(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Openai-Organization", "org-operator")
		w.Header().Set("Set-Cookie", "__cf=1")
		w.Header().Set("X-Request-Id", "req-1")
		jsonAnswer(200, `{}`)(w, r)
	})
	gw := newGateway(t, "fallback", "", target{name: "a", url: up.URL})
	tests := []struct {
		method, path string
		status       int
		anthropic    bool
	}{
		{"GET", "/v1/chat/completions", 405, false},
		{"GET", "/v1/messages", 405, true},
		{"POST", "/v1/nope", 404, false},
		{"POST", "/v1/messages/nope", 404, true},
		{"GET", "/v1/models/m", 200, false},
		{"GET", "/v1/models/other", 404, false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, gw.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %q, want %d JSON", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status)
		}
		if tt.status != 200 && strings.Contains(body, `"type":"error"`) != tt.anthropic {
			t.Errorf("%s %s: body %s not in the path's API shape", tt.method, tt.path, body)
		}
	}
	resp := post(t, gw.URL, "/v1/chat/completions", chatBody)
	if resp.Header.Get("Openai-Organization") != "" || resp.Header.Get("Set-Cookie") != "" || resp.Header.Get(router.HeaderUpstreamRequestID) != "req-1" {
		t.Errorf("headers relayed: %v; want account headers dropped and the request id kept", resp.Header)
	}
}
