//go:build integration

package main

// firstbyte_circuit_open and firstbyte_skips_total{reason="queue_full"}
// scraped from the real binary's /metrics.

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// metricSeries is the value of the one series of name whose labels are
// exactly labels (`k="v",...` in the exposition's order), and whether it
// is exposed at all.
func metricSeries(t *testing.T, admin, name, labels string) (float64, bool) {
	t.Helper()
	text := httpGetText(t, "http://"+admin+"/metrics", "text/plain")
	want := name + "{" + labels + "} "
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), want); ok {
			f, err := strconv.ParseFloat(strings.Fields(v)[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f, true
		}
	}
	return 0, false
}

func wantSeries(t *testing.T, admin, name, labels string, want float64, when string) {
	t.Helper()
	got, ok := metricSeries(t, admin, name, labels)
	if !ok || got != want {
		t.Errorf("%s: %s{%s} = %v (exposed %v), want %v", when, name, labels, got, ok, want)
	}
}

// TestCircuitOpenGauge: firstbyte_circuit_open{target} is 0 while the
// circuit is closed, 1 from the moment it opens (and while half-open,
// waiting for its probe), and 0 again once the probe's success closes it.
func TestCircuitOpenGauge(t *testing.T) {
	parallelTimed(t)
	flaky := newSwitchable(t)
	flaky.failing.Store(true)
	steady := startSimProvider(t, sim.Provider{Name: "steady", TTFB: sim.Fixed(time.Millisecond)})
	const cooldown = 700 * time.Millisecond
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
strategy: {mode: fallback}
providers:
  flaky:  {kind: openai, base_url: %q, circuit_breaker: {failures: 1, cooldown: 700ms}}
  steady: {kind: openai, base_url: %q}
targets:
  - {virtual_key: flaky,  model_map: {m1: up}}
  - {virtual_key: steady, model_map: {m1: up}}
`, flaky.url, steady.URL()))
	const gauge = "firstbyte_circuit_open"
	wantSeries(t, gw.admin, gauge, `target="flaky"`, 0, "at start")
	wantSeries(t, gw.admin, gauge, `target="steady"`, 0, "at start")

	r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false))
	opened := time.Now()
	if r.status != 200 || r.target() != "steady" {
		t.Fatalf("failover: %d from %q, want 200 from steady", r.status, r.target())
	}
	wantSeries(t, gw.admin, gauge, `target="flaky"`, 1, "circuit open")
	wantSeries(t, gw.admin, gauge, `target="steady"`, 0, "steady never failed")
	if time.Since(opened) >= cooldown {
		t.Fatalf("the cooldown (%v) was over before the scrape: the machine is too slow for this test", cooldown)
	}

	flaky.failing.Store(false)
	time.Sleep(time.Until(opened.Add(cooldown + 100*time.Millisecond)))
	wantSeries(t, gw.admin, gauge, `target="flaky"`, 1, "half-open, before its probe")
	r = postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false))
	if r.status != 200 || r.target() != "flaky" {
		t.Fatalf("after the cooldown: %d from %q, want 200 from flaky (the probe)", r.status, r.target())
	}
	wantSeries(t, gw.admin, gauge, `target="flaky"`, 0, "closed by the probe")
	if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestQueueFullSkipCounted: with max_concurrency 1 and queue 0, a request
// arriving while the target's only slot is taken skips it (queue_full) and
// is served by the next target; firstbyte_skips_total counts that skip
// once, by target and reason, and the request line names it.
func TestQueueFullSkipCounted(t *testing.T) {
	t.Parallel()
	busy := newSwitchable(t)
	busy.holding.Store(true)
	steady := startSimProvider(t, sim.Provider{Name: "steady", TTFB: sim.Fixed(time.Millisecond)})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
strategy: {mode: fallback}
providers:
  busy:   {kind: openai, base_url: %q, max_concurrency: 1, queue: 0}
  steady: {kind: openai, base_url: %q}
targets:
  - {virtual_key: busy,   model_map: {m1: up}}
  - {virtual_key: steady, model_map: {m1: up}}
`, busy.url, steady.URL()))
	const skips = "firstbyte_skips_total"
	if v, ok := metricSeries(t, gw.admin, skips, `reason="queue_full",target="busy"`); ok && v != 0 {
		t.Fatalf("%s{busy, queue_full} = %v before any request", skips, v)
	}

	first := make(chan apiResponse, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", false)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := apiClient.Do(req)
		if err != nil {
			first <- apiResponse{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		first <- apiResponse{status: resp.StatusCode, header: resp.Header}
	}()
	select {
	case <-busy.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request never reached busy")
	}
	r := postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m1", false))
	if r.status != 200 || r.target() != "steady" || r.header.Get("X-Firstbyte-Skipped") != "busy" || r.header.Get("X-Firstbyte-Attempts") != "1" {
		t.Fatalf("while busy's slot is taken: %d from %q, skipped %q, %s attempts; want 200 from steady, busy skipped, 1 attempt",
			r.status, r.target(), r.header.Get("X-Firstbyte-Skipped"), r.header.Get("X-Firstbyte-Attempts"))
	}
	// The metrics are fed from the spans, off the request path: poll.
	pollUntil(t, 5*time.Second, skips+`{busy, queue_full} = 1`, func() bool {
		v, _ := metricSeries(t, gw.admin, skips, `reason="queue_full",target="busy"`)
		return v == 1
	})
	busy.unhold()
	select {
	case a := <-first:
		if a.status != 200 || a.target() != "busy" {
			t.Errorf("the first request: %d from %q, want 200 from busy (%s)", a.status, a.target(), a.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first request did not end after busy was released")
	}
	// A second skip would be counted from the first request's spans, which
	// end after the second's: wait until the metrics have taken both
	// requests, then the count must still be 1.
	pollUntil(t, 5*time.Second, "firstbyte_requests_total = 2", func() bool {
		return scrapeMetric(t, gw.admin, "firstbyte_requests_total") == 2
	})
	wantSeries(t, gw.admin, skips, `reason="queue_full",target="busy"`, 1, "after both requests")
	if v, _ := metricSeries(t, gw.admin, skips, `reason="queue_full",target="steady"`); v != 0 {
		t.Errorf("%s{steady, queue_full} = %v, want 0", skips, v)
	}
	if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if !strings.Contains(gw.stderr.String(), "skipped=busy:queue_full") {
		t.Errorf("no request line with skipped=busy:queue_full:\n%s", gw.stderr.String())
	}
}
