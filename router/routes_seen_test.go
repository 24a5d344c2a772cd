package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/firstbyte-dev/firstbyte/router"
)

// TestRouteAndPreferenceAreSeen: the request log line and the server span
// show the resolved model, the alias the client sent, the route in force
// and the preferences; never the prompt.
func TestRouteAndPreferenceAreSeen(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	logs := &lockedWriter{w: &bytes.Buffer{}}
	a, b := newUpstream(t, apiAnswer), newUpstream(t, apiAnswer)
	gw := newGatewayFromYAML(t, routesYAML(`strategy: {mode: fallback}
aliases: {smart: m}
routes:
  - models: [m]
    mode: round-robin`, a.URL, b.URL), router.Options{TracerProvider: tp, Logger: slog.New(slog.NewJSONHandler(logs, nil)), LogRequests: true})
	srv := serveGuarded(t, gw.Handler())
	const prompt = "PROMPT-canary-3232"
	body := `{"model":"smart","provider":{"ignore":["a"]},"messages":[{"role":"user","content":"` + prompt + `"}]}`
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
	for k, want := range map[string]string{"model": "m", "alias": "smart", "route": "routes[0]", "preference": `{"ignore":["a"]}`, "target": "b"} {
		if got, _ := line[k].(string); got != want {
			t.Errorf("log line %s = %q, want %q", k, got, want)
		}
	}
	spans := waitForSpans(t, exp, 2)
	for _, s := range spans {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if s.SpanKind.String() == "server" {
			if attrs["firstbyte.preference"] != `{"ignore":["a"]}` || attrs["firstbyte.requested_model"] != "m" {
				t.Errorf("server span: preference %q, requested model %q; want the object and the resolved model", attrs["firstbyte.preference"], attrs["firstbyte.requested_model"])
			}
		}
		for k, v := range attrs {
			if strings.Contains(v, prompt) {
				t.Errorf("span %s: %s carries the prompt", s.Name, k)
			}
		}
	}
	if strings.Contains(logs.String(), prompt) {
		t.Error("the log carries the prompt")
	}
}
