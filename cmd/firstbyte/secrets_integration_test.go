//go:build integration

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The canaries: a provider credential, a client key, a prompt, the admin
// token and the ingest token. None may appear in anything the gateway
// writes but the upstream request itself.
const (
	canaryProviderKey = "sk-SECRET-canary-1234"
	canaryClientKey   = "client-canary-5678"
	canaryPrompt      = "PROMPT-canary-9876"
	canaryAdminToken  = "admin-canary-2468"
	canaryIngestToken = "ingest-canary-1357"
)

var canaries = []string{canaryProviderKey, canaryClientKey, canaryPrompt, canaryAdminToken, canaryIngestToken}

// TestNoSecretsOrPromptsAnywhere sends requests carrying the three canaries
// down every path (success, streaming, an upstream 422 passed through, a
// 503 failover, every target failing, malformed, unknown model, missing and
// wrong keys, right and wrong admin and ingest tokens, a reload) and
// searches every output for them: the gateway's stdout and stderr at log
// level debug with a line per request, every exported span, /metrics in
// both formats, /debug/routing and every answer (the passed-through 422 is
// the provider's own body, which does not contain the prompt).
func TestNoSecretsOrPromptsAnywhere(t *testing.T) {
	t.Parallel()
	ok := startSimProvider(t, sim.Provider{Name: "ok", TTFB: sim.Fixed(5 * time.Millisecond), Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond}})
	const picky422 = `{"error":{"message":"The upstream refuses this request.","type":"invalid_request_error","param":null,"code":"unprocessable"}}`
	picky := startSimProvider(t, sim.Provider{Name: "picky", StatusBody: &sim.StatusBody{Status: http.StatusUnprocessableEntity, Body: picky422}})
	down := startSimProvider(t, sim.Provider{Name: "down", Errors: sim.ErrorRate{Rate: 1, Status: http.StatusServiceUnavailable}})
	col, sink := startCollectorToSink(t)
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0, token: %[7]s}
log: {level: debug, requests: true}
auth:
  keys: [%[5]s]
providers:
  ok:    {kind: openai, base_url: %[1]q, api_key: %[4]s}
  picky: {kind: openai, base_url: %[2]q, api_key: %[4]s}
  down:  {kind: openai, base_url: %[3]q, api_key: %[4]s, circuit_breaker: {failures: 1000}}
targets:
  - {virtual_key: ok,    model_map: {m1: ok-model, m-failover: ok-model}}
  - {virtual_key: picky, model_map: {m-422: picky-model}}
  - {virtual_key: down,  model_map: {m-failover: down-model, m-down: down-model}}
telemetry:
  otlp_endpoint: http://%[6]s
  ingest: {enabled: true, token: %[8]s}
`, ok.URL(), picky.URL(), down.URL(), canaryProviderKey, canaryClientKey, col.httpAddr, canaryAdminToken, canaryIngestToken), exportEnv...)

	chat := func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"%s tell me"}]}`, model, stream, canaryPrompt)
	}
	bearer := []string{"Authorization", "Bearer " + canaryClientKey}
	tests := []struct {
		name       string
		path       string
		body       string
		headers    []string
		contentTyp string // "" = application/json
		want       int
	}{
		{name: "unary", path: "/v1/chat/completions", body: chat("m1", false), headers: bearer, want: 200},
		{name: "streaming", path: "/v1/chat/completions", body: chat("m1", true), headers: bearer, want: 200},
		{name: "x-api-key", path: "/v1/chat/completions", body: chat("m1", false), headers: []string{"x-api-key", canaryClientKey}, want: 200},
		{name: "responses", path: "/v1/responses", body: fmt.Sprintf(`{"model":"m1","input":"%s tell me"}`, canaryPrompt), headers: bearer, want: 200},
		{name: "upstream 422 passed through", path: "/v1/chat/completions", body: chat("m-422", false), headers: bearer, want: 422},
		{name: "503 failover", path: "/v1/chat/completions", body: chat("m-failover", false), headers: append([]string{"X-Firstbyte-Provider-Order", "down,ok"}, bearer...), want: 200},
		{name: "streaming 503 failover", path: "/v1/chat/completions", body: chat("m-failover", true), headers: append([]string{"X-Firstbyte-Provider-Order", "down,ok"}, bearer...), want: 200},
		{name: "every target fails", path: "/v1/chat/completions", body: chat("m-down", false), headers: bearer, want: 503},
		{name: "malformed JSON", path: "/v1/chat/completions", body: `{"model":"m1","messages":[{"role":"user","content":"` + canaryPrompt + ` tell me"}]`, headers: bearer, want: 400},
		{name: "model not a string", path: "/v1/chat/completions", body: `{"model":["` + canaryPrompt + `"],"messages":[]}`, headers: bearer, want: 400},
		{name: "unknown model", path: "/v1/chat/completions", body: chat("no-such-model", false), headers: bearer, want: 404},
		{name: "not JSON", path: "/v1/chat/completions", body: canaryPrompt + " tell me", headers: bearer, contentTyp: "text/plain", want: 415},
		{name: "missing key", path: "/v1/chat/completions", body: chat("m1", false), want: 401},
		{name: "wrong key", path: "/v1/chat/completions", body: chat("m1", false), headers: []string{"Authorization", "Bearer not-" + canaryClientKey}, want: 401},
	}
	var leaks []string
	search := func(where, text string) {
		for _, c := range canaries {
			if strings.Contains(text, c) {
				leaks = append(leaks, fmt.Sprintf("%s contains %q", where, c))
			}
		}
	}
	for _, tt := range tests {
		headers := tt.headers
		if tt.contentTyp != "" {
			headers = append(append([]string(nil), headers...), "Content-Type", tt.contentTyp)
		}
		r := postAPI(t, gw.api, tt.path, tt.body, headers...)
		if r.status != tt.want {
			t.Errorf("%s: status %d, want %d: %s", tt.name, r.status, tt.want, r.body)
		}
		if tt.name == "upstream 422 passed through" && r.body != picky422 {
			t.Errorf("%s: body %q, want the upstream's own %q", tt.name, r.body, picky422)
		}
		search("answer body of "+tt.name, r.body)
		for k, vs := range r.header {
			search(fmt.Sprintf("answer header %s of %s", k, tt.name), strings.Join(vs, " "))
		}
	}
	// The client's key is for the gateway: it never goes upstream.
	for _, s := range []*sim.Running{ok, picky, down} {
		h, _ := s.LastRequest()
		for k, vs := range h {
			if strings.Contains(strings.Join(vs, " "), canaryClientKey) {
				t.Errorf("upstream %s received the client key in header %s", s.Name(), k)
			}
		}
		if got := h.Get("Authorization"); got != "Bearer "+canaryProviderKey {
			t.Errorf("upstream %s Authorization = %q, want the provider's key", s.Name(), got)
		}
	}

	search("/metrics (text)", httpGetText(t, "http://"+gw.admin+"/metrics", "text/plain"))
	search("/metrics (OpenMetrics)", httpGetText(t, "http://"+gw.admin+"/metrics", "application/openmetrics-text; version=1.0.0"))
	// The admin and ingest endpoints, with wrong tokens and right ones.
	for _, tt := range []struct {
		method, path, token, ctype string
		want                       int
	}{
		{"GET", "/debug/routing", "not-" + canaryAdminToken, "", 401},
		{"GET", "/debug/routing", canaryAdminToken, "", 200},
		{"POST", "/admin/reload", "not-" + canaryAdminToken, "", 401},
		{"POST", "/admin/reload", canaryAdminToken, "", 200},
		{"POST", "/v1/traces", "not-" + canaryIngestToken, "application/x-protobuf", 401},
		{"POST", "/v1/traces", canaryIngestToken, "application/x-protobuf", 200},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+gw.admin+tt.path, strings.NewReader(""))
		req.Header.Set("Authorization", "Bearer "+tt.token)
		if tt.ctype != "" {
			req.Header.Set("Content-Type", tt.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %d, want %d: %s", tt.method, tt.path, resp.StatusCode, tt.want, b)
		}
		search(fmt.Sprintf("answer of %s %s", tt.method, tt.path), string(b))
		if tt.path == "/debug/routing" && tt.want == 200 {
			search("/debug/routing", string(b))
		}
	}

	// A graceful stop flushes every span to the collector.
	if code := gw.stop(t, syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("gateway exit code = %d, want 0", code)
	}
	search("gateway stdout", gw.stdout.String())
	search("gateway stderr", gw.stderr.String())

	// One attempt span per upstream try: four plain successes, two failovers
	// of two tries each, the 422 and the one try of m-down.
	const attempts = 4 + 2*2 + 1 + 1
	spans := waitForSpans(t, sink, gw.instanceID, len(tests), attempts)
	for _, s := range spans {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		s.res.CopyTo(rs.Resource())
		ss := rs.ScopeSpans().AppendEmpty()
		s.scope.CopyTo(ss.Scope())
		s.span.CopyTo(ss.Spans().AppendEmpty())
		js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		search(fmt.Sprintf("exported span %q (%s)", s.span.Name(), s.span.Kind()), string(js))
	}
	t.Logf("searched %d answers, %d exported spans, stdout/stderr, /metrics, /debug/routing", len(tests), len(spans))
	for _, l := range leaks {
		t.Errorf("leak: %s", l)
	}
}
