//go:build integration

package main

// The serving lifecycle through the real binary: reload and drain under
// mixed load, the end of the grace, stalled clients at a low fd limit, the
// request path's framing and timeouts, and the admin token. Every load is
// bounded in time and count, on loopback.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// mixedLoad is workers clients sending, each in turn, a unary and a
// streaming chat request for model, over kept-alive connections, checking
// every answer whole: a 200, one attempt, a unary body that is a
// completion, a stream with every content chunk and [DONE] and no error
// event.
type mixedLoad struct {
	api     string
	model   string
	chunks  int // content chunks of a whole stream
	client  *http.Client
	signal  atomic.Int64 // unix nanos of the signal under test; 0: none yet
	stopped chan struct{}

	mu                sync.Mutex // guards the fields below
	sent, ok          int
	failures          []string
	afterSignal       int // requests begun after the signal
	reusedAfterSignal int // ... on a connection kept alive from before
	closeAfterSignal  int // ... whose answer said Connection: close
	latencies         []time.Duration
}

// answered is a condition for pollUntil: n of l's requests were answered.
func (l *mixedLoad) answered(n int) func() bool {
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.ok >= n
	}
}

func newMixedLoad(api, model string, chunks int) *mixedLoad {
	return &mixedLoad{api: api, model: model, chunks: chunks, stopped: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}}
}

// run runs workers until stop closes or maxDuration passes (a bound, not the
// plan), then waits for every request in flight and closes the idle
// connections, as clients that go away do (a draining gateway would keep
// them open for a next request until its grace ends).
func (l *mixedLoad) run(workers int, stop <-chan struct{}, maxDuration time.Duration) {
	deadline := time.Now().Add(maxDuration)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				select {
				case <-stop:
					return
				default:
				}
				l.one((w+n)%2 == 1, fmt.Sprintf("w%d-r%d", w, n))
			}
		}()
	}
	wg.Wait()
	l.client.CloseIdleConnections()
	close(l.stopped)
}

// one sends one request and checks its answer.
func (l *mixedLoad) one(stream bool, id string) {
	body := fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"request %s"}]}`, l.model, stream, id)
	req, _ := http.NewRequest(http.MethodPost, "http://"+l.api+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	var reused bool
	req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	start := time.Now()
	after := l.signal.Load() != 0
	fail := func(format string, args ...any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.sent++
		l.failures = append(l.failures, fmt.Sprintf("%s (stream %v, reused %v, after the signal %v): ", id, stream, reused, after)+fmt.Sprintf(format, args...))
	}
	resp, err := l.client.Do(req)
	if err != nil {
		fail("%v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		fail("reading: %v", err)
		return
	}
	if resp.StatusCode != 200 {
		fail("status %d: %s", resp.StatusCode, b)
		return
	}
	if a := resp.Header.Get("X-Firstbyte-Attempts"); a != "1" {
		fail("%s attempts", a)
		return
	}
	if stream {
		content := strings.Count(string(b), `"content":"`) - strings.Count(string(b), `"content":""`)
		if content != l.chunks || !strings.HasSuffix(strings.TrimSpace(string(b)), "data: [DONE]") || strings.Contains(string(b), `"error"`) {
			fail("incomplete stream (%d of %d chunks): %s", content, l.chunks, tailOf(string(b), 300))
			return
		}
	} else if !strings.Contains(string(b), `"object":"chat.completion"`) {
		fail("not a completion: %s", b)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	l.ok++
	l.latencies = append(l.latencies, time.Since(start))
	if after {
		l.afterSignal++
		if reused {
			l.reusedAfterSignal++
		}
		if resp.Close {
			l.closeAfterSignal++
		}
	}
}

func (l *mixedLoad) report(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("load: %d sent, %d ok, %d failed; after the signal %d (%d on reused connections, %d answered Connection: close)",
		l.sent, l.ok, len(l.failures), l.afterSignal, l.reusedAfterSignal, l.closeAfterSignal)
	for i, f := range l.failures {
		if i == 10 {
			t.Errorf("... and %d more failures", len(l.failures)-i)
			break
		}
		t.Errorf("failed: %s", f)
	}
}

func (l *mixedLoad) percentile(p float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// waitLog waits for a line of the process's stderr containing substr to
// appear count times in all.
func waitLog(t *testing.T, p *childProc, substr string, count int) {
	t.Helper()
	pollUntil(t, 10*time.Second, fmt.Sprintf("%d log lines with %q", count, substr), func() bool {
		return strings.Count(p.stderr.String(), substr) >= count
	})
}

// routedTargets is /debug/routing's targets for model, sorted.
func routedTargets(t *testing.T, admin, model string) []string {
	t.Helper()
	var names []string
	for name := range modelRouting(t, admin, model) {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestReloadUnderLoad: SIGHUP with a good config, then a bad one, and a bad
// one through POST /admin/reload, under 32 clients of mixed unary and
// streaming requests. No request fails, none reaches a provider twice;
// the good config takes over new requests, the bad ones change nothing.
func TestReloadUnderLoad(t *testing.T) {
	// Not parallel: 32 clients load both cores, and every request must be served within its timeouts.
	const chunks = 4
	pace := sim.Pace{Chunks: chunks, Interval: 15 * time.Millisecond}
	a := startSimProvider(t, sim.Provider{Name: "a", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	b := startSimProvider(t, sim.Provider{Name: "b", TTFB: sim.Fixed(5 * time.Millisecond), Stream: pace})
	config := func(mode string, targets ...string) string {
		var ts strings.Builder
		for _, tg := range targets {
			fmt.Fprintf(&ts, "  - {virtual_key: %s, model_map: {m1: model-%s}}\n", tg, tg)
		}
		return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
strategy: {mode: %s}
providers:
  a: {kind: openai, base_url: %q, api_key: key-a}
  b: {kind: openai, base_url: %q, api_key: key-b}
targets:
%s`, mode, a.URL(), b.URL(), ts.String())
	}
	gw := startGatewayProc(t, "gateway", config("least-latency", "a"))
	write := func(text string) {
		if err := os.WriteFile(gw.configPath, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	load := newMixedLoad(gw.api, "m1", chunks)
	stop := make(chan struct{})
	go load.run(32, stop, 20*time.Second)
	pollUntil(t, 5*time.Second, "a's first samples under the load", func() bool { return modelRouting(t, gw.admin, "m1")["a"].samples > 0 })
	samplesBefore := modelRouting(t, gw.admin, "m1")["a"].samples

	// A good config: b joins, round-robin spreads the load over both.
	write(config("round-robin", "a", "b"))
	bBefore := b.Requests()
	if err := gw.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, gw.childProc, `msg="config reloaded" source=SIGHUP`, 1)
	pollUntil(t, 5*time.Second, "b to take requests after the reload", func() bool { return b.Requests() > bBefore+10 })
	if got := modelRouting(t, gw.admin, "m1")["a"].samples; got == 0 || samplesBefore == 0 {
		t.Errorf("a's samples: %d before the reload, %d after; the reload must keep them", samplesBefore, got)
	}
	aNow, bNow := a.Requests(), b.Requests()
	pollUntil(t, 5*time.Second, "both targets to serve under the new config", func() bool { return a.Requests() > aNow+10 && b.Requests() > bNow+10 })

	// A bad config, by signal and by the admin endpoint: refused.
	routingBefore := routedTargets(t, gw.admin, "m1")
	write(config("round-robin", "a", "b", "c"))
	if err := gw.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, gw.childProc, `msg="config reload refused; the running config keeps serving" source=SIGHUP`, 1)
	resp, err := http.Post("http://"+gw.admin+"/admin/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 422 || !strings.Contains(string(body), `targets[2].virtual_key: unknown provider \"c\"`) {
		t.Errorf("POST /admin/reload of a bad file = %d %s, want 422 naming targets[2].virtual_key", resp.StatusCode, body)
	}
	aMid, bMid := a.Requests(), b.Requests()
	enough := load.answered(200) // a run long enough to say the load ran
	pollUntil(t, 10*time.Second, "both targets to serve after the refused reloads, 200 answers in all", func() bool {
		return a.Requests() > aMid+10 && b.Requests() > bMid+10 && enough()
	})
	close(stop)
	<-load.stopped

	load.report(t)
	if after := routedTargets(t, gw.admin, "m1"); !slices.Equal(after, routingBefore) {
		t.Errorf("targets after the refused reloads = %v, want %v (unchanged)", after, routingBefore)
	}
	if a.Requests() == aMid || b.Requests() == bMid {
		t.Errorf("after the refused reloads a got %d and b %d more requests; both must still serve", a.Requests()-aMid, b.Requests()-bMid)
	}
	if upstream := a.Requests() + b.Requests(); upstream != int64(load.sent) {
		t.Errorf("providers got %d requests for %d sent: duplicated or lost", upstream, load.sent)
	}
	if ok, refused := scrapeMetric(t, gw.admin, "firstbyte_reloads_total", `result="ok"`), scrapeMetric(t, gw.admin, "firstbyte_reloads_total", `result="refused"`); ok != 1 || refused != 2 {
		t.Errorf("firstbyte_reloads_total ok=%v refused=%v, want 1 and 2", ok, refused)
	}
	if load.sent < 200 {
		t.Errorf("only %d requests in the run; the load did not run", load.sent)
	}
	if code := gw.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestDrainUnderLoad: SIGTERM with shutdown.delay 1s under 32 clients of
// mixed requests on kept-alive connections, with a load balancer that
// stops sending 400 ms after /readyz says 503, plus clients whose
// connections sat idle from before the signal. Nothing fails; every
// answer begun after the signal closes its connection; a long stream in
// flight runs to its end while the listeners are already free for a
// replacement; exit 0.
func TestDrainUnderLoad(t *testing.T) {
	// Not parallel: 32 clients load both cores, and its load balancer stops 400 ms after /readyz turns.
	const chunks = 6
	p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(10 * time.Millisecond), Stream: sim.Pace{Chunks: chunks, Interval: 20 * time.Millisecond}})
	long := startSimProvider(t, sim.Provider{Name: "long", TTFB: sim.Fixed(10 * time.Millisecond), Stream: sim.Pace{Chunks: 25, Interval: 100 * time.Millisecond}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {delay: 1s, grace: 10s}
providers:
  p:    {kind: openai, base_url: %q}
  long: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
  - {virtual_key: long, model_map: {m-long: lm}}
`, p.URL(), long.URL()))

	// A long stream that will still be running when the listeners close.
	longLoad := newMixedLoad(gw.api, "m-long", 25)
	longDone := make(chan struct{})
	go func() { defer close(longDone); longLoad.one(true, "long") }()

	// Idle clients: one request each before the signal, one after, on the
	// connection kept alive in between.
	idle := newMixedLoad(gw.api, "m1", chunks)
	var before sync.WaitGroup
	for i := range 8 { // at once: eight connections, then idle in the pool
		before.Add(1)
		go func() { defer before.Done(); idle.one(i%2 == 1, fmt.Sprintf("idle%d-before", i)) }()
	}
	before.Wait()

	load := newMixedLoad(gw.api, "m1", chunks)
	stop := make(chan struct{})
	go load.run(32, stop, 20*time.Second)
	pollUntil(t, 5*time.Second, "the load to be under way (64 answers)", load.answered(64))

	signaled := time.Now()
	load.signal.Store(signaled.UnixNano())
	idle.signal.Store(signaled.UnixNano())
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The load balancer: polls /readyz on fresh connections; 400 ms after
	// the first 503 it sends nothing more.
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	pollUntil(t, 2*time.Second, "/readyz 503", func() bool {
		r, err := probe.Get("http://" + gw.admin + "/readyz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusServiceUnavailable
	})
	notReady := time.Since(signaled)
	var idleWG sync.WaitGroup
	for i := range 8 {
		idleWG.Add(1)
		go func() { defer idleWG.Done(); idle.one(i%2 == 1, fmt.Sprintf("idle%d-after", i)) }()
	}
	// The load balancer's own delay: it goes on sending for 400 ms of wall
	// time after the first 503, which the gateway must serve; no event of
	// the gateway's marks that time, so it is waited out.
	time.Sleep(400 * time.Millisecond)
	close(stop)
	<-load.stopped
	idleWG.Wait()

	// After the delay both listeners close: a replacement could bind them,
	// while the long stream is still running here.
	pollUntil(t, 3*time.Second, "both listeners free", func() bool {
		for _, addr := range []string{gw.api, gw.admin} {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return false
			}
			ln.Close()
		}
		return true
	})
	freed := time.Since(signaled)
	if gw.exited() {
		t.Error("the process exited before its long stream ended")
	}
	<-longDone
	// The long stream's answer began before the signal, so its connection
	// stays open for a next request until the grace ends; its client
	// closing it ends the drain.
	longLoad.client.CloseIdleConnections()
	code := gw.wait(t, 15*time.Second)
	exited := time.Since(signaled)

	load.report(t)
	idle.report(t)
	longLoad.report(t)
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if load.afterSignal == 0 || load.reusedAfterSignal == 0 {
		t.Errorf("no request after the signal on a kept-alive connection (%d after, %d reused): the test did not test", load.afterSignal, load.reusedAfterSignal)
	}
	if idle.reusedAfterSignal != 8 {
		t.Errorf("%d of 8 idle clients reused their connection after the signal", idle.reusedAfterSignal)
	}
	if load.closeAfterSignal != load.afterSignal || idle.closeAfterSignal != idle.afterSignal {
		t.Errorf("answers begun after the signal without Connection: close: load %d of %d, idle %d of %d",
			load.afterSignal-load.closeAfterSignal, load.afterSignal, idle.afterSignal-idle.closeAfterSignal, idle.afterSignal)
	}
	t.Logf("drain: /readyz 503 after %v, listeners free after %v, exit after %v", notReady.Round(time.Millisecond), freed.Round(time.Millisecond), exited.Round(time.Millisecond))
}

// TestGraceEndsOpenStreamsWithAnErrorEvent: a stream longer than
// shutdown.grace ends with an error event in its API's format when the
// grace is over, the process exits 0 soon after.
func TestGraceEndsOpenStreamsWithAnErrorEvent(t *testing.T) {
	parallelTimed(t)
	slow := startSimProvider(t, sim.Provider{Name: "slow", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: 100, Interval: 100 * time.Millisecond}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {grace: 1s}
providers:
  oa: {kind: openai, base_url: %[1]q}
  an: {kind: anthropic, base_url: %[1]q}
targets:
  - {virtual_key: oa, model_map: {m1: x}}
  - {virtual_key: an, model_map: {m1: x}}
`, slow.URL()))
	type result struct {
		body string
		err  error
	}
	stream := func(path, body string) chan result {
		ch := make(chan result, 1)
		req, _ := http.NewRequest(http.MethodPost, "http://"+gw.api+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := apiClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			ch <- result{string(b), err}
		}()
		return ch
	}
	openai := stream("/v1/chat/completions", chatRequestBody("m1", true))
	anthropic := stream("/v1/messages", `{"model":"m1","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	// Both answers' headers came, which the gateway sends only with a
	// stream's first event: both streams are under way.
	start := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan result{"OpenAI": openai, "Anthropic": anthropic} {
		r := <-ch
		want := `data: {"error":{"message":"the gateway is shutting down`
		if name == "Anthropic" {
			want = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"the gateway is shutting down"
		}
		if r.err != nil || !strings.Contains(r.body, want) {
			t.Errorf("%s stream at the end of the grace: %v, %q; want an error event", name, r.err, tailOf(r.body, 300))
		}
	}
	ended := time.Since(start)
	if code := gw.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if ended < time.Second || ended > 3*time.Second {
		t.Errorf("streams ended %v after SIGTERM, want just after the 1s grace", ended)
	}
	t.Logf("streams ended %v after SIGTERM, exit %v after", ended.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// TestStalledBodiesAtLowFDLimit: 300 connections that send headers and then
// a request body at a byte per 5 s, against a gateway whose fd limit is
// 256 and whose max_connections is 200. Clients on kept-alive connections
// are served throughout with p99 < 1s, /readyz answers on fresh
// connections, and read_timeout (2s) closes every stalled connection.
func TestStalledBodiesAtLowFDLimit(t *testing.T) {
	// Not parallel: 300 connections, and a p99 under 1 s for the kept-alive clients.
	stalled := 300
	if testing.Short() {
		stalled = 100
	}
	p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: 3, Interval: 5 * time.Millisecond}})
	bin := requireBinary(t, "FIRSTBYTE_BIN")
	path := writeGatewayConfig(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
limits: {read_timeout: 2s, max_connections: 200}
log: {requests: false}
providers:
  p: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
`, p.URL()))
	child := startChildProc(t, "gateway", "/bin/sh", childEnv(), "-c", `ulimit -n 256 && exec "$0" serve -config "$1"`, bin, path)
	gw := waitGatewayServing(t, child, path)

	// Normal clients, their connections opened before the flood.
	load := newMixedLoad(gw.api, "m1", 3)
	for i := range 4 {
		load.one(i%2 == 1, fmt.Sprintf("warm%d", i))
	}
	load.mu.Lock()
	load.latencies = nil
	load.mu.Unlock()

	type closedAt struct {
		d   time.Duration
		err error
	}
	closed := make(chan closedAt, stalled)
	floodStart := time.Now()
	for i := range stalled {
		go func() {
			c, err := net.DialTimeout("tcp", gw.api, 10*time.Second)
			if err != nil {
				closed <- closedAt{err: err}
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			// A byte per 5 s; the server must close it first (a read
			// returns EOF or the 408, then EOF).
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			trickle := time.NewTicker(5 * time.Second)
			defer trickle.Stop()
			got := make(chan error, 1)
			var answer []byte
			go func() {
				b, rerr := io.ReadAll(c)
				answer = b // read after got delivers rerr
				got <- rerr
			}()
			for {
				select {
				case err := <-got:
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						closed <- closedAt{err: fmt.Errorf("stalled connection %d still open after 20s", i)}
						return
					}
					if !strings.HasPrefix(string(answer), "HTTP/1.1 408 ") {
						closed <- closedAt{err: fmt.Errorf("stalled connection %d closed with %q, want a 408", i, tailOf(string(answer), 100))}
						return
					}
					closed <- closedAt{d: time.Since(floodStart)}
					return
				case <-trickle.C:
					_, _ = c.Write([]byte(" "))
				}
			}
		}()
	}

	stop := make(chan struct{})
	go load.run(4, stop, 30*time.Second)
	readyz := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var readyFail, readyOK int
	var last time.Duration
	for range stalled {
		select {
		case c := <-closed:
			if c.err != nil {
				t.Error(c.err)
			}
			last = max(last, c.d)
		case <-time.After(25 * time.Second):
			t.Fatal("stalled connections still open after 25s")
		}
		if r, err := readyz.Get("http://" + gw.admin + "/readyz"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			readyOK++
		} else {
			readyFail++
		}
	}
	close(stop)
	<-load.stopped
	load.report(t)
	p99 := load.percentile(0.99)
	t.Logf("%d stalled connections all closed within %v of the flood; normal requests: %d, p50 %v, p99 %v; /readyz on fresh connections: %d ok, %d failed",
		stalled, last.Round(time.Millisecond), load.ok, load.percentile(0.5).Round(time.Millisecond), p99.Round(time.Millisecond), readyOK, readyFail)
	if p99 >= time.Second {
		t.Errorf("p99 of normal requests = %v, want < 1s", p99)
	}
	if load.ok < 50 {
		t.Errorf("only %d normal requests served during the flood", load.ok)
	}
	if readyFail > 0 {
		t.Errorf("/readyz failed %d times during the flood", readyFail)
	}
	if waves := (stalled + 199) / 200; last > time.Duration(waves)*3*time.Second+2*time.Second {
		t.Errorf("the last stalled connection closed %v after the flood, want about %d read_timeouts", last, waves)
	}
	if code := gw.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestRequestPathFramingTimeoutsAndAdminToken: through raw sockets to the
// real binary, a request framed with both Transfer-Encoding and
// Content-Length is a 400 in the caller's shape and its connection closes;
// a body trickled a byte per 5 s is ended by read_timeout with a 408; the
// admin token guards /debug/routing and /admin/reload only.
func TestRequestPathFramingTimeoutsAndAdminToken(t *testing.T) {
	parallelTimed(t)
	p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(time.Millisecond)})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0, token: admin-canary-token}
limits: {read_timeout: 2s}
providers:
  p: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
`, p.URL()))

	body := chatRequestBody("m1", false)
	conn, err := net.Dial("tcp", gw.api)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !resp.Close || !strings.Contains(string(b), `"code":"invalid_framing"`) {
		t.Errorf("TE+CL: %d (close %v) %s; want a 400 invalid_framing that closes the connection", resp.StatusCode, resp.Close, b)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("TE+CL: the connection stayed open")
	}
	if n := p.Requests(); n != 0 {
		t.Errorf("the provider got %d requests, want 0", n)
	}

	// From before the dial: the server's read_timeout runs from its accept,
	// which a busy machine can put well before Dial returns.
	start := time.Now()
	trickle, err := net.Dial("tcp", gw.api)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	fmt.Fprintf(trickle, "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	go func() { // a byte per 5 s until the server hangs up
		for range 4 {
			time.Sleep(5 * time.Second)
			if _, err := trickle.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = trickle.SetReadDeadline(time.Now().Add(10 * time.Second))
	tbr := bufio.NewReader(trickle)
	resp, err = http.ReadResponse(tbr, nil)
	if err != nil {
		t.Fatalf("trickled body: %v after %v", err, time.Since(start))
	}
	b, _ = io.ReadAll(resp.Body)
	took := time.Since(start)
	if resp.StatusCode != 408 || !strings.HasPrefix(string(b), `{"type":"error","error":{"type":"invalid_request_error"`) {
		t.Errorf("trickled body: %d %s, want a 408 in Anthropic's shape", resp.StatusCode, b)
	}
	if _, err := tbr.ReadByte(); err == nil {
		t.Error("trickled body: the connection stayed open")
	}
	if took < 2*time.Second || took > 4*time.Second {
		t.Errorf("trickled body ended after %v, want read_timeout (2s)", took)
	}

	admin := func(method, path, auth string) int {
		req, _ := http.NewRequest(method, "http://"+gw.admin+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/metrics", "", 200}, {"GET", "/health", "", 200}, {"GET", "/readyz", "", 200},
		{"GET", "/debug/routing", "", 401}, {"GET", "/debug/routing", "Bearer nope", 401},
		{"GET", "/debug/routing", "Bearer admin-canary-token", 200},
		{"POST", "/admin/reload", "", 401}, {"POST", "/admin/reload", "Bearer admin-canary-token", 200},
	} {
		if got := admin(tt.method, tt.path, tt.auth); got != tt.want {
			t.Errorf("%s %s (Authorization %q) = %d, want %d", tt.method, tt.path, tt.auth, got, tt.want)
		}
	}
	if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if strings.Contains(gw.output(), "admin-canary-token") {
		t.Error("the admin token is in the log")
	}
}

// TestLogsJSONRequestLinesAndRateLimitedExportWarnings: with log.format
// json every line of stderr is a JSON object; the request line carries its
// fields; with the OTLP endpoint a closed port, many failed exports make one
// warning line, and the rest come counted in the next.
func TestLogsJSONRequestLinesAndRateLimitedExportWarnings(t *testing.T) {
	parallelTimed(t)
	p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(2 * time.Millisecond), Stream: sim.Pace{Chunks: 2, Interval: time.Millisecond}})
	closedPort := freeLoopbackPort(t)
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {format: json, level: debug}
providers:
  p: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
telemetry: {otlp_endpoint: "http://127.0.0.1:%d"}
`, p.URL(), closedPort), "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_EXPORTER_OTLP_TIMEOUT=500")

	const traceID = "0af7651916cd43dd8448eb211c80319c"
	r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", true), "traceparent", "00-"+traceID+"-b7ad6b7169203331-01")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	// Many failed exports over 2.5 s: one flush every 50 ms with spans.
	start := time.Now()
	for n := 0; time.Since(start) < 2500*time.Millisecond && n < 1000; n++ {
		postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false))
		time.Sleep(10 * time.Millisecond)
	}
	failedSpans := scrapeMetric(t, gw.admin, "firstbyte_export_failures_total")
	warningsWhileRunning := strings.Count(gw.stderr.String(), `"msg":"telemetry export failed"`)
	if code := gw.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}

	var requestLine map[string]any
	var warnings []map[string]any
	for i, line := range strings.Split(strings.TrimSpace(gw.stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stderr line %d is not JSON: %v\n%s", i+1, err, line)
		}
		switch m["msg"] {
		case "request":
			if m["trace_id"] == traceID {
				requestLine = m
			}
		case "telemetry export failed":
			warnings = append(warnings, m)
		}
	}
	if requestLine == nil {
		t.Fatalf("no request line with trace_id %s:\n%s", traceID, tailOf(gw.stderr.String(), 3000))
	}
	for k, want := range map[string]any{"level": "INFO", "endpoint": "/v1/chat/completions", "model": "m1", "target": "p",
		"attempts": 1.0, "selection": "cold", "status": 200.0} {
		if requestLine[k] != want {
			t.Errorf("request line %s = %v, want %v", k, requestLine[k], want)
		}
	}
	for _, k := range []string{"ttfb", "duration"} {
		if v, ok := requestLine[k].(float64); !ok || v <= 0 {
			t.Errorf("request line %s = %v, want a positive duration", k, requestLine[k])
		}
	}
	if failedSpans < 20 {
		t.Fatalf("only %v spans failed to export; the test did not make many failures", failedSpans)
	}
	if warningsWhileRunning != 1 {
		t.Errorf("%d export warnings in the first 2.5 s of failures, want 1", warningsWhileRunning)
	}
	if len(warnings) < 2 {
		t.Fatalf("%d export warnings in all; want the first and one counting the rest at shutdown", len(warnings))
	}
	counted := 0.0
	for _, w := range warnings {
		counted += w["spans_dropped"].(float64)
	}
	if last := warnings[len(warnings)-1]; last["count"].(float64) < 2 || counted < failedSpans {
		t.Errorf("warnings count %v spans in all (last line %v), want at least the %v the metric counted", counted, last, failedSpans)
	}
	t.Logf("%v spans failed to export; %d warning lines (%d while running)", failedSpans, len(warnings), warningsWhileRunning)
}

// TestSecondSignalHurriesTheDrain: during a drain a SIGHUP is ignored, and
// a second SIGTERM ends the open stream at once with an error event and
// exits 1, without waiting for the grace.
func TestSecondSignalHurriesTheDrain(t *testing.T) {
	parallelTimed(t)
	slow := startSimProvider(t, sim.Provider{Name: "slow", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: 100, Interval: 100 * time.Millisecond}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {grace: 30s}
providers:
  oa: {kind: openai, base_url: %q}
targets:
  - {virtual_key: oa, model_map: {m1: x}}
`, slow.URL()))
	req, _ := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", true)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body <- string(b)
	}()
	// The answer's headers came, which the gateway sends only with the
	// stream's first event: the stream is under way.
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog(t, gw.childProc, `msg="firstbyte draining"`, 1)
	if err := gw.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, gw.childProc, "reload ignored: the gateway is shutting down", 1)
	// What is checked is that nothing happens (the process does not exit
	// while the grace runs): no event marks that, so some wall time is
	// given for it to go wrong.
	time.Sleep(300 * time.Millisecond)
	if gw.exited() {
		t.Fatal("the process exited during the grace with a stream open")
	}
	start := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-body:
		if !strings.Contains(b, `"the gateway is shutting down`) {
			t.Errorf("stream after the second signal: %q, want an error event", tailOf(b, 300))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream was still open 5s after the second signal")
	}
	if code := gw.wait(t, 5*time.Second); code != 1 {
		t.Errorf("exit code after a second signal = %d, want 1", code)
	}
	t.Logf("exit %v after the second signal", time.Since(start).Round(time.Millisecond))
}
