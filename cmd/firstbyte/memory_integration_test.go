//go:build integration

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// peakRSS is the process's peak resident set since the last resetPeakRSS,
// in MiB (VmHWM).
func peakRSS(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// resetPeakRSS starts a new peak (writing 5 to clear_refs resets VmHWM).
func resetPeakRSS(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
}

// zeros is an endless reader of '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestHugeUnaryAnswersStayBounded: four concurrent 200 MB unary answers,
// each to its own fresh gateway so one case's heap does not count in the
// next. With a Content-Length over limits.max_response the gateway refuses
// before reading a byte; chunked, it reads up to the limit, so memory is
// bounded by the concurrent answers times the limit: a lower max_response
// bounds it lower. Every client gets a clear 502 naming the cause.
func TestHugeUnaryAnswersStayBounded(t *testing.T) {
	const answer = 200 << 20
	for _, tc := range []struct {
		name        string
		chunked     bool
		maxResponse string // limits.max_response; "" the default, 64MiB
		maxMiB      float64
	}{
		{"with Content-Length", false, "", 150},
		{"chunked, max_response 16MiB", true, "16MiB", 150},
		{"chunked, the default 64MiB", true, "", 4*64 + 64}, // the limit's worth each, and the runtime's slack
	} {
		t.Run(tc.name, func(t *testing.T) {
			huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				if !tc.chunked {
					w.Header().Set("Content-Length", strconv.Itoa(answer))
				}
				_, _ = io.CopyN(w, zeros{}, answer)
			}))
			defer huge.Close()
			limits := ""
			if tc.maxResponse != "" {
				limits = "limits: {max_response: " + tc.maxResponse + "}"
			}
			gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
%s
providers:
  huge: {kind: openai, base_url: %q, api_key: k, circuit_breaker: {failures: 1000}}
targets:
  - {virtual_key: huge, model_map: {m: m}}
`, limits, huge.URL+"/v1"))
			resetPeakRSS(t, gw.cmd.Process.Pid)
			var wg sync.WaitGroup
			results := make([]apiResponse, 4)
			for i := range results {
				wg.Go(func() { results[i] = postAPI(t, gw.api, "/v1/chat/completions", chatRequestBody("m", false)) })
			}
			wg.Wait()
			peak := peakRSS(t, gw.cmd.Process.Pid)
			t.Logf("four concurrent 200 MB answers (%s): peak RSS %.0f MiB; answers %d %d %d %d",
				tc.name, peak, results[0].status, results[1].status, results[2].status, results[3].status)
			for _, r := range results {
				if r.status != http.StatusBadGateway || !strings.Contains(r.body, "response_too_large") {
					t.Errorf("answer %d %.200s, want a 502 naming response_too_large", r.status, r.body)
				}
			}
			if peak > tc.maxMiB {
				t.Errorf("peak RSS %.0f MiB, want under %.0f", peak, tc.maxMiB)
			}
		})
	}
}

// TestDeepIngestBodiesStayBounded: eight concurrent JSON bodies nested
// 595,000 deep on the trace ingest are refused without decoding them, in
// bounded memory.
func TestDeepIngestBodiesStayBounded(t *testing.T) {
	gw := startGatewayProc(t, "gateway", `
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
log: {requests: false}
telemetry: {ingest: {enabled: true}}
providers:
  p: {kind: openai, base_url: "http://127.0.0.1:9/v1"}
targets:
  - {virtual_key: p, model_map: {m: m}}
`)
	const depth = 595_000
	body := []byte(strings.Repeat(`{"a":[`, depth) + strings.Repeat(`]}`, depth))
	resetPeakRSS(t, gw.cmd.Process.Pid)
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			resp, err := http.Post("http://"+gw.admin+"/v1/traces", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Errorf("POST: %v", err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	peak := peakRSS(t, gw.cmd.Process.Pid)
	t.Logf("eight concurrent %d-deep JSON bodies (%.1f MiB each): peak RSS %.0f MiB; statuses %v", depth, float64(len(body))/(1<<20), peak, statuses)
	for _, s := range statuses {
		if s != http.StatusBadRequest && s != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 400 (too deep) or 503 (busy, retry)", s)
		}
	}
	if peak > 200 {
		t.Errorf("peak RSS %.0f MiB, want under 200", peak)
	}
}
