//go:build integration

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// soakDuration is how long TestChaosSoak drives traffic:
// FIRSTBYTE_SOAK_DURATION (make soak sets minutes), else a short run for
// make test.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("FIRSTBYTE_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("FIRSTBYTE_SOAK_DURATION: %v", err)
		}
		return d
	}
	return 8 * time.Second
}

// TestChaosSoak drives mixed unary and streaming traffic through the real
// binary at providers that fail in every way the failure model knows:
// random 5xx, 429 with Retry-After, connections reset, stalls past the
// first-byte timeout, streams cut after their first chunks. Every request
// must end with exactly one well-formed answer in its API's shape (a 200
// with a whole completion or a stream ending in [DONE] or an error event; or
// an error object); afterwards the gateway's goroutines and heap return to
// where they were.
//
//	16 clients ──> firstbyte ──> good      (clean)
//	                          ├─> flaky     (25% 502/503/500)
//	                          ├─> limited   (20% 429 Retry-After: 1)
//	                          ├─> staller   (TTFB 600 ms median: past the 250 ms first-byte timeout)
//	                          └─> cutter    (every answer cut: unary reset, stream after 2 chunks)
func TestChaosSoak(t *testing.T) {
	// Not parallel: it holds 16 clients on two cores for its duration and
	// counts the answers served within the providers' timeouts.
	dur := soakDuration(t)
	pace := sim.Pace{Chunks: 6, Interval: 5 * time.Millisecond}
	providers := []sim.Provider{
		{Name: "good", TTFB: sim.Dist{Median: 30 * time.Millisecond, Spread: 0.3}, Stream: pace},
		{Name: "flaky", TTFB: sim.Dist{Median: 15 * time.Millisecond, Spread: 0.3}, Stream: pace, Errors: sim.ErrorRate{Rate: 0.25, Status: 503}},
		{Name: "limited", TTFB: sim.Dist{Median: 20 * time.Millisecond, Spread: 0.3}, Stream: pace, Errors: sim.ErrorRate{Rate: 0.2, Status: 429}},
		{Name: "staller", TTFB: sim.Dist{Median: 600 * time.Millisecond, Spread: 0.5}, Stream: pace},
		{Name: "cutter", TTFB: sim.Dist{Median: 10 * time.Millisecond, Spread: 0.3}, Stream: pace, CutAfter: 2},
	}
	var cfg strings.Builder
	cfg.WriteString("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nlog: {requests: false}\nproviders:\n")
	for _, p := range providers {
		r := startSimProvider(t, p)
		fmt.Fprintf(&cfg, "  %s: {kind: openai, base_url: %q, api_key: soak-key, timeout: {first_byte: 250ms, total: 10s}, circuit_breaker: {failures: 5, cooldown: 1s}}\n", p.Name, r.URL())
	}
	cfg.WriteString("targets:\n")
	for _, p := range providers {
		fmt.Fprintf(&cfg, "  - {virtual_key: %s, model_map: {soak: %s-model}, retry: {attempts: 1}}\n", p.Name, p.Name)
	}
	gw := startGatewayProc(t, "gateway", cfg.String())

	// Baseline once the gateway has served the same concurrency for a
	// moment: its upstream connection pools are as large as they will get
	// (each idle upstream connection keeps two goroutines until its idle
	// timeout; that is a pool, not a leak).
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	warm, stopWarm := context.WithTimeout(context.Background(), 2*time.Second)
	var warmWG sync.WaitGroup
	for w := range 16 {
		warmWG.Go(func() {
			for i := 0; warm.Err() == nil; i++ {
				soakRequest(client, gw.api, (w+i)%2 == 0)
			}
		})
	}
	warmWG.Wait()
	stopWarm()
	client.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	baseGoroutines := scrapeMetric(t, gw.admin, "go_goroutines")
	baseHeap := scrapeMetric(t, gw.admin, "go_memstats_heap_inuse_bytes")

	var (
		sent, bad, ok200, errors atomic.Int64
		mu                       sync.Mutex
		firstBad                 []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				res := soakRequest(client, gw.api, (w+i)%2 == 0)
				sent.Add(1)
				switch {
				case res.problem != "":
					bad.Add(1)
					mu.Lock()
					if len(firstBad) < 5 {
						firstBad = append(firstBad, res.problem)
					}
					mu.Unlock()
				case res.status == http.StatusOK:
					ok200.Add(1)
				default:
					errors.Add(1)
				}
			}
		})
	}
	wg.Wait()
	client.CloseIdleConnections()
	t.Logf("chaos soak %v: %d requests, %d answered 200, %d clean error answers, %d malformed", dur, sent.Load(), ok200.Load(), errors.Load(), bad.Load())
	if bad.Load() != 0 {
		t.Errorf("%d answers were not well-formed, e.g. %q", bad.Load(), firstBad)
	}
	if sent.Load() < 100 {
		t.Errorf("only %d requests in %v", sent.Load(), dur)
	}
	if share := float64(ok200.Load()) / float64(sent.Load()); share < 0.99 {
		t.Errorf("%.2f%% answered 200; with a clean provider among five and failover, want >= 99%%", 100*share)
	}

	// Nothing outlives its request: once the clients have closed their
	// connections, no goroutine is still in the request path (a handler, an
	// attempt, a relay) or serving a client connection. What remains is the
	// process's own (telemetry, listeners) and the upstream connection pool:
	// idle keep-alive connections, two goroutines each until their idle
	// timeout, which go_goroutines counts too (so its figure is reported,
	// not compared). The Go runtime prints every goroutine's stack on
	// SIGQUIT; that ends the test's gateway.
	time.Sleep(time.Second)
	goroutines := scrapeMetric(t, gw.admin, "go_goroutines")
	// The heap floor lets up to 32 MiB of garbage wait for the next
	// collection; once nothing has been in flight for 5 s the gateway
	// collects and gives it back (memtrim.go). A leak stays.
	var heap float64
	idleFrom := time.Now()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		heap = scrapeMetric(t, gw.admin, "go_memstats_heap_inuse_bytes")
		if heap <= baseHeap+32<<20 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("goroutines %v -> %v (upstream pool included), heap in use %.1f MiB -> %.1f MiB (%.1f s after the clients stopped)",
		baseGoroutines, goroutines, baseHeap/(1<<20), heap/(1<<20), time.Since(idleFrom).Seconds()+1)
	if heap > baseHeap+32<<20 {
		t.Errorf("heap in use grew from %.1f to %.1f MiB", baseHeap/(1<<20), heap/(1<<20))
	}
	// The scrapes' own keep-alive connections to the admin listener go too.
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	before := len(gw.stderr.String())
	_ = gw.cmd.Process.Signal(syscall.SIGQUIT)
	gw.wait(t, 10*time.Second)
	dump := gw.stderr.String()[before:]
	var stuck []string
	total := 0
	for _, g := range strings.Split(dump, "\n\ngoroutine ") {
		if !strings.Contains(g, "[") || !strings.Contains(g, "\n") {
			continue
		}
		total++
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "firstbyte/router.(*Gateway)") ||
			strings.Contains(g, "firstbyte/router.(*attemptRun)") {
			stuck = append(stuck, tailOf(g, 600))
		}
	}
	if total < 5 {
		t.Fatalf("no goroutine dump after SIGQUIT (%d blocks):\n%s", total, tailOf(dump, 2000))
	}
	if len(stuck) > 0 {
		t.Errorf("%d of %d goroutines still in the request path after the soak, e.g.:\n%s", len(stuck), total, stuck[0])
	}
}

// soakResult is one request as the client saw it; problem says what was
// malformed ("" when the answer was well-formed, whatever its status).
type soakResult struct {
	status  int
	problem string
}

func soakRequest(client *http.Client, api string, stream bool) soakResult {
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/v1/chat/completions", strings.NewReader(chatRequestBody("soak", stream)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return soakResult{problem: "transport: " + err.Error()}
	}
	defer resp.Body.Close()
	res := soakResult{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
			res.problem = fmt.Sprintf("status %d with a body that is not an OpenAI error: %.120s", resp.StatusCode, b)
		}
		return res
	}
	if !stream {
		var c struct {
			Choices []json.RawMessage `json:"choices"`
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || json.Unmarshal(b, &c) != nil || len(c.Choices) == 0 {
			res.problem = fmt.Sprintf("200 unary without a whole completion (%v): %.120s", err, b)
		}
		return res
	}
	// A stream: data events of JSON, ending with [DONE] or an error event.
	sc := bufio.NewScanner(resp.Body)
	last := ""
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			return soakResult{status: 200, problem: "stream event is not JSON: " + data}
		}
		last = data
	}
	if err := sc.Err(); err != nil {
		return soakResult{status: 200, problem: "stream read: " + err.Error()}
	}
	if last != "[DONE]" && !strings.Contains(last, `"error"`) {
		return soakResult{status: 200, problem: "stream ended without [DONE] or an error event: " + last}
	}
	return res
}
