package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The -callgrind run counts the instructions the gateway (or, with
// -callgrind-baseline, the bare proxy) executes for a fixed sequence of
// unary requests: the real binary under valgrind --tool=callgrind, 200
// warm-up requests, its counters zeroed, then -requests requests from
// -concurrency workers on a zero-delay upstream, then a dump. Unlike a
// wall-clock figure this is repeatable whatever else the machine runs
// (within about 2 %: collections and the scheduler's spinning vary a
// little), so it is how a commit that added work is found. The dump is
// kept for callgrind_annotate.
//
// Go's asynchronous preemption signals crash callgrind, so the process
// runs with GODEBUG=asyncpreemptoff=1; it is killed, not drained, at the
// end (callgrind's handling of SIGTERM crashes as well).

// callgrindPlan is what a -callgrind run sends.
type callgrindPlan struct {
	requests, concurrency int
	baseline              bool   // measure the bare proxy instead of the gateway
	out                   string // the dump is copied here
}

func runCallgrind(ctx context.Context, gatewayPath string, p callgrindPlan, stdout, stderr io.Writer) int {
	ir, err := measureCallgrind(ctx, gatewayPath, p)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	what := "gateway " + describeMachine(gatewayPath).gateway
	if p.baseline {
		what = "bare proxy (httputil.ReverseProxy)"
	}
	fmt.Fprintf(stdout, "%s: %d instructions for %d requests at concurrency %d: %d a request (callgrind; dump in %s)\n",
		what, ir, p.requests, p.concurrency, ir/int64(p.requests), p.out)
	return 0
}

func measureCallgrind(ctx context.Context, gatewayPath string, p callgrindPlan) (int64, error) {
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return 0, errors.New("valgrind not found (apt-get install valgrind)")
	}
	control, err := exec.LookPath("callgrind_control")
	if err != nil {
		return 0, err
	}
	up := newUpstream()
	upURL, stopUp, err := serveLoopback(up)
	if err != nil {
		return 0, err
	}
	defer stopUp()
	sink := &otlpSink{}
	sinkURL, stopSink, err := serveLoopback(sink)
	if err != nil {
		return 0, err
	}
	defer stopSink()
	dir, err := os.MkdirTemp("", "firstbyte-callgrind-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	apiAddr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	adminAddr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	args := []string{valgrind, "--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "cg.out")}
	url, ready := "http://"+apiAddr+"/v1/chat/completions", "http://"+adminAddr+"/readyz"
	if p.baseline {
		self, err := selfExecutable()
		if err != nil {
			return 0, err
		}
		args = append(args, self, "-serve-baseline", apiAddr, "-upstream", upURL)
		url, ready = "http://"+apiAddr+"/"+modelZero+"/v1/chat/completions", "http://"+apiAddr+"/"
	} else {
		cfg := filepath.Join(dir, "firstbyte.yaml")
		if err := os.WriteFile(cfg, gatewayConfig(apiAddr, adminAddr, upURL, sinkURL, false), 0o600); err != nil {
			return 0, err
		}
		args = append(args, gatewayPath, "serve", "-config", cfg)
	}
	start := func() (*child, error) {
		c, err := startChild("callgrind", args, append(childEnv(), "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off"))
		if err != nil {
			return nil, err
		}
		if err := waitReadyFor(ctx, c, ready, 2*time.Minute); err != nil {
			kill(c)
			return c, err
		}
		return c, nil
	}
	c, err := start()
	if err != nil && c != nil && !p.baseline && strings.Contains(c.out.String(), `unknown field "log"`) {
		// A gateway older than its request log: the config without it.
		cfg := args[len(args)-1]
		data, _ := os.ReadFile(cfg)
		if werr := os.WriteFile(cfg, []byte(strings.Replace(string(data), "log: {requests: false}\n", "", 1)), 0o600); werr != nil {
			return 0, werr
		}
		c, err = start()
	}
	if err != nil {
		return 0, err
	}
	defer kill(c)
	a := &arm{name: "callgrind", client: newLoadClient(), body: requestBody, url: func(string) string { return url }}
	if r := runUnary(ctx, a, modelZero, 1, 200, 2*time.Minute); r.errors > 0 {
		return 0, fmt.Errorf("warm-up: %d of 200 requests failed; first: %v", r.errors, r.first)
	}
	pid := strconv.Itoa(c.pid())
	if out, err := exec.Command(control, "--zero", pid).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("callgrind_control --zero: %v: %s", err, out)
	}
	served := up.served.Load()
	if r := runUnary(ctx, a, modelZero, p.concurrency, p.requests, 30*time.Minute); r.errors > 0 || len(r.lat) != p.requests {
		return 0, fmt.Errorf("%d of %d requests failed; first: %v", p.requests-len(r.lat), p.requests, r.first)
	}
	if n := up.served.Load() - served; n != int64(p.requests) {
		// Another process took the port while valgrind was starting.
		return 0, fmt.Errorf("the upstream saw %d of the %d requests: something else answered on %s", n, p.requests, url)
	}
	if out, err := exec.Command(control, "--dump=measured", pid).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("callgrind_control --dump: %v: %s", err, out)
	}
	return measuredDump(dir, p.out)
}

// kill ends c at once: callgrind cannot take a SIGTERM.
func kill(c *child) {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// measuredDump finds the dump callgrind_control asked for in dir, copies
// it to out and returns its instruction count.
func measuredDump(dir, out string) (int64, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "cg.out*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), "Trigger: dump measured") {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "summary: "); ok {
				ir, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, err
				}
				return ir, os.WriteFile(out, data, 0o644)
			}
		}
	}
	return 0, errors.New("callgrind wrote no dump of the measured requests")
}

// waitReadyFor polls url until it answers (the gateway's readiness when it
// is its admin /readyz), the child exits, or d passes: under valgrind a
// start takes many seconds.
func waitReadyFor(ctx context.Context, c *child, url string, d time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if err := c.exited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !strings.HasSuffix(url, "/readyz") || resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
	return fmt.Errorf("%s not ready at %s within %v; output:\n%s", c.name, url, d, c.out.String())
}
