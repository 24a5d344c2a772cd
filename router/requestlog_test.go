package router_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestRequestLogLineSaysWhyTheLastAttemptFailed: the request's log line
// carries the last attempt's error class and a short reason (a closed
// port: transport, connection refused; a hung upstream: timeout, first
// byte; a 429: rate_limit), never the key or the prompt; a request served
// after a failover carries neither.
func TestRequestLogLineSaysWhyTheLastAttemptFailed(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	hung := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	limited := newUpstream(t, jsonAnswer(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`))
	ok := newUpstream(t, apiAnswer)
	const prompt = "PROMPT-canary-2929"
	body := `{"model":"m","messages":[{"role":"user","content":"` + prompt + `"}]}`

	for _, tc := range []struct {
		name          string
		targets       []target
		class, reason string
		status        float64
	}{
		{"closed port", []target{{name: "a", url: closed}}, "transport", "connection refused", 502},
		{"first-byte timeout", []target{{name: "a", url: hung.URL, firstByte: "50ms"}}, "timeout", "first-byte timeout", 504},
		{"rate limited", []target{{name: "a", url: limited.URL}}, "rate_limit", "upstream 429", 429},
		{"served after a failover", []target{{name: "a", url: closed}, {name: "b", url: ok.URL}}, "", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &lockedWriter{w: &bytes.Buffer{}}
			gw := newGatewayWith(t, "fallback", "", router.Options{
				Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
				LogRequests: true,
			}, tc.targets...)
			srv := httptest.NewServer(gw.Handler())
			defer srv.Close()
			readAll(t, post(t, srv.URL, "/v1/chat/completions", body).Body)
			var line map[string]any
			router.WaitUntil(t, "the request log line", func() bool {
				for _, l := range strings.Split(logs.String(), "\n") {
					if strings.Contains(l, `"msg":"request"`) {
						return json.Unmarshal([]byte(l), &line) == nil
					}
				}
				return false
			})
			if line["status"] != tc.status {
				t.Errorf("status = %v, want %v", line["status"], tc.status)
			}
			if got, _ := line["error_class"].(string); got != tc.class {
				t.Errorf("error_class = %q, want %q in %v", got, tc.class, line)
			}
			if got, _ := line["error_reason"].(string); got != tc.reason {
				t.Errorf("error_reason = %q, want %q in %v", got, tc.reason, line)
			}
			if s := logs.String(); strings.Contains(s, prompt) || strings.Contains(s, "key-a") {
				t.Errorf("the log carries the prompt or the key:\n%s", s)
			}
		})
	}
}
