//go:build integration

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// TestGracefulDrain: SIGTERM while a slow stream is in flight. /readyz turns
// 503 (or the admin listener is gone), the API takes no new connection, the
// stream in flight runs to its end; its connection (whose answer began
// before the signal, so did not say close) stays open for the client's next
// request, which is answered with Connection: close, and the process exits
// 0 once that connection is closed.
func TestGracefulDrain(t *testing.T) {
	parallelTimed(t)
	const chunks = 20
	slow := startSimProvider(t, sim.Provider{Name: "slow-stream", TTFB: sim.Fixed(10 * time.Millisecond),
		Stream: sim.Pace{Chunks: chunks, Interval: 75 * time.Millisecond}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  slow: {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: slow, model_map: {m1: slow-model}}
`, slow.URL()))

	req, err := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", true)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status = %d, want 200", resp.StatusCode)
	}
	type event struct {
		data string
		err  error
	}
	events := make(chan event, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- event{data: data}
			}
		}
		if err := sc.Err(); err != nil {
			events <- event{err: err}
		}
	}()
	select {
	case e := <-events:
		if e.err != nil {
			t.Fatalf("stream: %v", e.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no first stream event within 5s")
	}

	start := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Draining: not ready, and the API listener closed.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	pollUntil(t, 5*time.Second, "/readyz 503 or the admin listener closed", func() bool {
		r, err := probe.Get("http://" + gw.admin + "/readyz")
		if err != nil {
			return true
		}
		r.Body.Close()
		return r.StatusCode == http.StatusServiceUnavailable
	})
	pollUntil(t, 5*time.Second, "the API listener closed", func() bool {
		c, err := net.DialTimeout("tcp", gw.api, 200*time.Millisecond)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if gw.exited() {
		t.Fatalf("gateway exited %v after SIGTERM with a stream still in flight", time.Since(start))
	}

	// The stream in flight runs to its end.
	var data []string
	for e := range events {
		if e.err != nil {
			t.Fatalf("stream broken during the drain after %d events: %v", len(data), e.err)
		}
		data = append(data, e.data)
	}
	if len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Errorf("stream did not end with [DONE]: %q", data)
	}
	content := 0
	for _, d := range data {
		if strings.Contains(d, `"error"`) {
			t.Errorf("stream carries an error event during the drain: %s", d)
		}
		if strings.Contains(d, `"content":"`) && !strings.Contains(d, `"content":""`) {
			content++
		}
	}
	if content != chunks {
		t.Errorf("stream had %d content chunks, want %d", content, chunks)
	}

	// The next request on the same connection is answered, and says close.
	next, err := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", false)))
	if err != nil {
		t.Fatal(err)
	}
	next.Header.Set("Content-Type", "application/json")
	var reused bool
	next = next.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	nextResp, err := client.Do(next)
	if err != nil {
		t.Fatalf("the request after the stream, on its connection: %v", err)
	}
	body, err := io.ReadAll(nextResp.Body)
	nextResp.Body.Close()
	if err != nil || nextResp.StatusCode != http.StatusOK || !reused || !nextResp.Close {
		t.Errorf("the request after the stream: status %d, reused connection %v, Connection: close %v, %v: %s",
			nextResp.StatusCode, reused, nextResp.Close, err, tailOf(string(body), 200))
	}
	if code := gw.wait(t, 10*time.Second); code != 0 {
		t.Errorf("gateway exit code after the drain = %d, want 0", code)
	}
	t.Logf("drain: stream finished and the process exited %v after SIGTERM", time.Since(start))
}

// TestDrainKeepsEveryKeptAliveConnectionAnswered: clients that each send
// requests back to back on one kept-alive TCP connection (unary and long
// streams in turn), and clients whose connection sat idle from before the
// signal, while the gateway drains with shutdown.delay 0s and 1s. Every
// request sent gets a whole answer; the gateway closes a connection only
// after an answer that said "Connection: close"; every client gets one;
// the process exits 0 as soon as the last connection is closed, long
// before the grace is over.
//
//	busy client:  req ─> answer ─> req ─> answer (close) ─> EOF
//	                        ^ SIGTERM      (a stream begun before the signal
//	                                        ends after the listener closed:
//	                                        the next request must be answered)
//	idle client:  req ─> answer ... (listener closed) ... req ─> answer (close) ─> EOF
//
// An admin client (a scraper) does as an idle client does on the admin
// listener.
func TestDrainKeepsEveryKeptAliveConnectionAnswered(t *testing.T) {
	parallelTimed(t)
	const (
		streamChunks = 30 // x 50 ms: a stream outlives a delay of 1s
		unaryChunks  = 2
		busyClients  = 12 // a third each: stream first, unary first, unary only
		idleClients  = 4
		grace        = 10 * time.Second
	)
	fast := startSimProvider(t, sim.Provider{Name: "fast", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: unaryChunks, Interval: 5 * time.Millisecond}})
	slow := startSimProvider(t, sim.Provider{Name: "slow", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: streamChunks, Interval: 50 * time.Millisecond}})
	for _, delay := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprintf("delay=%v", delay), func(t *testing.T) {
			gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {delay: %v, grace: %v}
providers:
  fast: {kind: openai, base_url: %q}
  slow: {kind: openai, base_url: %q}
targets:
  - {virtual_key: fast, model_map: {m-unary: u}}
  - {virtual_key: slow, model_map: {m-stream: s}}
`, delay, grace, fast.URL(), slow.URL()))
			run := &keepAliveRun{api: gw.api, streamChunks: streamChunks, unaryChunks: unaryChunks,
				listenerClosed: make(chan struct{}), deadline: time.Now().Add(30 * time.Second)}
			var clients sync.WaitGroup
			idleReady := make(chan struct{}, idleClients)
			for i := range idleClients {
				clients.Add(1)
				go func() { defer clients.Done(); run.idleClient(fmt.Sprintf("idle%d", i), idleReady) }()
			}
			clients.Add(1)
			go func() { defer clients.Done(); run.adminClient(gw.admin, idleReady) }()
			for range idleClients + 1 {
				<-idleReady
			}
			for i := range busyClients {
				clients.Add(1)
				go func() { defer clients.Done(); run.busyClient(fmt.Sprintf("busy%d", i), i%3) }()
			}
			// Let every busy client get going (a stream under way on most
			// of them), then signal.
			pollUntil(t, 10*time.Second, "every busy client answered once", func() bool { return run.answeredClients() >= busyClients })
			// A spread of requests at every stage (sent, streaming, about
			// to end) is what the drain is tested against; no one event
			// marks it, so the load runs on for a moment of wall time.
			time.Sleep(300 * time.Millisecond)
			run.signal.Store(time.Now().UnixNano())
			signaled := time.Now()
			if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			pollUntil(t, delay+5*time.Second, "the API listener closed", func() bool {
				c, err := net.DialTimeout("tcp", gw.api, 200*time.Millisecond)
				if err != nil {
					return true
				}
				c.Close()
				return false
			})
			run.closed.Store(time.Now().UnixNano())
			close(run.listenerClosed)
			closedAfter := time.Since(signaled)
			clients.Wait()
			code := gw.wait(t, grace+10*time.Second)
			exited := time.Since(signaled)

			run.report(t)
			if code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
			if want := busyClients + idleClients + 1; run.closes != want {
				t.Errorf("%d of %d clients got an answer with Connection: close", run.closes, want)
			}
			if run.closedByGateway != run.closes {
				t.Errorf("the gateway closed %d of the %d connections whose answer said close", run.closedByGateway, run.closes)
			}
			// The race under test happened: answers begun before the signal
			// ended after the listener closed, and their clients sent again.
			if run.straddling == 0 {
				t.Error("no answer begun before the signal ended after the listener closed: the test did not test")
			}
			if exited > grace {
				t.Errorf("exit %v after SIGTERM, after the %v grace: the drain waited for connections that were closed", exited, grace)
			}
			t.Logf("delay %v: listener closed %v after SIGTERM, exit after %v", delay, closedAfter.Round(time.Millisecond), exited.Round(time.Millisecond))
		})
	}
}

// keepAliveRun is the clients of one drain, each on its own TCP
// connection, writing requests and reading answers itself so that nothing
// reconnects or retries behind its back.
type keepAliveRun struct {
	api                       string
	streamChunks, unaryChunks int
	signal, closed            atomic.Int64  // unix nanos of SIGTERM, of the listener seen closed
	listenerClosed            chan struct{} // closed once the API listener refuses connections
	deadline                  time.Time     // a bound on the whole run, not the plan

	mu              sync.Mutex // guards the fields below
	answered        map[string]bool
	sent, ok        int
	lost            []string
	afterSignal     int // requests sent after SIGTERM
	closes          int // answers that said Connection: close (one per client at most)
	closedByGateway int // ... after which the gateway closed the connection
	straddling      int // answers begun before SIGTERM and ended after the listener closed
}

// busyClient sends requests back to back until an answer says close:
// streams and unary requests in turn (kind 0: a stream first; 1: a unary
// one first), or only unary ones (2).
func (r *keepAliveRun) busyClient(name string, kind int) {
	conn, br, ok := r.dial(name)
	if !ok {
		return
	}
	defer conn.Close()
	for n := 0; time.Now().Before(r.deadline); n++ {
		if r.exchange(name, n, conn, br, kind != 2 && n%2 == kind) {
			return
		}
	}
	r.fail(name, "no answer said Connection: close before the run's bound")
}

// idleClient sends one request, reports ready, waits until the listener is
// closed and sends another on the same connection, which sat idle.
func (r *keepAliveRun) idleClient(name string, ready chan<- struct{}) {
	conn, br, ok := r.dial(name)
	if !ok {
		ready <- struct{}{}
		return
	}
	defer conn.Close()
	closed := r.exchange(name, 0, conn, br, false)
	ready <- struct{}{}
	if closed {
		r.fail(name, "the answer before the signal said Connection: close")
		return
	}
	<-r.listenerClosed
	if !r.exchange(name, 1, conn, br, true) {
		r.fail(name, "the answer after the signal did not say Connection: close")
	}
}

// adminClient is a scraper on the admin listener: /metrics before the
// signal, /readyz on the same connection once the listeners are closed.
func (r *keepAliveRun) adminClient(admin string, ready chan<- struct{}) {
	conn, err := net.DialTimeout("tcp", admin, 2*time.Second)
	if err != nil {
		r.fail("admin", "dial: %v", err)
		ready <- struct{}{}
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(r.deadline)
	br := bufio.NewReader(conn)
	get := func(path string) (*http.Response, bool) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+admin+path, nil)
		r.mu.Lock()
		r.sent++
		r.mu.Unlock()
		if err := req.Write(conn); err != nil {
			r.fail("admin "+path, "writing the request: %v", err)
			return nil, false
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			r.fail("admin "+path, "no answer: %v", err)
			return nil, false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			r.fail("admin "+path, "reading the answer: %v", err)
			return nil, false
		}
		r.mu.Lock()
		r.ok++
		r.mu.Unlock()
		return resp, true
	}
	resp, ok := get("/metrics")
	ready <- struct{}{}
	if !ok || resp.StatusCode != http.StatusOK || resp.Close {
		r.fail("admin /metrics", "before the signal: %v", resp)
		return
	}
	<-r.listenerClosed
	resp, ok = get("/readyz")
	if !ok {
		return
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
		r.fail("admin /readyz", "while draining: status %d, Connection: close %v; want 503 and close", resp.StatusCode, resp.Close)
		return
	}
	_, err = br.ReadByte()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closes++
	if errors.Is(err, io.EOF) {
		r.closedByGateway++
	}
}

func (r *keepAliveRun) dial(name string) (net.Conn, *bufio.Reader, bool) {
	conn, err := net.DialTimeout("tcp", r.api, 2*time.Second)
	if err != nil {
		r.fail(name, "dial: %v", err)
		return nil, nil, false
	}
	_ = conn.SetDeadline(r.deadline)
	return conn, bufio.NewReader(conn), true
}

// exchange sends request n and reads its whole answer; it reports whether
// the answer said Connection: close (after checking that the gateway then
// closes the connection).
func (r *keepAliveRun) exchange(name string, n int, conn net.Conn, br *bufio.Reader, stream bool) (closed bool) {
	model, chunks := "m-unary", r.unaryChunks
	if stream {
		model, chunks = "m-stream", r.streamChunks
	}
	id := fmt.Sprintf("%s-r%d (stream %v)", name, n, stream)
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.api+"/v1/chat/completions",
		strings.NewReader(fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"%s"}]}`, model, stream, id)))
	req.Header.Set("Content-Type", "application/json")
	after := r.signal.Load() != 0
	r.mu.Lock()
	r.sent++
	if after {
		r.afterSignal++
	}
	r.mu.Unlock()
	if err := req.Write(conn); err != nil {
		r.fail(id, "writing the request: %v", err)
		return true
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		r.fail(id, "no answer (after the signal %v): %v", after, err)
		return true
	}
	began := time.Now()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		r.fail(id, "reading the answer: %v", err)
		return true
	}
	if resp.StatusCode != http.StatusOK {
		r.fail(id, "status %d: %s", resp.StatusCode, tailOf(string(b), 200))
		return resp.Close
	}
	text := string(b)
	content := strings.Count(text, `"content":"`) - strings.Count(text, `"content":""`)
	if stream && (content != chunks || !strings.HasSuffix(strings.TrimSpace(text), "data: [DONE]") || strings.Contains(text, `"error"`)) {
		r.fail(id, "incomplete stream (%d of %d chunks): %s", content, chunks, tailOf(text, 200))
		return resp.Close
	}
	if !stream && !strings.Contains(text, `"object":"chat.completion"`) {
		r.fail(id, "not a completion: %s", tailOf(text, 200))
		return resp.Close
	}
	r.mu.Lock()
	r.ok++
	if r.answered == nil {
		r.answered = map[string]bool{}
	}
	r.answered[name] = true
	if s, c := r.signal.Load(), r.closed.Load(); s != 0 && c != 0 && began.UnixNano() < s && time.Now().UnixNano() > c {
		r.straddling++
	}
	r.mu.Unlock()
	if !resp.Close {
		return false
	}
	// The gateway closes the connection after an answer that said so.
	_, err = br.ReadByte()
	r.mu.Lock()
	r.closes++
	if errors.Is(err, io.EOF) {
		r.closedByGateway++
	}
	r.mu.Unlock()
	return true
}

func (r *keepAliveRun) answeredClients() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.answered)
}

func (r *keepAliveRun) fail(id, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, id+": "+fmt.Sprintf(format, args...))
}

func (r *keepAliveRun) report(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Logf("%d requests sent, %d answered whole, %d lost; %d sent after SIGTERM; %d answers straddled the listener's close; %d said close, %d then closed by the gateway",
		r.sent, r.ok, len(r.lost), r.afterSignal, r.straddling, r.closes, r.closedByGateway)
	for i, l := range r.lost {
		if i == 10 {
			t.Errorf("... and %d more", len(r.lost)-i)
			break
		}
		t.Errorf("lost: %s", l)
	}
}

// TestDrainClosesIdleConnectionsAtTheEndOfTheGrace: a client keeps an idle
// kept-alive connection (its last answer, from before the signal, did not
// say close) and never sends on it again. The gateway leaves it open for
// the whole grace, then closes it and exits 0.
func TestDrainClosesIdleConnectionsAtTheEndOfTheGrace(t *testing.T) {
	parallelTimed(t)
	const grace = time.Second
	p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(5 * time.Millisecond)})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {grace: %v}
providers:
  p: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: x}}
`, grace, p.URL()))
	conn, err := net.DialTimeout("tcp", gw.api, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req, _ := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", false)))
	req.Header.Set("Content-Type", "application/json")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("before the signal: status %d, Connection: close %v; want 200, kept alive", resp.StatusCode, resp.Close)
	}

	signaled := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, err = br.ReadByte() // blocks until the gateway closes the connection
	closedAfter := time.Since(signaled)
	if !errors.Is(err, io.EOF) {
		t.Errorf("reading the idle connection: %v, want EOF when the gateway closes it", err)
	}
	if closedAfter < grace {
		t.Errorf("the idle connection was closed %v after SIGTERM, before the %v grace was over", closedAfter, grace)
	}
	if code := gw.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if !strings.Contains(gw.stderr.String(), `msg="closing the idle connections left"`) {
		t.Errorf("no log line for the idle connections closed at the end of the grace:\n%s", tailOf(gw.stderr.String(), 1000))
	}
	t.Logf("idle connection closed %v after SIGTERM (grace %v), exit %v after", closedAfter.Round(time.Millisecond), grace, time.Since(signaled).Round(time.Millisecond))
}
