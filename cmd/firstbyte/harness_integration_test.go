//go:build integration

package main

// The harness of the integration tests: the real firstbyte binary
// (FIRSTBYTE_BIN) and the real collector (OTELCOL_BIN) as child processes,
// simulated providers in this process, an OTLP/HTTP sink that decodes what
// the collector sends on, and small clients for the gateway's API and admin
// endpoints. Everything listens on loopback; every wait is bounded; every
// process is killed in t.Cleanup.
//
//	client ──> firstbyte (child) ──> sim providers (in-process)
//	               │ OTLP
//	               v
//	        firstbyte-otelcol (child) ──> spanSink (httptest)

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The parallel tests come in three kinds, so that the Makefile's
// `go test -parallel 8` overlaps what only waits on child processes
// without letting a test that loads the machine skew one that measures
// time. The tests that measure latency (routing, least-latency's p50s,
// the chaos soak, the host pools, the drain under load, the fd limit) are
// not parallel at all: go test runs them first, one at a time, and only
// then the parallel ones.
//
//   - t.Parallel() alone: asserts nothing on elapsed time or latency, and
//     keeps no core busy for long;
//   - parallelTimed: asserts on elapsed times or latencies (an idle
//     timeout, a cooldown, a p50); it runs beside timed and plain tests,
//     never beside a heavy one;
//   - parallelHeavy: keeps a core busy for seconds (hundreds of MB through
//     the gateway); it runs beside plain and heavy tests, never beside a
//     timed one.
//
// A test waiting at the gate holds one of go test's parallel slots; a heavy
// test waits until no timed test runs (no writer's preference: a waiting
// heavy test does not hold back the timed ones), so at most the few heavy
// tests ever wait while timed ones run, and they start once the timed ones
// are done.
func parallelTimed(t *testing.T) {
	t.Helper()
	t.Parallel()
	loadGate.enter(false)
	t.Cleanup(func() { loadGate.leave(false) })
}

func parallelHeavy(t *testing.T) {
	t.Helper()
	t.Parallel()
	loadGate.enter(true)
	t.Cleanup(func() { loadGate.leave(true) })
}

var loadGate = newGate()

type gate struct {
	mu           sync.Mutex
	cond         *sync.Cond
	timed, heavy int // tests of each kind running
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gate) enter(heavy bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for (heavy && g.timed > 0) || (!heavy && g.heavy > 0) {
		g.cond.Wait()
	}
	if heavy {
		g.heavy++
	} else {
		g.timed++
	}
}

func (g *gate) leave(heavy bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if heavy {
		g.heavy--
	} else {
		g.timed--
	}
	g.cond.Broadcast()
}

// startupWait bounds how long a child process may take to start listening.
const startupWait = 15 * time.Second

// requireBinary returns the path in env var name, failing the test (never
// skipping it) when the variable is unset or names no executable file.
func requireBinary(t *testing.T, name string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		t.Fatalf("%s is not set: run `make test-integration` (it builds bin/firstbyte and bin/firstbyte-otelcol and sets FIRSTBYTE_BIN and OTELCOL_BIN)", name)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatalf("%s=%s: %v (run `make build otelcol`)", name, p, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file", name, p)
	}
	return p
}

// childEnv is this process's environment without any OTEL_* or FIRSTBYTE_*
// variable (so a developer's shell cannot change what a test sees), plus
// extra ("KEY=value").
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "FIRSTBYTE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// childProc is a running child process.
type childProc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{} // closed once the process has exited and its output is read
	exitCode       int           // valid after done
}

// startChildProc starts bin with args and env, and kills it (if still running)
// when the test ends, logging its output if the test failed.
func startChildProc(t *testing.T, name, bin string, env []string, args ...string) *childProc {
	t.Helper()
	p := &childProc{name: name, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s (%s): %v", name, bin, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.exitCode = 0
		if err != nil {
			p.exitCode = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				p.exitCode = ee.ExitCode()
			}
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- %s stdout ---\n%s", name, tailOf(p.stdout.String(), 4000))
			t.Logf("--- %s stderr ---\n%s", name, tailOf(p.stderr.String(), 4000))
		}
	})
	return p
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func (p *childProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the process at once (SIGKILL) and waits for it.
func (p *childProc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// stop sends sig and waits up to wait for the process to exit, returning
// its exit code; the test fails if it does not exit in time. The test is
// done with the process, so first the shared clients close their idle
// connections, as clients that go away do: a draining gateway keeps a
// connection idle since before the signal open until its grace ends (a
// request may be on its way on it), so one left in a pool would hold the
// drain for the whole grace.
func (p *childProc) stop(t *testing.T, sig syscall.Signal, wait time.Duration) int {
	t.Helper()
	http.DefaultClient.CloseIdleConnections()
	apiClient.CloseIdleConnections()
	if !p.exited() {
		_ = p.cmd.Process.Signal(sig)
	}
	select {
	case <-p.done:
		return p.exitCode
	case <-time.After(wait):
		t.Fatalf("%s did not exit within %v of %v", p.name, wait, sig)
		return -1
	}
}

// wait waits up to d for the process to exit on its own.
func (p *childProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.exitCode
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v", p.name, d)
		return -1
	}
}

// gatewayProc is a running `firstbyte serve`.
type gatewayProc struct {
	*childProc
	api, admin string // host:port
	instanceID string
	configPath string
}

// servingLine is the start-up line, in text or in JSON (log.format).
var (
	servingLine     = regexp.MustCompile(`msg="firstbyte serving" api=(\S+) admin=(\S+) .*instance=(\S+)`)
	servingLineJSON = regexp.MustCompile(`"msg":"firstbyte serving","api":"([^"]+)","admin":"([^"]+)".*"instance":"([^"]+)"`)
)

// startGatewayProc writes cfg to a file and runs `firstbyte serve -config` on
// it with env, waiting until /readyz answers 200. Listen on 127.0.0.1:0 in
// cfg to get free ports: the addresses are read from the start-up log line.
func startGatewayProc(t *testing.T, name, cfg string, env ...string) *gatewayProc {
	t.Helper()
	bin := requireBinary(t, "FIRSTBYTE_BIN")
	path := writeGatewayConfig(t, name, cfg)
	return waitGatewayServing(t, startChildProc(t, name, bin, childEnv(env...), "serve", "-config", path), path)
}

// writeGatewayConfig writes cfg to a temporary file and returns its path.
func writeGatewayConfig(t *testing.T, name, cfg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitGatewayServing waits for p, a `firstbyte serve -config path` however
// started, to log its start-up line and answer /readyz 200.
func waitGatewayServing(t *testing.T, p *childProc, path string) *gatewayProc {
	t.Helper()
	name := p.name
	g := &gatewayProc{childProc: p, configPath: path}
	deadline := time.Now().Add(startupWait)
	for {
		out := p.stderr.String()
		m := servingLine.FindStringSubmatch(out)
		if m == nil {
			m = servingLineJSON.FindStringSubmatch(out)
		}
		if m != nil {
			g.api, g.admin, g.instanceID = m[1], m[2], m[3]
			break
		}
		if p.exited() {
			t.Fatalf("%s exited with %d before serving:\n%s", name, p.exitCode, p.stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no \"firstbyte serving\" line within %v:\n%s", name, startupWait, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	pollUntil(t, startupWait, name+" /readyz 200", func() bool {
		resp, err := http.Get("http://" + g.admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return g
}

// output is everything the process wrote so far.
func (p *childProc) output() string { return p.stdout.String() + p.stderr.String() }

// pollUntil polls cond every 20 ms until it holds, failing the test after d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeLoopbackPort returns a loopback port that was free a moment ago, for the
// processes whose port must be known before they start (the collector's
// receivers, an instance that restarts on the same admin address). It comes
// from below the kernel's ephemeral range, so that no listener on :0 and no
// outgoing connection (of this test, its children or any test running
// alongside) can take it between now and the child's bind; the ports handed
// out are remembered, so two tests of this binary never get the same one.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	lo := ephemeralLow()
	for range 1000 {
		if lo <= reservedBase+1000 {
			break // an unusual ephemeral range: fall back to asking the kernel
		}
		port := reservedBase + rand.IntN(lo-reservedBase)
		if portsGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", loopbackAddr(port))
		if err != nil {
			continue
		}
		ln.Close()
		portsGiven[port] = true
		return port
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// reservedBase is the lowest port freeLoopbackPort hands out.
const reservedBase = 20000

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

func loopbackAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// waitListening waits until something accepts TCP connections on addr.
func waitListening(t *testing.T, p *childProc, addr string) {
	t.Helper()
	pollUntil(t, startupWait, p.name+" listening on "+addr, func() bool {
		if p.exited() {
			t.Fatalf("%s exited with %d:\n%s", p.name, p.exitCode, p.output())
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// startSimProvider starts a simulated provider in this process.
func startSimProvider(t *testing.T, p sim.Provider) *sim.Running {
	t.Helper()
	r, err := sim.StartProvider(p, sim.Options{})
	if err != nil {
		t.Fatalf("sim.StartProvider(%s): %v", p.Name, err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// otelcolProc is a running firstbyte-otelcol with its OTLP receivers.
type otelcolProc struct {
	*childProc
	grpcAddr, httpAddr string
}

// collectorConfigToSink is a collector config: OTLP in on both protocols ->
// batch (short timeout) -> otlp_http to sinkURL, with the collector's own
// telemetry quiet, as collector/otelcol/config/*.yaml keep it.
func collectorConfigToSink(grpcEndpoint, httpEndpoint, sinkURL string) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
      http: {endpoint: %q}
processors:
  batch:
    timeout: 50ms
exporters:
  otlp_http:
    traces_endpoint: %q
    encoding: proto
    compression: gzip
    timeout: 5s
    retry_on_failure: {enabled: false}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp_http]
  telemetry:
    logs: {level: warn}
    metrics: {level: none}
`, grpcEndpoint, httpEndpoint, sinkURL+"/v1/traces")
}

// startCollector runs the collector with its OTLP receivers on grpcAddr and
// httpAddr (passed in FIRSTBYTE_OTELCOL_GRPC_ENDPOINT and
// FIRSTBYTE_OTELCOL_HTTP_ENDPOINT, which every shipped config reads) on
// config (a YAML text written to a temp file, or a "file:" URI) with env,
// and waits until both receivers accept connections.
func startCollector(t *testing.T, grpcAddr, httpAddr, config string, env ...string) *otelcolProc {
	t.Helper()
	bin := requireBinary(t, "OTELCOL_BIN")
	uri := config
	if !strings.HasPrefix(config, "file:") {
		path := filepath.Join(t.TempDir(), "otelcol.yaml")
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		uri = "file:" + path
	}
	env = append([]string{
		"FIRSTBYTE_OTELCOL_GRPC_ENDPOINT=" + grpcAddr,
		"FIRSTBYTE_OTELCOL_HTTP_ENDPOINT=" + httpAddr,
	}, env...)
	c := &otelcolProc{grpcAddr: grpcAddr, httpAddr: httpAddr}
	c.childProc = startChildProc(t, "otelcol", bin, childEnv(env...), "--config", uri)
	waitListening(t, c.childProc, httpAddr)
	waitListening(t, c.childProc, grpcAddr)
	return c
}

// startCollectorToSink starts a sink and a collector, on free ports, that
// forwards every span it receives to it.
func startCollectorToSink(t *testing.T) (*otelcolProc, *spanSink) {
	t.Helper()
	sink := newSpanSink(t)
	cfg := collectorConfigToSink("${env:FIRSTBYTE_OTELCOL_GRPC_ENDPOINT}", "${env:FIRSTBYTE_OTELCOL_HTTP_ENDPOINT}", sink.url)
	return startCollector(t, loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t)), cfg), sink
}

// spanSink is an OTLP/HTTP trace receiver that keeps everything it is sent.
type spanSink struct {
	url string

	mu       sync.Mutex // guards the fields below
	traces   []ptrace.Traces
	requests int
	bad      []string // why a request could not be decoded
}

func newSpanSink(t *testing.T) *spanSink {
	t.Helper()
	s := &spanSink{}
	srv := httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, b := range s.bad {
			t.Errorf("span sink: %s", b)
		}
	})
	return s
}

func (s *spanSink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, format string, args ...any) {
		s.mu.Lock()
		s.bad = append(s.bad, fmt.Sprintf(format, args...))
		s.mu.Unlock()
		http.Error(w, "bad request", status)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		fail(http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			fail(http.StatusBadRequest, "gzip: %v", err)
			return
		}
		defer gz.Close()
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		fail(http.StatusBadRequest, "read body: %v", err)
		return
	}
	req := ptraceotlp.NewExportRequest()
	switch ct := r.Header.Get("Content-Type"); ct {
	case "application/x-protobuf":
		err = req.UnmarshalProto(data)
	case "application/json":
		err = req.UnmarshalJSON(data)
	default:
		fail(http.StatusUnsupportedMediaType, "content type %q", ct)
		return
	}
	if err != nil {
		fail(http.StatusBadRequest, "unmarshal: %v", err)
		return
	}
	s.mu.Lock()
	s.traces = append(s.traces, req.Traces())
	s.requests++
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// sinkSpan is one received span with its resource and scope.
type sinkSpan struct {
	res   pcommon.Resource
	scope pcommon.InstrumentationScope
	span  ptrace.Span
}

func (s sinkSpan) attr(k string) (pcommon.Value, bool) { return s.span.Attributes().Get(k) }

func (s sinkSpan) str(k string) string {
	if v, ok := s.attr(k); ok {
		return v.AsString()
	}
	return ""
}

func (s sinkSpan) resStr(k string) string {
	if v, ok := s.res.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// spans returns every span received so far whose resource carries
// service.instance.id instance ("" for all).
func (s *spanSink) spans(instance string) []sinkSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkSpan
	for _, td := range s.traces {
		for _, rs := range td.ResourceSpans().All() {
			if instance != "" {
				if v, ok := rs.Resource().Attributes().Get("service.instance.id"); !ok || v.AsString() != instance {
					continue
				}
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out = append(out, sinkSpan{res: rs.Resource(), scope: ss.Scope(), span: sp})
				}
			}
		}
	}
	return out
}

func countKind(spans []sinkSpan, kind ptrace.SpanKind) int {
	n := 0
	for _, s := range spans {
		if s.span.Kind() == kind {
			n++
		}
	}
	return n
}

// apiResponse is what a client got from the gateway.
type apiResponse struct {
	status  int
	header  http.Header
	body    string
	elapsed time.Duration
}

func (r apiResponse) target() string    { return r.header.Get("X-Firstbyte-Target") }
func (r apiResponse) selection() string { return r.header.Get("X-Firstbyte-Selection") }

var apiClient = &http.Client{Timeout: 30 * time.Second}

// postAPI sends body to the gateway's path with headers ("Key", "value", ...)
// and reads the whole answer.
func postAPI(t *testing.T, api, path, body string, headers ...string) apiResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+api+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	return apiResponse{status: resp.StatusCode, header: resp.Header, body: string(b), elapsed: time.Since(start)}
}

// chatRequestBody is an OpenAI chat request for model.
func chatRequestBody(model string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"hello"}]}`, model, stream)
}

// routingState is admin /debug/routing.
type routingState struct {
	Mode   string `json:"mode"`
	Models []struct {
		Model   string `json:"model"`
		Targets []struct {
			Target     string  `json:"target"`
			P50Seconds float64 `json:"p50_seconds"`
			Samples    int     `json:"samples"`
			Rank       int     `json:"rank"`
			Leader     bool    `json:"leader"`
		} `json:"targets"`
	} `json:"models"`
}

type targetState struct {
	p50     float64
	samples int
	rank    int
	leader  bool
}

func getRouting(t *testing.T, admin string) (routingState, string) {
	t.Helper()
	raw := httpGetText(t, "http://"+admin+"/debug/routing", "")
	var rs routingState
	if err := json.Unmarshal([]byte(raw), &rs); err != nil {
		t.Fatalf("/debug/routing: %v\n%s", err, raw)
	}
	return rs, raw
}

// modelRouting is one model's targets from /debug/routing, by target.
func modelRouting(t *testing.T, admin, model string) map[string]targetState {
	t.Helper()
	rs, raw := getRouting(t, admin)
	for _, m := range rs.Models {
		if m.Model != model {
			continue
		}
		out := map[string]targetState{}
		for _, tg := range m.Targets {
			out[tg.Target] = targetState{p50: tg.P50Seconds, samples: tg.Samples, rank: tg.Rank, leader: tg.Leader}
		}
		return out
	}
	t.Fatalf("/debug/routing has no model %q:\n%s", model, raw)
	return nil
}

func leaderOf(ts map[string]targetState) string {
	for name, s := range ts {
		if s.leader {
			return name
		}
	}
	return ""
}

func totalSamples(ts map[string]targetState) int {
	n := 0
	for _, s := range ts {
		n += s.samples
	}
	return n
}

// httpGetText GETs url with an optional Accept header and returns the body,
// failing on anything but 200.
func httpGetText(t *testing.T, url, accept string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200:\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}

// scrapeMetric sums the samples of metric name in the Prometheus text
// exposition whose labels include every "k=\"v\"" in labels.
func scrapeMetric(t *testing.T, admin, name string, labels ...string) float64 {
	t.Helper()
	text := httpGetText(t, "http://"+admin+"/metrics", "text/plain")
	sum, found := 0.0, false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		metric, lbls, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(lbls, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return 0
	}
	return sum
}
