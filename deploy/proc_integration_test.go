//go:build integration

package deploy

import (
	"bytes"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A real `firstbyte serve` for the chart's tests, on loopback only.

// loopbackFree is a 127.0.0.1 address that was free a moment ago.
func loopbackFree(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer // guarded by mu
	done chan struct{}
	code int // valid after done
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startServe runs `bin serve -config config` with env until the test
// ends (killed then if still running; its output logged if the test
// failed).
func startServe(t *testing.T, bin string, env []string, config string) *proc {
	t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "-config", config)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s serve: %v", bin, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("firstbyte serve output:\n%s", p.output())
		}
	})
	return p
}

func (p *proc) signalTerm(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("firstbyte serve did not exit within %v", d)
		return -1
	}
}

var probeClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// getStatus is the status of GET url, or 0 when nothing answered.
func getStatus(url string) int {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// pollStatus polls url every 20 ms until it answers want, failing the
// test after d or when the process has exited.
func pollStatus(t *testing.T, p *proc, url string, want int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := getStatus(url)
		if got == want {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("GET %s: %d; firstbyte serve exited (%d) before it answered %d", url, got, p.code, want)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d after %v, want %d", url, got, d, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
