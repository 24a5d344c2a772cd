package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/conn"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router"
)

// The request path's part in the process's lifecycle: requests framed two
// ways, panics, Connection: close while draining, the end of the shutdown
// grace, clients that stop reading, and the request log line. All through
// real sockets.

// twoKinds is a config with an OpenAI and an Anthropic provider, both at
// url, serving client model "m".
func twoKinds(url string) string {
	return fmt.Sprintf(`strategy: {mode: fallback}
providers:
  oa: {kind: openai, base_url: %[1]q, api_key: key-oa, timeout: {first_byte: 5s, total: 30s}}
  an: {kind: anthropic, base_url: %[1]q, api_key: key-an, timeout: {first_byte: 5s, total: 30s}}
targets:
  - {virtual_key: oa, model_map: {m: m}}
  - {virtual_key: an, model_map: {m: m}}
`, url+"/v1")
}

func newGatewayFromYAML(t *testing.T, yaml string, o router.Options) *router.Gateway {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return newGatewayFromConfig(t, cfg, o)
}

// serveGuarded serves h the way the binary does: behind GuardFraming.
func serveGuarded(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = conn.GuardFraming(srv.Config, srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// rawExchange writes req on a fresh connection and reads one response.
func rawExchange(t *testing.T, conn net.Conn, br *bufio.Reader, req string) *http.Response {
	t.Helper()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	return resp
}

func TestConflictingFramingRefusedAndConnectionClosed(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, apiAnswer)
	srv := serveGuarded(t, newGatewayFromYAML(t, twoKinds(up.URL), router.Options{}).Handler())
	const body = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	request := func(path, framing string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n" + framing + "\r\n" + chunked
	}
	tests := []struct {
		name      string
		path      string
		framing   string
		wantShape string // "openai" | "anthropic"
	}{
		{"OpenAI", "/v1/chat/completions", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "openai"},
		{"Anthropic", "/v1/messages", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "anthropic"},
		{"lower case", "/v1/chat/completions", "transfer-encoding: chunked\r\ncontent-length: 5\r\n", "openai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			// A clean chunked request first: the guard must look at each
			// request's own headers, on a kept-alive connection too.
			ok := rawExchange(t, conn, br, request(tt.path, "Transfer-Encoding: chunked\r\n"))
			_, _ = io.Copy(io.Discard, ok.Body)
			if ok.StatusCode != 200 || ok.Close {
				t.Fatalf("chunked request = %d (close %v), want 200 on a kept-alive connection", ok.StatusCode, ok.Close)
			}
			resp := rawExchange(t, conn, br, request(tt.path, tt.framing))
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
					Type string `json:"type"`
					Code string `json:"code"`
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
			if n, err := br.ReadByte(); err == nil {
				t.Errorf("the connection stayed open (read %q)", n)
			}
		})
	}
	if n := up.hits.Load(); n != int64(len(tests)) {
		t.Errorf("upstream got %d requests, want %d (only the clean ones)", n, len(tests))
	}
}

// panickingTransport panics in RoundTrip, or, for a stream, in the
// answer's body after its first chunk. Its panic value carries the
// request's prompt, which must never reach the log.
type panickingTransport struct{}

func (panickingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	if bytes.Contains(body, []byte(`"stream":true`)) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: &panickingBody{first: "data: {\"choices\":[]}\n\n", prompt: string(body)}, Request: r}, nil
	}
	panic(fmt.Errorf("cannot route %s", body))
}

type panickingBody struct {
	first, prompt string // first: what is still to be read of the first chunk
}

func (b *panickingBody) Read(p []byte) (int, error) {
	if b.first != "" {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	panic(fmt.Errorf("broken mid-stream after %s", b.prompt))
}

func (b *panickingBody) Close() error { return nil }

func TestPanicBecomes500InTheCallersShape(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var panics atomic.Int64
	gw := newGatewayFromYAML(t, twoKinds("http://127.0.0.1:9"), router.Options{
		Transport: panickingTransport{},
		Logger:    slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil)),
		OnPanic:   func() { panics.Add(1) },
	})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	const prompt = "PROMPT-canary-4242"

	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+prompt+`"}]}`)
	if b := readAll(t, resp.Body); resp.StatusCode != 500 || !strings.Contains(b, `"type":"server_error"`) || !strings.Contains(b, `"code":"internal_error"`) {
		t.Errorf("OpenAI request: %d %s, want a 500 server_error in OpenAI's shape", resp.StatusCode, b)
	}
	resp = post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"`+prompt+`"}]}`)
	if b := readAll(t, resp.Body); resp.StatusCode != 500 || !strings.HasPrefix(b, `{"type":"error","error":{"type":"api_error"`) {
		t.Errorf("Anthropic request: %d %s, want a 500 api_error in Anthropic's shape", resp.StatusCode, b)
	}
	resp = post(t, srv.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"`+prompt+`"}]}`)
	b := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(b, "data: {\"choices\":[]}\n\n") || !strings.HasSuffix(b, "\"code\":\"stream_interrupted\"}}\n\n") {
		t.Errorf("stream: %d %q, want its first chunk then an error event", resp.StatusCode, b)
	}
	if n := panics.Load(); n != 3 {
		t.Errorf("OnPanic told %d times, want 3", n)
	}
	// The server lives on.
	resp = post(t, srv.URL, "/v1/models/nope", ``)
	if resp.StatusCode != 404 {
		t.Errorf("after the panics: %d, want 404", resp.StatusCode)
	}
	out := logs.String()
	if strings.Count(out, `msg="panic serving a request"`) != 3 {
		t.Errorf("log has not three panic lines:\n%s", out)
	}
	if strings.Contains(out, prompt) {
		t.Errorf("log carries the prompt:\n%s", out)
	}
}

// panicOnceTransport panics on the first RoundTrip after arm, as a bug in
// the gateway's transport would, and otherwise sends the request on.
type panicOnceTransport struct {
	armed atomic.Bool
	next  *http.Transport
}

func newPanicOnceTransport(t *testing.T) *panicOnceTransport {
	p := &panicOnceTransport{next: &http.Transport{}}
	t.Cleanup(p.next.CloseIdleConnections)
	return p
}

func (p *panicOnceTransport) arm() { p.armed.Store(true) }

func (p *panicOnceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.armed.CompareAndSwap(true, false) {
		panic("transport bug")
	}
	return p.next.RoundTrip(r)
}

// TestPanicReleasesTheConcurrencySlot: an attempt that panics gives its
// max_concurrency slot back, so the provider serves the next request
// instead of being queue_full for good.
func TestPanicReleasesTheConcurrencySlot(t *testing.T) {
	t.Parallel()
	a := newUpstream(t, jsonAnswer(200, `{"from":"a"}`))
	cfg := configYAML("fallback", "", target{name: "a", url: a.URL})
	cfg = strings.Replace(cfg, "timeout: {first_byte: 5s, total: 30s}}", "timeout: {first_byte: 5s, total: 30s}, max_concurrency: 1, queue: 0}", 1)
	tr := newPanicOnceTransport(t)
	var panics atomic.Int64
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	gw := newGatewayFromYAML(t, cfg, router.Options{Transport: tr, OnPanic: func() { panics.Add(1) }, TracerProvider: tp})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	tr.arm()
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody); resp.StatusCode != 500 {
		t.Fatalf("the panicking attempt: %d, want 500", resp.StatusCode)
	}
	// Its attempt span ended too, saying nothing against the provider.
	for _, sp := range waitForSpans(t, exp, 2) {
		if sp.SpanKind != trace.SpanKindClient {
			continue
		}
		attrs := attrMap(sp.Attributes)
		if attrs["firstbyte.outcome"].AsString() != "canceled" || attrs["firstbyte.fault"].AsString() != "none" {
			t.Errorf("the panicked attempt's span: outcome %q fault %q, want canceled and none",
				attrs["firstbyte.outcome"].AsString(), attrs["firstbyte.fault"].AsString())
		}
	}
	for i := range 3 {
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		if got := readAll(t, resp.Body); resp.StatusCode != 200 || got != `{"from":"a"}` {
			t.Fatalf("request %d after the panic: %d %s, want a's answer (skipped: %q)", i+1, resp.StatusCode, got, resp.Header.Get(router.HeaderSkipped))
		}
	}
	if n := panics.Load(); n != 1 {
		t.Errorf("OnPanic told %d times, want 1", n)
	}
}

// TestPanickingProbeDoesNotStickTheCircuit: a half-open probe that panics
// resolves its admission (neutral: the gateway's bug says nothing of the
// provider), so the circuit stays half-open and the next request probes,
// and its success closes the circuit.
func TestPanickingProbeDoesNotStickTheCircuit(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	fail.Store(true)
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			jsonAnswer(503, `{}`)(w, r)
			return
		}
		jsonAnswer(200, `{"from":"a"}`)(w, r)
	})
	b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
	clock := router.NewFakeClock()
	tr := newPanicOnceTransport(t)
	gw := newGatewayFromYAML(t, breakerYAML(a.URL, b.URL), router.Options{Transport: tr, Now: clock.Now})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	for range 2 {
		readAll(t, post(t, srv.URL, "/v1/chat/completions", chatBody).Body)
	}
	if s := routingOf(gw, "a").Circuit; s != "open" {
		t.Fatalf("circuit %s after 2 faults, want open", s)
	}
	clock.Advance(11 * time.Second)
	fail.Store(false)

	tr.arm()
	if resp := post(t, srv.URL, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "a"); resp.StatusCode != 500 {
		t.Fatalf("the panicking probe: %d, want 500", resp.StatusCode)
	}
	if s := routingOf(gw, "a").Circuit; s != "half_open" {
		t.Fatalf("after the panicking probe: circuit %s, want half_open (neither opened nor closed by the gateway's bug)", s)
	}
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody, router.HeaderProviderOrder, "a")
	if got := readAll(t, resp.Body); got != `{"from":"a"}` {
		t.Fatalf("the next probe got %d %s (skipped: %q), want a's answer", resp.StatusCode, got, resp.Header.Get(router.HeaderSkipped))
	}
	if s := routingOf(gw, "a").Circuit; s != "closed" {
		t.Errorf("after a successful probe: circuit %s, want closed", s)
	}
}

// lockedWriter serializes writes from the server's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// String is what was written, when w is a *bytes.Buffer.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*bytes.Buffer).String()
}

func TestDrainingAnswersCarryConnectionClose(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("User-Agent"), "slow") {
			<-release
		}
		jsonAnswer(200, `{"ok":true}`)(w, r)
	})
	var draining atomic.Bool
	gw := newGatewayWith(t, "fallback", "", router.Options{Draining: draining.Load}, target{name: "a", url: up.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	before := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if before.Close {
		t.Error("an answer before the drain closes its connection")
	}
	// In flight when the drain begins, answered after: Connection: close.
	inFlight := make(chan *http.Response)
	go func() {
		inFlight <- post(t, srv.URL, "/v1/chat/completions", chatBody, "User-Agent", "slow")
	}()
	router.WaitUntil(t, "the slow request at the upstream", func() bool { return up.hits.Load() == 2 })
	draining.Store(true)
	close(release)
	if r := <-inFlight; !r.Close || r.StatusCode != 200 {
		t.Errorf("answer written after the drain began: %d, close %v; want 200 and Connection: close", r.StatusCode, r.Close)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/models", "/nowhere"} {
		r := post(t, srv.URL, path, chatBody)
		if !r.Close {
			t.Errorf("%s during the drain (%d): no Connection: close", path, r.StatusCode)
		}
	}
}

func TestEndOfGraceEndsStreamsAndWaits(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == "unary" { // newUpstream has read the body
			<-r.Context().Done() // an answer that never comes
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			_, _ = io.WriteString(w, msgStart) // the first byte: a ping is none
		}
		for {
			if strings.HasSuffix(r.URL.Path, "/messages") {
				_, _ = io.WriteString(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
			} else {
				_, _ = io.WriteString(w, "data: {\"choices\":[]}\n\n")
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	stop, endGrace := context.WithCancel(context.Background())
	defer endGrace()
	gw := newGatewayFromYAML(t, twoKinds(up.URL), router.Options{Stop: stop})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	type answer struct {
		status int
		body   string
	}
	// start sends a request; began is closed once its answer has begun (a
	// stream's first chunk relayed; a unary answer's whole).
	start := func(path, body string) (ch chan answer, began chan struct{}) {
		ch, began = make(chan answer, 1), make(chan struct{})
		go func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if !strings.Contains(body, `"stream":true`) {
				req.Header.Set("User-Agent", "unary")
			}
			resp, err := http.DefaultClient.Do(req)
			close(began)
			if err != nil {
				ch <- answer{body: err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ch <- answer{resp.StatusCode, string(b)}
		}()
		return ch, began
	}
	openai, openaiBegan := start("/v1/chat/completions", `{"model":"m","stream":true}`)
	anthropic, anthropicBegan := start("/v1/messages", `{"model":"m","stream":true,"max_tokens":5}`)
	unary, _ := start("/v1/chat/completions", `{"model":"m"}`)
	// The grace ends with both streams under way and the unary request at
	// its upstream, waiting for an answer that never comes.
	for name, began := range map[string]chan struct{}{"OpenAI stream": openaiBegan, "Anthropic stream": anthropicBegan} {
		select {
		case <-began:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no first chunk within 5s", name)
		}
	}
	router.WaitUntil(t, "all three requests at the upstream", func() bool { return up.hits.Load() == 3 })
	endGrace()

	for _, tt := range []struct {
		name   string
		ch     chan answer
		status int
		suffix string
	}{
		{"OpenAI stream", openai, 200, "\"code\":\"stream_interrupted\"}}\n\n"},
		{"Anthropic stream", anthropic, 200, "\n\n"},
		{"unary", unary, 503, "\"code\":\"shutting_down\"}}\n"},
	} {
		select {
		case a := <-tt.ch:
			if a.status != tt.status || !strings.HasSuffix(a.body, tt.suffix) || !strings.Contains(a.body, "shutting down") {
				t.Errorf("%s: %d %q, want %d ending %q and saying the gateway is shutting down", tt.name, a.status, tail(a.body), tt.status, tt.suffix)
			}
			if tt.name == "Anthropic stream" && !strings.Contains(a.body, "event: error\ndata: {\"type\":\"error\"") {
				t.Errorf("%s: no Anthropic error event: %q", tt.name, tail(a.body))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still open 5s after the grace ended", tt.name)
		}
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "..." + s[len(s)-300:]
	}
	return s
}

func TestClientThatStopsReadingLosesItsStream(t *testing.T) {
	t.Parallel()
	released := make(chan struct{})
	chunk := "data: " + strings.Repeat("x", 32<<10) + "\n\n"
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(released)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 100_000; i++ { // bounded: ~3 GB, far more than any buffer holds
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	gw := newGatewayWith(t, "fallback", "", router.Options{StreamWriteTimeout: 300 * time.Millisecond}, target{name: "a", url: up.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A stream request, then never a byte read.
	body := `{"model":"m","stream":true}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	start := time.Now()
	select {
	case <-released:
		t.Logf("upstream released %v after the client stopped reading", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("a client that stopped reading still holds its stream after 10s")
	}
}

func TestRequestLogLine(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, jsonAnswer(200, `{"ok":true}`))
	logs := &lockedWriter{w: &bytes.Buffer{}}
	gw := newGatewayWith(t, "fallback", "", router.Options{
		Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
		LogRequests: true,
	}, target{name: "a", url: up.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const prompt = "PROMPT-canary-1717"
	// The line is written once the answer is out, so wait for each before
	// the next request: the lines then come in order.
	var lines []string
	waitLines := func(n int) {
		router.WaitUntil(t, strconv.Itoa(n)+" log lines", func() bool {
			text := strings.TrimSpace(logs.String())
			lines = strings.Split(text, "\n")
			return text != "" && len(lines) >= n
		})
		if len(lines) != n {
			t.Fatalf("%d log lines, want %d:\n%s", len(lines), n, logs.String())
		}
	}
	readAll(t, post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+prompt+`"}]}`,
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01").Body)
	waitLines(1)
	readAll(t, post(t, srv.URL, "/v1/chat/completions", `{"model":"`+prompt+`","messages":[]}`).Body)
	waitLines(2)
	readAll(t, post(t, srv.URL, "/v1/models", ``).Body)
	waitLines(3)
	var served map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &served); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "request", "trace_id": traceID, "endpoint": "/v1/chat/completions", "model": "m",
		"target": "a", "attempts": 1.0, "selection": "order", "status": 200.0}
	for k, v := range want {
		if served[k] != v {
			t.Errorf("%s = %v, want %v in %s", k, served[k], v, lines[0])
		}
	}
	for _, k := range []string{"ttfb", "duration"} {
		if d, ok := served[k].(float64); !ok || d <= 0 {
			t.Errorf("%s = %v, want a positive duration in %s", k, served[k], lines[0])
		}
	}
	if strings.Contains(logs.String(), prompt) {
		t.Errorf("the log carries the prompt (or an unserved model name):\n%s", logs.String())
	}
	if !strings.Contains(lines[1], `"status":404`) || strings.Contains(lines[1], `"model"`) {
		t.Errorf("unknown model line %s: want status 404 and no model", lines[1])
	}
	if !strings.Contains(lines[2], `"endpoint":"POST /v1/models"`) {
		t.Errorf("model list line %s", lines[2])
	}
}

func TestReloadKeepsUnchangedProvidersState(t *testing.T) {
	t.Parallel()
	down := newUpstream(t, jsonAnswer(503, `{}`))
	up := newUpstream(t, jsonAnswer(200, `{}`))
	yaml := func(failures int) string {
		return fmt.Sprintf(`strategy: {mode: fallback}
providers:
  down: {base_url: %q, circuit_breaker: {failures: 1, cooldown: 1h}}
  ok: {base_url: %q, circuit_breaker: {failures: %d}}
targets:
  - {virtual_key: down, model_map: {m: m}}
  - {virtual_key: ok, model_map: {m: m, m2: m2}}
`, down.URL+"/v1", up.URL+"/v1", failures)
	}
	first := newGatewayFromYAML(t, yaml(5), router.Options{})
	srv := httptest.NewServer(first.Handler())
	defer srv.Close()
	readAll(t, post(t, srv.URL, "/v1/chat/completions", chatBody).Body) // opens down's circuit
	if routingOf(first, "down").Circuit != "open" {
		t.Fatal("down's circuit did not open")
	}
	second := newGatewayFromYAML(t, yaml(7), router.Options{Previous: first})
	if got := routingOf(second, "down").Circuit; got != "open" {
		t.Errorf("after a reload that left down unchanged its circuit is %s, want open", got)
	}
	if !second.Serves("ok", "m2") || !second.Serves("down", "m") || second.Serves("down", "m2") {
		t.Error("Serves does not list exactly the configured (target, upstream model) pairs")
	}
}
