//go:build integration

package main

// What the real binary logs: the start-up summary, circuit transitions,
// ingest rejections and the request line's skipped field (log.format json,
// every field checked, never a prompt or a key), and what log.requests:
// false and log.level: warn leave out.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// switchable is an OpenAI-compatible provider in this process: it answers
// a chat completion, or a 503 while failing is set, and while holding is set
// it keeps each request waiting until release (or the request's end).
type switchable struct {
	url      string
	failing  atomic.Bool
	holding  atomic.Bool
	hits     atomic.Int64
	entered  chan struct{} // a token per request that reached the handler
	release  chan struct{}
	released sync.Once
}

const switchableAnswer = `{"id":"c1","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

func newSwitchable(t *testing.T) *switchable {
	t.Helper()
	s := &switchable{entered: make(chan struct{}, 64), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case s.entered <- struct{}{}:
		default:
		}
		if s.holding.Load() {
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if s.failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"down for a test","type":"server_error","param":null,"code":null}}`)
			return
		}
		_, _ = io.WriteString(w, switchableAnswer)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(s.unhold) // before Close: a held request would keep Close waiting
	s.url = srv.URL + "/v1"
	return s
}

func (s *switchable) unhold() { s.released.Do(func() { close(s.release) }) }

// jsonLogLines parses every line of a JSON log, failing on any that is not
// a JSON object.
func jsonLogLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %d is not JSON: %v\n%s", i+1, err, line)
		}
		out = append(out, m)
	}
	return out
}

// logLinesWith are the lines whose fields include every one of want.
func logLinesWith(lines []map[string]any, want map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		match := true
		for k, v := range want {
			if l[k] != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, l)
		}
	}
	return out
}

// wantLogLine fails unless exactly one line has every field of want.
func wantLogLine(t *testing.T, lines []map[string]any, log string, want map[string]any) map[string]any {
	t.Helper()
	got := logLinesWith(lines, want)
	if len(got) != 1 {
		t.Errorf("%d log lines with %v, want 1:\n%s", len(got), want, tailOf(log, 4000))
		return nil
	}
	return got[0]
}

const logPrompt = "PROMPT-canary-logs-4242"

func promptBody(model string) string {
	return fmt.Sprintf(`{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":"%s please"}]}`, model, logPrompt)
}

// TestLogsJSONSummaryCircuitIngestAndSkipped: with log.format json the
// start-up summary names every provider (kind, redacted URL) and every
// model with its targets; a circuit's transitions are warnings with
// provider, from and to; a refused ingest request is a warning with its
// reason; a request that skipped a target says so in its line's skipped
// field; no line holds the prompt or a key.
func TestLogsJSONSummaryCircuitIngestAndSkipped(t *testing.T) {
	parallelTimed(t)
	flaky := newSwitchable(t)
	flaky.failing.Store(true)
	steady := startSimProvider(t, sim.Provider{Name: "steady", TTFB: sim.Fixed(time.Millisecond)})
	const cooldown = time.Second
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {format: json}
strategy: {mode: fallback}
providers:
  flaky:  {kind: openai, base_url: %q, api_key: sk-flaky-canary-77, circuit_breaker: {failures: 1, cooldown: 1s}}
  steady: {kind: anthropic, base_url: %q, api_key: sk-steady-canary-88}
targets:
  - {virtual_key: flaky,  model_map: {m1: flaky-up}}
  - {virtual_key: steady, model_map: {m1: steady-up, m2: steady-two}}
telemetry:
  ingest: {enabled: true, token: ingest-canary-99}
`, flaky.url, steady.URL()))

	// 1. flaky fails: its circuit opens, steady serves.
	r := postAPI(t, gw.api, "/v1/chat/completions", promptBody("m1"))
	opened := time.Now()
	if r.status != 200 || r.target() != "steady" || r.header.Get("X-Firstbyte-Attempts") != "2" {
		t.Fatalf("first request: %d from %q after %s attempts, want 200 from steady after 2: %s", r.status, r.target(), r.header.Get("X-Firstbyte-Attempts"), r.body)
	}
	waitLog(t, gw.childProc, `"msg":"circuit open"`, 1)
	// 2. Naming flaky first while it is open: it is skipped.
	r = postAPI(t, gw.api, "/v1/messages", promptBody("m1"), "X-Firstbyte-Provider-Order", "flaky")
	if time.Since(opened) >= cooldown {
		t.Fatalf("the cooldown (%v) was over before the second request: the machine is too slow for this test", cooldown)
	}
	if r.status != 200 || r.header.Get("X-Firstbyte-Skipped") != "flaky" {
		t.Fatalf("second request: %d, skipped %q; want 200 with flaky skipped: %s", r.status, r.header.Get("X-Firstbyte-Skipped"), r.body)
	}
	// 3. flaky recovers; after the cooldown one request probes it and its
	// success closes the circuit.
	flaky.failing.Store(false)
	time.Sleep(time.Until(opened.Add(cooldown + 100*time.Millisecond)))
	r = postAPI(t, gw.api, "/v1/chat/completions", promptBody("m1"))
	if r.status != 200 || r.target() != "flaky" {
		t.Fatalf("after the cooldown: %d from %q, want 200 from flaky (the probe)", r.status, r.target())
	}
	waitLog(t, gw.childProc, `"msg":"circuit closed"`, 1)
	// 4. An ingest request with a wrong token is refused and logged.
	req, _ := http.NewRequest(http.MethodPost, "http://"+gw.admin+"/v1/traces", strings.NewReader(logPrompt))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer not-the-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("ingest with a wrong token: %d, want 401", resp.StatusCode)
	}
	waitLog(t, gw.childProc, `"msg":"ingest rejected spans"`, 1)

	if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	log := gw.stderr.String()
	lines := jsonLogLines(t, log)

	// The start-up summary.
	wantLogLine(t, lines, log, map[string]any{"level": "INFO", "msg": "firstbyte serving", "api": gw.api, "admin": gw.admin, "mode": "fallback", "models": 2.0, "ingest": "on (token set)"})
	wantLogLine(t, lines, log, map[string]any{"level": "INFO", "msg": "provider", "name": "flaky", "kind": "openai", "base_url": flaky.url})
	wantLogLine(t, lines, log, map[string]any{"level": "INFO", "msg": "provider", "name": "steady", "kind": "anthropic", "base_url": steady.URL()})
	wantLogLine(t, lines, log, map[string]any{"level": "INFO", "msg": "model", "model": "m1", "targets": "flaky→flaky-up, steady→steady-up"})
	wantLogLine(t, lines, log, map[string]any{"level": "INFO", "msg": "model", "model": "m2", "targets": "steady→steady-two"})

	// The circuit's three transitions, in order.
	var transitions []string
	for _, l := range lines {
		if msg, _ := l["msg"].(string); strings.HasPrefix(msg, "circuit ") {
			transitions = append(transitions, fmt.Sprintf("%v %v %v->%v %v", l["level"], msg, l["from"], l["to"], l["provider"]))
		}
	}
	wantTransitions := []string{
		"WARN circuit open closed->open flaky",
		"WARN circuit half_open open->half_open flaky",
		"WARN circuit closed half_open->closed flaky",
	}
	if strings.Join(transitions, "\n") != strings.Join(wantTransitions, "\n") {
		t.Errorf("circuit lines:\n%s\nwant:\n%s", strings.Join(transitions, "\n"), strings.Join(wantTransitions, "\n"))
	}

	// The ingest rejection.
	wantLogLine(t, lines, log, map[string]any{"level": "WARN", "msg": "ingest rejected spans", "count": 1.0, "spans": 1.0, "last_error": "unauthorized"})

	// The request lines: the one that skipped flaky says so; the others
	// skipped nothing and have no skipped field.
	requests := logLinesWith(lines, map[string]any{"msg": "request"})
	if len(requests) != 3 {
		t.Fatalf("%d request lines, want 3:\n%s", len(requests), log)
	}
	if _, ok := requests[0]["skipped"]; ok || requests[0]["attempts"] != 2.0 || requests[0]["target"] != "steady" {
		t.Errorf("first request line %v: want attempts 2, target steady, no skipped field", requests[0])
	}
	if requests[1]["skipped"] != "flaky:circuit_open" || requests[1]["selection"] != "manual" || requests[1]["target"] != "steady" ||
		requests[1]["endpoint"] != "/v1/messages" || requests[1]["attempts"] != 1.0 {
		t.Errorf("second request line %v: want skipped flaky:circuit_open, selection manual, target steady, 1 attempt on /v1/messages", requests[1])
	}
	if _, ok := requests[2]["skipped"]; ok || requests[2]["target"] != "flaky" {
		t.Errorf("third request line %v: want target flaky, no skipped field", requests[2])
	}

	for _, secret := range []string{logPrompt, "sk-flaky-canary-77", "sk-steady-canary-88", "ingest-canary-99", "not-the-token"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// TestLogRequestsOffAndLevelWarn: log.requests: false writes no request
// line (the rest of the log as usual); log.level: warn writes warnings
// (a circuit opening) and no info line at all, the start-up summary
// included.
func TestLogRequestsOffAndLevelWarn(t *testing.T) {
	t.Parallel()
	t.Run("requests off", func(t *testing.T) {
		p := startSimProvider(t, sim.Provider{Name: "p", TTFB: sim.Fixed(time.Millisecond)})
		gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
providers:
  p: {kind: openai, base_url: %q}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
`, p.URL()))
		for _, tt := range []struct {
			path, body string
			want       int
		}{
			{"/v1/chat/completions", promptBody("m1"), 200},
			{"/v1/messages", promptBody("m1"), 200},
			{"/v1/chat/completions", promptBody("nope"), 404},
			{"/v1/nowhere", "{}", 404},
		} {
			if r := postAPI(t, gw.api, tt.path, tt.body); r.status != tt.want {
				t.Errorf("POST %s: %d, want %d", tt.path, r.status, tt.want)
			}
		}
		if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		log := gw.stderr.String()
		if strings.Contains(log, "msg=request ") {
			t.Errorf("log.requests: false, yet request lines were written:\n%s", log)
		}
		for _, want := range []string{`msg="firstbyte serving"`, "msg=settings", "log_requests=false", `msg="firstbyte stopped"`} {
			if !strings.Contains(log, want) {
				t.Errorf("the log lacks %q:\n%s", want, log)
			}
		}
	})

	t.Run("level warn", func(t *testing.T) {
		flaky := newSwitchable(t)
		flaky.failing.Store(true)
		api, admin := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
		path := writeGatewayConfig(t, "gateway", fmt.Sprintf(`
listen: %s
admin: {listen: %s}
log: {level: warn}
providers:
  flaky: {kind: openai, base_url: %q, circuit_breaker: {failures: 1, cooldown: 1m}}
targets:
  - {virtual_key: flaky, model_map: {m1: up}}
`, api, admin, flaky.url))
		p := startChildProc(t, "gateway", requireBinary(t, "FIRSTBYTE_BIN"), childEnv(), "serve", "-config", path)
		// No "firstbyte serving" line to wait for at this level: wait for /readyz.
		pollUntil(t, startupWait, "/readyz 200", func() bool {
			if p.exited() {
				t.Fatalf("exited with %d:\n%s", p.exitCode, p.output())
			}
			resp, err := http.Get("http://" + admin + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if r := postAPI(t, api, "/v1/chat/completions", promptBody("m1")); r.status != http.StatusServiceUnavailable {
			t.Errorf("the only target failing: %d, want 503", r.status)
		}
		waitLog(t, p, `msg="circuit open"`, 1)
		if code := p.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		log := p.stderr.String()
		for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
			if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
				t.Errorf("log.level: warn wrote a line below warn: %s", line)
			}
		}
		if !strings.Contains(log, `level=WARN msg="circuit open" provider=flaky from=closed to=open`) {
			t.Errorf("the circuit warning is missing:\n%s", log)
		}
		if strings.Contains(log, logPrompt) {
			t.Errorf("the log holds the prompt:\n%s", log)
		}
	})
}
