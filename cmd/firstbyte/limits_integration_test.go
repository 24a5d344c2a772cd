//go:build integration

package main

// limits.idle_timeout, the header deadline and limits.max_connections on
// both listeners of the real binary, through raw loopback sockets.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// limitsGateway runs the binary with limits (a YAML flow mapping) and a
// target that is never asked: these tests talk to /v1/models and the admin
// endpoints only.
func limitsGateway(t *testing.T, limits string) *gatewayProc {
	t.Helper()
	return startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
limits: %s
log: {requests: false}
providers:
  p: {kind: openai, base_url: "http://127.0.0.1:1/v1"}
targets:
  - {virtual_key: p, model_map: {m1: pm}}
`, limits))
}

// keptAlive is a raw connection that has had one answer and stays open.
type keptAlive struct {
	net.Conn
	br *bufio.Reader
}

// getOn sends GET path on c (HTTP/1.1, keep-alive) and reads the whole
// answer within wait; ok is false when none came in time.
func getOn(t *testing.T, c *keptAlive, path string, wait time.Duration) (status int, ok bool) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: gw\r\n\r\n", path); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, false
		}
		t.Fatalf("GET %s: %v", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		t.Fatalf("GET %s answered Connection: close; want a kept-alive connection", path)
	}
	return resp.StatusCode, true
}

func dialKeptAlive(t *testing.T, addr string) *keptAlive {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keptAlive{Conn: c, br: bufio.NewReader(c)}
}

// closedWithin waits up to limit for the server to close c and returns how
// long that took, or limit and false if it is still open.
func closedWithin(c *keptAlive, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	_, err := c.br.ReadByte()
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return took, false
	}
	return took, err != nil // a byte arriving is not a close
}

// TestIdleTimeoutOnBothListeners: a kept-alive connection that sends no
// next request is closed after limits.idle_timeout, on the client API
// listener and on the admin one alike; read_timeout (3s) is not what
// closes it.
func TestIdleTimeoutOnBothListeners(t *testing.T) {
	parallelTimed(t)
	const idle = 400 * time.Millisecond
	gw := limitsGateway(t, "{idle_timeout: 400ms, read_timeout: 3s}")
	for _, l := range []struct{ name, addr, path string }{
		{"api", gw.api, "/v1/models"},
		{"admin", gw.admin, "/health"},
	} {
		t.Run(l.name, func(t *testing.T) {
			c := dialKeptAlive(t, l.addr)
			if status, ok := getOn(t, c, l.path, 2*time.Second); !ok || status != 200 {
				t.Fatalf("GET %s: %d (answered %v), want 200", l.path, status, ok)
			}
			// A second request within the idle timeout is served on the same
			// connection: it was kept alive.
			time.Sleep(idle / 4)
			if status, ok := getOn(t, c, l.path, 2*time.Second); !ok || status != 200 {
				t.Fatalf("second GET %s on the kept-alive connection: %d (answered %v), want 200", l.path, status, ok)
			}
			took, closed := closedWithin(c, 2500*time.Millisecond)
			if !closed {
				t.Fatalf("%s: an idle kept-alive connection still open after %v; idle_timeout is %v", l.name, took, idle)
			}
			if took < idle-100*time.Millisecond || took > idle+900*time.Millisecond {
				t.Errorf("%s: idle connection closed after %v, want about idle_timeout (%v)", l.name, took.Round(time.Millisecond), idle)
			}
			t.Logf("%s: idle connection closed after %v", l.name, took.Round(time.Millisecond))
		})
	}
}

// TestHeaderDeadlineClosesSlowHeaders: a client that sends its request
// headers a line every 100 ms, never finishing them, is not kept alive by
// trickling: its connection is closed, without an answer, once the header
// deadline (min(read_timeout, 10s) = 1s here) has passed, on both
// listeners.
func TestHeaderDeadlineClosesSlowHeaders(t *testing.T) {
	parallelTimed(t)
	const deadline = time.Second
	gw := limitsGateway(t, "{read_timeout: 1s, idle_timeout: 10s}")
	for _, l := range []struct{ name, addr string }{{"api", gw.api}, {"admin", gw.admin}} {
		t.Run(l.name, func(t *testing.T) {
			c := dialKeptAlive(t, l.addr)
			start := time.Now()
			if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: gw\r\n"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", i); err != nil {
							return
						}
					}
				}
			}()
			_ = c.SetReadDeadline(start.Add(4 * time.Second))
			got, err := io.ReadAll(c.br)
			took := time.Since(start)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("%s: a connection trickling its headers still open after %v; the header deadline is %v", l.name, took.Round(time.Millisecond), deadline)
			}
			if strings.HasPrefix(string(got), "HTTP/1.1 200") {
				t.Errorf("%s: headers that never ended were answered: %q", l.name, got)
			}
			if took < deadline-100*time.Millisecond || took > deadline+1500*time.Millisecond {
				t.Errorf("%s: closed after %v, want about the header deadline (%v)", l.name, took.Round(time.Millisecond), deadline)
			}
			t.Logf("%s: trickled headers closed after %v (err %v, %d bytes answered)", l.name, took.Round(time.Millisecond), err, len(got))
		})
	}
}

// TestMaxConnectionsPerListener: with limits.max_connections 2, a third
// connection to a listener is not served while two are open (it waits in
// the backlog), and is served as soon as one of the two closes; this holds
// on the admin listener too, and each listener has its own slots.
func TestMaxConnectionsPerListener(t *testing.T) {
	t.Parallel()
	gw := limitsGateway(t, "{max_connections: 2, idle_timeout: 10s, read_timeout: 10s}")
	// The harness's clients keep connections alive in their pools: close
	// them, so only this test's connections hold slots.
	http.DefaultClient.CloseIdleConnections()
	apiClient.CloseIdleConnections()

	for _, l := range []struct{ name, addr, path, other, otherPath string }{
		{"admin", gw.admin, "/health", gw.api, "/v1/models"},
		{"api", gw.api, "/v1/models", gw.admin, "/health"},
	} {
		t.Run(l.name, func(t *testing.T) {
			// Two connections take both slots (the server may still be
			// closing the pool's connection: each gets a moment).
			first, second := dialKeptAlive(t, l.addr), dialKeptAlive(t, l.addr)
			for i, c := range []*keptAlive{first, second} {
				if status, ok := getOn(t, c, l.path, 2*time.Second); !ok || status != 200 {
					t.Fatalf("connection %d: %d (answered %v), want 200", i+1, status, ok)
				}
			}
			third := dialKeptAlive(t, l.addr) // the kernel accepts it into the backlog
			if status, ok := getOn(t, third, l.path, 500*time.Millisecond); ok {
				t.Fatalf("a third connection with max_connections 2 was served (%d) while two were open", status)
			}
			// The other listener's slots are its own.
			other := dialKeptAlive(t, l.other)
			if status, ok := getOn(t, other, l.otherPath, 2*time.Second); !ok || status != 200 {
				t.Errorf("the other listener while %s is full: %d (answered %v), want 200", l.name, status, ok)
			}
			other.Close()
			// A slot frees: the waiting request is answered.
			start := time.Now()
			first.Close()
			_ = third.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, err := http.ReadResponse(third.br, nil)
			if err != nil {
				t.Fatalf("the waiting connection after one closed: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("the waiting connection got %d, want 200", resp.StatusCode)
			}
			t.Logf("%s: the third connection was served %v after the first closed", l.name, time.Since(start).Round(time.Millisecond))
			second.Close()
			third.Close()
		})
	}
	if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}
