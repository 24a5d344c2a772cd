package router_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"github.com/firstbyte-dev/firstbyte/router/config"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router"
)

// The budget of bytes held for unary answers (limits.max_buffered), through
// the real handler: what it refuses, how that ends for the client and the
// provider, and that every byte comes back however a request ends.

// padJSON is a JSON object of exactly n bytes (n >= 10).
func padJSON(n int) string { return `{"pad":"` + strings.Repeat("x", n-10) + `"}` }

// chunkedAnswer answers 200 with body, flushed after its first byte so it
// goes without a Content-Length.
func chunkedAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body[:1])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, body[1:])
	}
}

// lengthAnswer answers 200 with body and its Content-Length.
func lengthAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	}
}

// heldAnswer sends the first n-2 bytes of padJSON(n) without a
// Content-Length, then waits for release (or the request's end) before the
// last two.
func heldAnswer(n int, release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := padJSON(n)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body[:n-2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
			_, _ = io.WriteString(w, body[n-2:])
		case <-r.Context().Done():
		}
	}
}

// waitBuffered waits up to 5s for cond on the gateway's held bytes and
// returns them.
func waitBuffered(t *testing.T, gw *router.Gateway, what string, cond func(int64) bool) int64 {
	t.Helper()
	var n int64
	router.WaitUntil(t, what, func() bool { n = gw.BufferedBytes(); return cond(n) })
	return n
}

func zero(n int64) bool { return n == 0 }

// emptyPools empties the process's sync.Pools (two collections drop
// everything in them), so a test that counts bytes held starts without a
// grown answer buffer an earlier test left: holding one is reserved too.
func emptyPools() {
	runtime.GC()
	runtime.GC()
}

// postInBackground sends chatBody to the gateway at url and, when the
// answer has been read, says "STATUS LENGTH" (or the error) on the channel.
func postInBackground(url string) <-chan string {
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- fmt.Sprintf("%d %d", resp.StatusCode, len(b))
	}()
	return done
}

// budgetHolder starts an answer that holds about 448 KiB of a budget (300
// KiB arrived: blocks of 64, 128 and 256 KiB past the pooled 32 KiB; what
// exactly depends on the buffer the pool hands it) until the returned func
// lets it finish, and returns what it holds. A gateway built with
// Options{Previous: holder} shares that budget, as a reload's does, so its
// answers are not alone: the budget never refuses an answer that is.
func budgetHolder(t *testing.T, limits string) (holder *router.Gateway, held int64, finish func()) {
	t.Helper()
	emptyPools()
	release := make(chan struct{})
	h := newUpstream(t, heldAnswer(300<<10, release))
	holder = newGatewayWith(t, "fallback", limits, router.Options{}, target{name: "h", url: h.URL})
	srv := httptest.NewServer(holder.Handler())
	done := postInBackground(srv.URL)
	// All 300 KiB but the last two bytes arrived: the holder holds at
	// least its 64, 128 and 256 KiB blocks' worth of room and no more
	// comes until it is released. What it holds is final once it is 268
	// KiB or more: that is room for 300 KiB with the answer's own 32 KiB
	// buffer (answerBase), and a block is taken only when the buffers in
	// hand are full, which 300 KiB less two bytes never makes them.
	held = waitBuffered(t, holder, "the holding answer's blocks", func(n int64) bool { return n >= 300<<10-32<<10 })
	return holder, held, func() {
		close(release)
		if got := <-done; got != fmt.Sprintf("200 %d", 300<<10) {
			t.Errorf("the holding answer: %s, want 200 with all of it", got)
		}
		srv.Close()
	}
}

// TestLoneAnswerIsNeverRefused: alone, an answer within max_response is
// served even when it needs more than max_buffered for a moment (600 KiB
// without a Content-Length: its blocks and its contiguous copy need more
// than 1MiB), so the budget never narrows what max_response promises.
func TestLoneAnswerIsNeverRefused(t *testing.T) {
	emptyPools()
	a := newUpstream(t, chunkedAnswer(padJSON(600<<10)))
	gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 1MiB}", router.Options{}, target{name: "a", url: a.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || len(body) != 600<<10 {
		t.Errorf("a lone 600 KiB chunked answer: %d with %d bytes, want 200 with all of it", resp.StatusCode, len(body))
	}
	waitBuffered(t, gw, "every byte back", zero)
}

// TestSpentBudgetFailsOverWithoutBlame: an answer the budget cannot hold
// beside another (600 KiB without a Content-Length: its blocks and its
// contiguous copy need more than what 448 KiB held elsewhere leaves of
// 1MiB) fails over to the next target, which answers. The
// attempt says response_buffer_full and no fault; the provider's circuit
// hears nothing (six such attempts, more than its five failures, and it is
// still tried every time), and no byte stays held.
func TestSpentBudgetFailsOverWithoutBlame(t *testing.T) {
	emptyPools()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	const limits = "limits: {max_response: 1MiB, max_buffered: 1MiB}"
	holder, held, finish := budgetHolder(t, limits)
	a := newUpstream(t, chunkedAnswer(padJSON(600<<10)))
	b := newUpstream(t, jsonAnswer(200, `{"from":"b"}`))
	gw := newGatewayWith(t, "fallback", limits, router.Options{TracerProvider: tp, Previous: holder},
		target{name: "a", url: a.URL}, target{name: "b", url: b.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	const requests = 6
	for i := range requests {
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		body := readAll(t, resp.Body)
		if resp.StatusCode != 200 || body != `{"from":"b"}` {
			t.Fatalf("request %d: %d %.200s, want b's answer", i, resp.StatusCode, body)
		}
		wantHeaders(t, resp, "b", "2", "order")
		waitBuffered(t, gw, "every byte back but the holder's", func(n int64) bool { return n == held })
	}
	finish()
	waitBuffered(t, gw, "every byte back", zero)
	if a.hits.Load() != requests {
		t.Errorf("a was tried %d times, want %d: its circuit must not open for the gateway's own memory", a.hits.Load(), requests)
	}
	seen := 0
	for _, s := range waitForSpans(t, exp, 3*requests) {
		attrs := attrMap(s.Attributes)
		if s.SpanKind != trace.SpanKindClient || attrs["firstbyte.target"].AsString() != "a" {
			continue
		}
		seen++
		if et, f := attrs["error.type"].AsString(), attrs["firstbyte.fault"].AsString(); et != fault.ErrorResponseBufferFull || f != "none" {
			t.Errorf("a's attempt: error.type %q, fault %q; want %q, none", et, f, fault.ErrorResponseBufferFull)
		}
		if _, ok := attrs["gen_ai.response.time_to_first_chunk"]; ok {
			t.Error("a's attempt carries a time to first chunk: it would teach the tracker a latency")
		}
	}
	if seen != requests {
		t.Errorf("%d attempt spans for a, want %d", seen, requests)
	}
}

// TestSpentBudgetOnTheLastCandidate: with no target left the client gets a
// 503 in its own API's shape naming response_buffer_full: the gateway is
// short of room for now, which a retry may find (a 502 would blame the
// upstream's answer).
func TestSpentBudgetOnTheLastCandidate(t *testing.T) {
	const limits = "limits: {max_response: 1MiB, max_buffered: 1MiB}"
	holder, _, finish := budgetHolder(t, limits)
	defer finish()
	a := newUpstream(t, chunkedAnswer(padJSON(600<<10)))
	gw := newGatewayWith(t, "fallback", limits, router.Options{Previous: holder}, target{name: "a", url: a.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	for _, tc := range []struct{ path, body, shape string }{
		{"/v1/chat/completions", chatBody, `{"error":{"message":"all 1 attempts failed: attempt 1 a: response_buffer_full"`},
		{"/v1/messages", messagesBody, `{"type":"error","error":{"type":`},
	} {
		resp := post(t, srv.URL, tc.path, tc.body)
		body := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(body, tc.shape) || !strings.Contains(body, `"error":"response_buffer_full"`) {
			t.Errorf("%s: %d %.300s; want 503 starting %s and naming response_buffer_full", tc.path, resp.StatusCode, body, tc.shape)
		}
	}
}

// TestBudgetCountsEveryAnswerInFlight: an answer still arriving holds its
// blocks; an answer with a Content-Length that does not fit beside them is
// refused before a byte of it is read, one that fits is served; once the
// first is whole it is served too, and nothing stays held.
func TestBudgetCountsEveryAnswerInFlight(t *testing.T) {
	emptyPools()
	release := make(chan struct{})
	var asked atomic.Int64
	a := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch asked.Add(1) {
		case 1:
			heldAnswer(300<<10, release)(w, r)
		case 2:
			lengthAnswer(padJSON(600<<10))(w, r)
		default:
			lengthAnswer(padJSON(100<<10))(w, r)
		}
	})
	gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 1MiB}", router.Options{}, target{name: "a", url: a.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	done := postInBackground(srv.URL)
	// 300 KiB arrived: the pooled 32 KiB, then blocks of 64, 128 and 256.
	held := waitBuffered(t, gw, "the slow answer's blocks", func(n int64) bool { return n == 448<<10 })
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if body := readAll(t, resp.Body); resp.StatusCode != 503 || !strings.Contains(body, fault.ErrorResponseBufferFull) {
		t.Errorf("600 KiB beside %d held of 1MiB: %d %.200s, want 503 %s", held, resp.StatusCode, body, fault.ErrorResponseBufferFull)
	}
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || len(body) != 100<<10 {
		t.Errorf("100 KiB beside it: %d with %d bytes, want 200 with %d", resp.StatusCode, len(body), 100<<10)
	}
	// The client may have the whole answer a moment before its handler
	// gives the bytes back.
	waitBuffered(t, gw, "the slow answer's bytes only", func(n int64) bool { return n == held })
	close(release)
	if got := <-done; got != fmt.Sprintf("200 %d", 300<<10) {
		t.Errorf("the slow answer: %s, want 200 with all of it", got)
	}
	waitBuffered(t, gw, "every byte back", zero)
}

// TestBudgetReleasedOnEveryPath: however an answer ends (served, over the
// limit, invalid, cut, translated, canceled by its client, or a panic in
// the gateway), every byte it held of the budget comes back.
func TestBudgetReleasedOnEveryPath(t *testing.T) {
	chatAnswer := `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("y", 200<<10) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	for _, tc := range []struct {
		name   string
		handle http.HandlerFunc
		path   string
		body   string
		status int
	}{
		{"served, chunked", chunkedAnswer(padJSON(600 << 10)), "/v1/chat/completions", chatBody, 200},
		{"served, with Content-Length", lengthAnswer(padJSON(600 << 10)), "/v1/chat/completions", chatBody, 200},
		{"over max_response, chunked", chunkedAnswer(padJSON(2 << 20)), "/v1/chat/completions", chatBody, 502},
		{"not JSON", chunkedAnswer(padJSON(600 << 10)[:600<<10-1]), "/v1/chat/completions", chatBody, 502},
		{"cut mid-answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, padJSON(600 << 10)[:300<<10])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, "/v1/chat/completions", chatBody, 502},
		{"translated for an Anthropic client", chunkedAnswer(chatAnswer), "/v1/messages", messagesBody, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newUpstream(t, tc.handle)
			gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 4MiB}", router.Options{}, target{name: "a", url: a.URL})
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()
			resp := post(t, srv.URL, tc.path, tc.body)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("%d %.200s, want %d", resp.StatusCode, body, tc.status)
			}
			waitBuffered(t, gw, "every byte back", zero)
		})
	}

	t.Run("the client leaves mid-answer", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		a := newUpstream(t, heldAnswer(600<<10, release))
		gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 4MiB}", router.Options{}, target{name: "a", url: a.URL})
		srv := httptest.NewServer(gw.Handler())
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatBody))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		waitBuffered(t, gw, "the answer's blocks", func(n int64) bool { return n > 0 })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("the client's request: %v, want canceled", err)
		}
		waitBuffered(t, gw, "every byte back", zero)
	})

	t.Run("a panic while reading", func(t *testing.T) {
		gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 4MiB}", router.Options{Transport: panicAfter(300 << 10)},
			target{name: "a", url: "http://127.0.0.1:9"})
		srv := httptest.NewServer(gw.Handler())
		defer srv.Close()
		resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
		if body := readAll(t, resp.Body); resp.StatusCode != 500 {
			t.Errorf("%d %.200s, want 500", resp.StatusCode, body)
		}
		waitBuffered(t, gw, "every byte back", zero)
	})
}

// panicAfter is a transport whose answers send n bytes of a JSON object,
// then panic in Read, as a bug under the body would.
type panicAfter int

func (n panicAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: -1,
		Body: &panicBody{left: int(n)}, Request: r}, nil
}

type panicBody struct{ left int }

func (b *panicBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		panic("a bug under the body")
	}
	m := min(len(p), b.left)
	for i := range p[:m] {
		p[i] = ' '
	}
	b.left -= m
	return m, nil
}

func (b *panicBody) Close() error { return nil }

// TestBudgetUnderConcurrency: sixteen clients at once, each asking four
// times for a 200 KiB answer without a Content-Length, against a budget
// of 1MiB that holds about two of them: every answer is whole or a 503
// naming response_buffer_full, the bytes held never pass the budget, and
// none stay held.
func TestBudgetUnderConcurrency(t *testing.T) {
	answer := padJSON(200 << 10)
	a := newUpstream(t, chunkedAnswer(answer))
	gw := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 1MiB}", router.Options{}, target{name: "a", url: a.URL})
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := gw.BufferedBytes(); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(50 * time.Microsecond) // the sampler's interval: the peak is read, not signalled
		}
	}()
	var served, refused atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 4 {
				resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 200 && string(body) == answer:
					served.Add(1)
				case resp.StatusCode == 503 && strings.Contains(string(body), fault.ErrorResponseBufferFull):
					refused.Add(1)
				default:
					t.Errorf("%d %.200s, want the whole answer or a 503 naming %s", resp.StatusCode, body, fault.ErrorResponseBufferFull)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	t.Logf("%d served, %d refused; peak held %d bytes", served.Load(), refused.Load(), peak.Load())
	if served.Load() == 0 {
		t.Error("no answer served")
	}
	if peak.Load() > 1<<20 {
		t.Errorf("held %d bytes at once, over the 1MiB budget", peak.Load())
	}
	waitBuffered(t, gw, "every byte back", zero)
}

// TestReloadSharesTheAnswerBudget: the gateway a reload builds counts the
// answers the old one still holds, against its own new limit.
func TestReloadSharesTheAnswerBudget(t *testing.T) {
	emptyPools()
	release := make(chan struct{})
	slow := newUpstream(t, heldAnswer(300<<10, release))
	old := newGatewayWith(t, "fallback", "limits: {max_response: 1MiB, max_buffered: 2MiB}", router.Options{}, target{name: "a", url: slow.URL})
	oldSrv := httptest.NewServer(old.Handler())
	defer oldSrv.Close()
	done := make(chan int, 1)
	go func() {
		resp, err := http.Post(oldSrv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
		if err != nil {
			done <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	// 300 KiB arrived: the pooled 32 KiB, then blocks of 64, 128 and 256.
	held := waitBuffered(t, old, "the slow answer's blocks", func(n int64) bool { return n == 448<<10 })

	big := newUpstream(t, lengthAnswer(padJSON(700<<10)))
	cfg, err := config.Parse([]byte(configYAML("fallback", "limits: {max_response: 1MiB, max_buffered: 1MiB}", target{name: "b", url: big.URL})),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := router.New(cfg, router.Options{Previous: old})
	if err != nil {
		t.Fatal(err)
	}
	if n := gw.BufferedBytes(); n != held {
		t.Errorf("the new gateway sees %d bytes held, want the old one's %d", n, held)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	// 700 KiB beside what the old gateway holds does not fit the new 1MiB.
	resp := post(t, srv.URL, "/v1/chat/completions", chatBody)
	if body := readAll(t, resp.Body); resp.StatusCode != 503 || !strings.Contains(body, fault.ErrorResponseBufferFull) {
		t.Errorf("new gateway, old answer in flight: %d %.200s, want 503 %s", resp.StatusCode, body, fault.ErrorResponseBufferFull)
	}
	close(release)
	if s := <-done; s != 200 {
		t.Errorf("the old gateway's answer: %d, want 200", s)
	}
	waitBuffered(t, gw, "every byte back", zero)
	resp = post(t, srv.URL, "/v1/chat/completions", chatBody)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || len(body) != 700<<10 {
		t.Errorf("new gateway, nothing else held: %d with %d bytes, want 200 with %d", resp.StatusCode, len(body), 700<<10)
	}
}
