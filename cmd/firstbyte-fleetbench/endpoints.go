package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// What the collector fans out to: real gateways (`firstbyte serve` with
// ingest on) or sinks that decode the OTLP/HTTP body and count its spans,
// the least an endpoint can do. Everything listens on 127.0.0.1.

const ingestToken = "fleetbench-ingest-token"

// endpoint is one ingest endpoint the collector posts to.
type endpoint interface {
	addr() string          // host:port of its POST /v1/traces
	spans() (int64, error) // spans it has taken so far
	stop()
}

// sink is an in-process OTLP/HTTP endpoint.
type sink struct {
	srv   *http.Server
	ln    net.Listener
	count atomic.Int64
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }() // ends at stop
	return s, nil
}

func (s *sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.count.Add(int64(req.Traces().SpanCount()))
	w.Header().Set("Content-Type", "application/x-protobuf")
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	_, _ = w.Write(resp)
}

func (s *sink) addr() string          { return s.ln.Addr().String() }
func (s *sink) spans() (int64, error) { return s.count.Load(), nil }
func (s *sink) stop()                 { _ = s.srv.Close() }

// gateway is a `firstbyte serve` whose config routes to the bench's keys
// (so every span is a sample it takes) and takes peers' spans on ingest.
type gateway struct {
	proc  *child
	admin string
}

func startGateway(bin string, keys int, dir string) (*gateway, error) {
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "listen: %s\nadmin: {listen: %s}\nlog: {level: warn, requests: false}\nproviders:\n", api, admin)
	for i := range keys {
		fmt.Fprintf(&cfg, "  t%d: {kind: openai, base_url: \"http://127.0.0.1:1/v1\", api_key: bench-not-a-secret, models: [%s]}\n", i, benchModel)
	}
	cfg.WriteString("targets:\n")
	for i := range keys {
		fmt.Fprintf(&cfg, "  - {virtual_key: t%d}\n", i)
	}
	fmt.Fprintf(&cfg, "telemetry: {ingest: {enabled: true, token: %s}}\n", ingestToken)
	path := filepath.Join(dir, "gateway-"+strings.ReplaceAll(admin, ":", "-")+".yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	p, err := startChild("gateway "+admin, []string{bin, "serve", "-config", path}, nil)
	if err != nil {
		return nil, err
	}
	g := &gateway{proc: p, admin: admin}
	if err := waitHTTP(p, "http://"+admin+"/readyz"); err != nil {
		p.stop()
		return nil, err
	}
	return g, nil
}

func (g *gateway) addr() string { return g.admin }
func (g *gateway) stop()        { g.proc.stop() }

var peerSpansRE = regexp.MustCompile(`(?m)^firstbyte_spans_consumed_total\{source="peer"\} (\S+)$`)

// spans is what the gateway counted as its peers' spans consumed.
func (g *gateway) spans() (int64, error) {
	resp, err := http.Get("http://" + g.admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	m := peerSpansRE.FindSubmatch(body)
	if m == nil {
		return 0, nil // none yet
	}
	f, err := strconv.ParseFloat(string(m[1]), 64)
	return int64(f), err
}

// collectorConfig is a fan-out config to every endpoint, as the chart
// renders one (deploy/helm/firstbyte/templates/otelcol-configmap.yaml),
// with firstbyte_ratelimit when rate > 0.
func collectorConfig(recv string, eps []endpoint, rate float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "receivers: {otlp: {protocols: {http: {endpoint: %q}}}}\n", recv)
	b.WriteString("processors:\n  memory_limiter: {check_interval: 1s, limit_mib: 400, spike_limit_mib: 100}\n")
	b.WriteString("  batch: {timeout: 200ms, send_batch_size: 512}\n")
	processors := "[memory_limiter, batch]"
	if rate > 0 {
		fmt.Fprintf(&b, "  firstbyte_ratelimit: {spans_per_second: %g}\n", rate)
		processors = "[memory_limiter, firstbyte_ratelimit, batch]"
	}
	b.WriteString("exporters:\n")
	var names []string
	for i, e := range eps {
		name := fmt.Sprintf("otlp_http/%d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "  %s:\n    traces_endpoint: http://%s/v1/traces\n    encoding: proto\n    compression: gzip\n", name, e.addr())
		fmt.Fprintf(&b, "    headers: {Authorization: \"Bearer %s\"}\n    timeout: 5s\n    retry_on_failure: {max_elapsed_time: 60s}\n", ingestToken)
	}
	fmt.Fprintf(&b, "service:\n  pipelines:\n    traces: {receivers: [otlp], processors: %s, exporters: [%s]}\n", processors, strings.Join(names, ", "))
	b.WriteString("  telemetry: {logs: {level: warn}, metrics: {level: none}}\n")
	return b.String()
}

// child is a process of the bench's, killed with it (childAttr).
type child struct {
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer // its output, for the error when it fails
	done chan struct{}
}

func startChild(name string, argv, env []string) (*child, error) {
	c := &child{name: name, done: make(chan struct{})}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.SysProcAttr = childAttr()
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// cpu is the process's CPU time so far (user + system, every thread,
// /proc/PID/stat in clock ticks of 10 ms).
func (c *child) cpu() (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("/proc/PID/stat: too few fields")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick, nil
}

// waitHTTP waits until url answers 200, or the process exits, or 20 s.
func waitHTTP(c *child, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited before %s answered:\n%s", c.name, url, c.out.String())
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200 within 20 s", c.name, url)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitTCP waits until something accepts connections at addr.
func waitTCP(c *child, addr string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited before listening on %s:\n%s", c.name, addr, c.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: nothing listening on %s within 20 s", c.name, addr)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
