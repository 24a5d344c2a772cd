//go:build integration

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// TestGracefulDrain: SIGTERM while a slow stream is in flight. /readyz turns
// 503 (or the admin listener is gone), the API takes no new connection, the
// stream in flight runs to its end, and the process exits 0.
func TestGracefulDrain(t *testing.T) {
	const chunks = 20
	slow := startSimProvider(t, sim.Provider{Name: "slow-stream", TTFB: sim.Fixed(10 * time.Millisecond),
		Stream: sim.Pace{Chunks: chunks, Interval: 75 * time.Millisecond}})
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  slow: {kind: openai, base_url: %q, api_key: test-key}
targets:
  - {virtual_key: slow, model_map: {m1: slow-model}}
`, slow.URL()))

	req, err := http.NewRequest(http.MethodPost, "http://"+gw.api+"/v1/chat/completions", strings.NewReader(chatRequestBody("m1", true)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status = %d, want 200", resp.StatusCode)
	}
	type event struct {
		data string
		err  error
	}
	events := make(chan event, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- event{data: data}
			}
		}
		if err := sc.Err(); err != nil {
			events <- event{err: err}
		}
	}()
	select {
	case e := <-events:
		if e.err != nil {
			t.Fatalf("stream: %v", e.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no first stream event within 5s")
	}

	start := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Draining: not ready, and the API listener closed.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	pollUntil(t, 5*time.Second, "/readyz 503 or the admin listener closed", func() bool {
		r, err := probe.Get("http://" + gw.admin + "/readyz")
		if err != nil {
			return true
		}
		r.Body.Close()
		return r.StatusCode == http.StatusServiceUnavailable
	})
	pollUntil(t, 5*time.Second, "the API listener closed", func() bool {
		c, err := net.DialTimeout("tcp", gw.api, 200*time.Millisecond)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if gw.exited() {
		t.Fatalf("gateway exited %v after SIGTERM with a stream still in flight", time.Since(start))
	}

	// The stream in flight runs to its end.
	var data []string
	for e := range events {
		if e.err != nil {
			t.Fatalf("stream broken during the drain after %d events: %v", len(data), e.err)
		}
		data = append(data, e.data)
	}
	if len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Errorf("stream did not end with [DONE]: %q", data)
	}
	content := 0
	for _, d := range data {
		if strings.Contains(d, `"error"`) {
			t.Errorf("stream carries an error event during the drain: %s", d)
		}
		if strings.Contains(d, `"content":"`) && !strings.Contains(d, `"content":""`) {
			content++
		}
	}
	if content != chunks {
		t.Errorf("stream had %d content chunks, want %d", content, chunks)
	}
	if code := gw.wait(t, 10*time.Second); code != 0 {
		t.Errorf("gateway exit code after the drain = %d, want 0", code)
	}
	t.Logf("drain: stream finished and the process exited %v after SIGTERM", time.Since(start))
}
