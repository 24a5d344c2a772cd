package router_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/router"
)

// barrierTTFB is the simulated TTFB that a barrierSleep holds until every
// request of a test has arrived, so they are all in flight at once.
const barrierTTFB = 7 * time.Millisecond

// barrierSleep is a sim Sleep that holds every TTFB wait until n of them
// have begun (or ctx ends); every other delay passes at once.
func barrierSleep(n int) func(context.Context, time.Duration) error {
	var arrived atomic.Int64
	all := make(chan struct{})
	return func(ctx context.Context, d time.Duration) error {
		if d != barrierTTFB {
			return ctx.Err()
		}
		if arrived.Add(1) == int64(n) {
			close(all)
		}
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// startProtoSim starts a simulated provider speaking prot whose first n
// requests are all in flight together before any answers.
func startProtoSim(t *testing.T, prot sim.Protocols, n int) *sim.Running {
	t.Helper()
	up, err := sim.StartProvider(sim.Provider{
		Name:   "up",
		TTFB:   sim.Dist{Median: barrierTTFB},
		Stream: sim.Pace{Chunks: 5},
	}, sim.Options{Sleep: barrierSleep(n), Protocols: prot})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up
}

// simCA is a generated certificate and the path of its PEM, for a
// provider's tls.ca_file.
func simCA(t *testing.T) (sim.Protocols, string) {
	t.Helper()
	cert, pem, err := sim.NewCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return sim.Protocols{TLS: &cert}, path
}

// TestHTTP2Upstreams: over HTTP/2, whether over TLS (trusted through
// tls.ca_file) or h2c (http2: prior_knowledge), concurrent unary and
// streaming requests reach the upstream as HTTP/2 streams sharing a
// connection or two; with http2: off they are HTTP/1.1, one connection
// each.
func TestHTTP2Upstreams(t *testing.T) {
	t.Parallel()
	const n = 16
	tlsProt, caFile := simCA(t)
	tests := []struct {
		name     string
		prot     sim.Protocols
		settings string
		h2       bool
		// conns bounds the connections the upstream accepted: at least
		// conns[0], at most conns[1].
		conns [2]int64
	}{
		{"TLS with ALPN", tlsProt, `tls: {ca_file: "` + caFile + `"}`, true, [2]int64{1, 2}},
		{"h2c prior knowledge", sim.Protocols{H2C: true}, `http2: prior_knowledge`, true, [2]int64{1, 2}},
		// n streams, 4 a connection: never more, and no more connections
		// than that needs (one more while a full one drains).
		{"TLS, 4 streams a connection", withStreams(tlsProt, 4), `tls: {ca_file: "` + caFile + `"}`, true, [2]int64{n / 4, n/4 + 1}},
		{"h2c, 4 streams a connection", sim.Protocols{H2C: true, MaxConcurrentStreams: 4}, `http2: prior_knowledge`, true, [2]int64{n / 4, n/4 + 1}},
		{"http2 off over TLS", tlsProt, `tls: {ca_file: "` + caFile + `"}, http2: "off"`, false, [2]int64{n, n}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := startProtoSim(t, tt.prot, n)
			gw := newGatewayFromYAML(t, fmt.Sprintf(`strategy: {mode: fallback}
providers:
  a: {base_url: %q, api_key: key-a, %s}
targets: [{virtual_key: a, model_map: {m: m}}]
`, up.URL(), tt.settings), router.Options{})
			srv := httptest.NewServer(gw.Handler())
			t.Cleanup(srv.Close)

			bodies := postConcurrently(t, srv.URL, n)
			for i, b := range bodies {
				if stream := i%2 == 0; stream && !strings.Contains(b, "data: [DONE]") || !stream && !strings.Contains(b, `"chat.completion"`) {
					t.Errorf("request %d (stream %v): %q", i, stream, b)
				}
			}
			h2, conns := up.HTTP2Requests(), up.Connections()
			if want := map[bool]int64{true: n}[tt.h2]; h2 != want {
				t.Errorf("%d of %d requests over HTTP/2, want %d", h2, n, want)
			}
			if conns < tt.conns[0] || conns > tt.conns[1] {
				t.Errorf("%d requests on %d connections, want %d to %d", n, conns, tt.conns[0], tt.conns[1])
			}
		})
	}
}

// withStreams is p announcing at most n streams a connection.
func withStreams(p sim.Protocols, n int) sim.Protocols {
	p.MaxConcurrentStreams = n
	return p
}

// postConcurrently sends n chat requests at once, every other one a
// stream, and returns each whole answer ("STATUS: body" when not 200).
func postConcurrently(t *testing.T, url string, n int) []string {
	t.Helper()
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"hi"}]}`, i%2 == 0)
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			bodies[i] = string(b)
			if resp.StatusCode != http.StatusOK {
				bodies[i] = fmt.Sprintf("%d: %s", resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	return bodies
}

// h2cProvider is a provider line for an h2c upstream at url.
func h2cProvider(name, url string) string {
	return fmt.Sprintf("  %s: {base_url: %q, api_key: key-%s, http2: prior_knowledge, timeout: {first_byte: 5s, total: 30s}}\n", name, url, name)
}

// TestHTTP2RefusedStreamIsRetried: a stream the server refused
// (RST_STREAM REFUSED_STREAM: not processed) is sent again, and the client
// gets the answer of the one provider there is.
func TestHTTP2RefusedStreamIsRetried(t *testing.T) {
	t.Parallel()
	raw, url := newRawH2(t, func(s *rawStream, n int64) bool {
		if n == 1 {
			s.refuse()
			return false
		}
		s.headers()
		s.data(sseChunk("ok")+"data: [DONE]\n\n", true)
		return false
	})
	gw := newGatewayFromYAML(t, "strategy: {mode: fallback}\nproviders:\n"+h2cProvider("a", url)+
		"targets: [{virtual_key: a, model_map: {m: m}}]\n", router.Options{})
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(body, `"ok"`) || !strings.Contains(body, "[DONE]") {
		t.Errorf("%d %q, want the second stream's answer", resp.StatusCode, body)
	}
	if n := raw.streams.Load(); n != 2 {
		t.Errorf("upstream got %d streams, want 2 (the refused one sent again)", n)
	}
}

// TestHTTP2GoAway: a GOAWAY that closes the connection under a stream
// before its first byte fails the attempt over to the next provider;
// after the first byte the client's stream ends with an error event and
// no other provider is asked.
func TestHTTP2GoAway(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		afterByte bool
	}{
		{"before the first byte", false},
		{"after the first byte", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, url := newRawH2(t, func(s *rawStream, _ int64) bool {
				if tt.afterByte {
					s.headers()
					s.data(sseChunk("one"), false)
				}
				s.goAway()
				return true // and close the connection
			})
			b := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sseChunk("from b")+"data: [DONE]\n\n")
			})
			gw := newGatewayFromYAML(t, "strategy: {mode: fallback}\nproviders:\n"+h2cProvider("a", url)+
				fmt.Sprintf("  b: {base_url: %q, api_key: key-b}\n", b.URL+"/v1")+
				"targets: [{virtual_key: a, model_map: {m: m}}, {virtual_key: b, model_map: {m: m}}]\n", router.Options{})
			srv := httptest.NewServer(gw.Handler())
			t.Cleanup(srv.Close)
			resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			body := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %q", resp.StatusCode, body)
			}
			if !tt.afterByte && (b.hits.Load() != 1 || !strings.Contains(body, `"from b"`)) {
				t.Errorf("b got %d requests, want 1 (failover before the first byte); body %q", b.hits.Load(), body)
			}
			if tt.afterByte {
				if b.hits.Load() != 0 || !strings.Contains(body, `"one"`) || !strings.Contains(body, `"code":"stream_interrupted"`) {
					t.Errorf("b got %d requests; body %q, want a's first chunk then an error event", b.hits.Load(), body)
				}
			}
		})
	}
}

// TestHTTP2GoAwayIsNamed: when the only provider closed its HTTP/2
// connection under the stream (GOAWAY), the all-failed answer says so.
// (A provider that refuses every stream is retried by Go's transport, at
// once and then after 1, 2, 4... seconds, until the first-byte timeout: a
// client may open streams before the server's SETTINGS announce its
// MAX_CONCURRENT_STREAMS, and the server refuses those over it, so
// refusals in a burst are normal and worth the wait.)
func TestHTTP2GoAwayIsNamed(t *testing.T) {
	t.Parallel()
	_, url := newRawH2(t, func(s *rawStream, _ int64) bool { s.goAway(); return true })
	gw := newGatewayFromYAML(t, "strategy: {mode: fallback}\nproviders:\n"+h2cProvider("a", url)+
		"targets: [{virtual_key: a, model_map: {m: m}}]\n", router.Options{})
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	const want = "attempt 1 a: transport (HTTP/2 connection closed by the server: GOAWAY)"
	if body := readAll(t, resp.Body); resp.StatusCode != 502 || !strings.Contains(body, want+`"`) {
		t.Errorf("%d %q, want 502 naming %q", resp.StatusCode, body, want)
	}
}
