package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveBaseline is the hidden -serve-baseline mode: a bare
// httputil.ReverseProxy in front of upstream, the least any Go proxy adds.
// It runs in its own process, as the gateway does, so both are measured
// alike (own GOMAXPROCS, own GC, own RSS, a real loopback hop each way).
//
// Its one addition is full duplex on the client connection. Without it a
// streamed answer through ReverseProxy is sometimes cut (golang/go#40747):
// writing the response headers makes the HTTP/1 server drain and close
// the inbound body, the transport then reads that body once more to check
// its length, gets "invalid Read on closed Body" and tears down the
// upstream connection mid-stream. On two busy cores 1 stream in 10 failed
// so. Full duplex leaves the body alone and costs nothing measurable. (The
// gateway reads the whole body before it sends upstream, so it never
// races.)
func serveBaseline(addr, upstreamURL string) error {
	target, err := url.Parse(upstreamURL)
	if err != nil {
		return err
	}
	// The gateway's upstream transport settings (upstream.NewTransport),
	// written out so this binary stays a bare proxy.
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	if err := upProto.configure(tr); err != nil {
		return err
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tr,
		ErrorLog:  log.New(os.Stderr, "baseline: ", 0),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// child is a subprocess under test.
type child struct {
	name string
	cmd  *exec.Cmd
	out  *tailBuffer
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, set before done closes
}

// startChild starts a subprocess that cannot outlive us: on Linux the
// kernel kills it if this process dies for any reason (childAttr), and
// stop kills it on every normal exit.
func startChild(name string, args []string, env []string) (*child, error) {
	c := &child{name: name, out: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	c.cmd = exec.Command(args[0], args[1:]...)
	c.cmd.Env = env
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = childAttr()
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the child to drain (SIGTERM) and kills it if it has not gone
// within a second: the measurements are over, nothing is waiting for it.
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// exited reports, without blocking, an early exit with the child's output.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited early (%v); output:\n%s", c.name, c.err, c.out.String())
	default:
		return nil
	}
}

// waitReady polls url until it answers wantStatus (0: any status), the
// child exits, or the deadline passes.
func waitReady(ctx context.Context, c *child, url string, wantStatus int) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := c.exited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if wantStatus == 0 || resp.StatusCode == wantStatus {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready at %s within 15s; output:\n%s", c.name, url, c.out.String())
}

// freeAddr returns a loopback address with a port free right now. The
// gateway's config needs concrete ports; the window in which another
// process could take the port is a few milliseconds on a test machine.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// gatewayConfig is the gateway's config: one provider and one
// least-latency target per scenario, each at its own upstream path, and
// telemetry fully on (spans, aggregator, metrics, OTLP export to the sink;
// sinkURL "" turns export off), and a log line per request only when
// logRequests (the baseline logs nothing either).
func gatewayConfig(listen, admin, upstreamURL, sinkURL string, logRequests bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nadmin: {listen: %s}\nlog: {requests: %t}\nproviders:\n", listen, admin, logRequests)
	models := []string{modelZero, modelSlow, modelStream, modelHold, modelTrickle}
	for _, m := range models {
		fmt.Fprintf(&b, "  %s: {kind: openai, base_url: %q, models: [%s]%s}\n", m, upstreamURL+"/"+m+"/v1", m, upProto.providerSettings())
	}
	b.WriteString("strategy: {mode: least-latency}\ntargets:\n")
	for _, m := range models {
		fmt.Fprintf(&b, "  - {virtual_key: %s}\n", m)
	}
	fmt.Fprintf(&b, "telemetry:\n  service_name: firstbyte-loadtest\n  otlp_endpoint: %q\n", sinkURL)
	return []byte(b.String())
}

// childEnv is our environment without OTEL_* variables, which would change
// the gateway's exporter or sampler behind the config's back.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// writeConfig writes the gateway config to a new temporary directory and
// returns the file and a func removing the directory.
func writeConfig(data []byte) (string, func(), error) {
	dir, err := os.MkdirTemp("", "firstbyte-loadtest-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "firstbyte.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// procStatus reads VmRSS and VmHWM (peak RSS) of pid, in bytes.
func procStatus(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmRSS":
			rss = parseKB(v)
		case "VmHWM":
			hwm = parseKB(v)
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS in /proc/" + strconv.Itoa(pid) + "/status")
	}
	return rss, hwm, nil
}

func parseKB(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n << 10
}

// resetPeakRSS resets VmHWM to the current RSS (Linux clear_refs "5"), so a
// scenario's peak is its own and not an earlier one's.
func resetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// usage is what the scheduler says a process has done: CPU time, and how
// many times its threads were put on a CPU. Every wake-up of a parked
// thread (a goroutine handed to another P, a timer, the span batcher) is
// one, so switches per request show work split across threads.
type usage struct {
	cpu      time.Duration
	switches int64
}

func (u usage) sub(v usage) usage { return usage{u.cpu - v.cpu, u.switches - v.switches} }

// procUsage sums every thread's /proc/PID/task/TID/schedstat: nanoseconds
// on CPU (not /proc/PID/stat's 10 ms ticks) and timeslices run. It
// undercounts threads that exited in between, which Go's rarely do.
func procUsage(pid int) (usage, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return usage{}, err
	}
	var u usage
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited while we listed
		}
		f := strings.Fields(string(data))
		if len(f) < 3 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		slices, _ := strconv.ParseInt(f[2], 10, 64)
		u.cpu += time.Duration(ns)
		u.switches += slices
	}
	return u, nil
}

// tailBuffer keeps the last max bytes written: a child's output, shown only
// when it fails.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// watchPeakRSS samples pid's RSS every 20 ms (pid 0: nothing to sample)
// until the returned function is called, which returns the largest.
func watchPeakRSS(pid int) (stop func() int64) {
	done, sampled := make(chan struct{}), make(chan int64, 1)
	go func() {
		peak := int64(0)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if pid != 0 {
				if rss, _, err := procStatus(pid); err == nil {
					peak = max(peak, rss)
				}
			}
			select {
			case <-done:
				sampled <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		return <-sampled
	}
}
