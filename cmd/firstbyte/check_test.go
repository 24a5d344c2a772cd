package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "firstbyte.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckSummary: a good config exits 0 with one screen that says what
// the gateway will do: listeners, auth, token, mode, limits, drain, logs,
// telemetry, providers (each with its timeouts, concurrency and breaker)
// and the targets of each model (with their retries).
func TestCheckSummary(t *testing.T) {
	t.Setenv("FIRSTBYTE_API_KEY", "k")
	t.Setenv("GROQ_API_KEY", "gsk-test-key")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	code, out, errOut := runCmd("check", "-config", "../../router/config/testdata/valid.yaml")
	if code != 0 || errOut != "" {
		t.Fatalf("check valid.yaml: exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
	want := `../../router/config/testdata/valid.yaml: ok
  listen     127.0.0.1:8080 (auth: 1 client key)
  admin      127.0.0.1:9464 (admin token set)
  mode       least-latency
  limits     max_body 2MiB, max_response 32MiB, max_buffered 48MiB, max_connections 512, read_timeout 30s, idle_timeout 1m30s
  shutdown   delay 2s, grace 45s
  log        level debug, format json, requests off
  telemetry  service gw; export to http://127.0.0.1:4318; ingest on (token set), foreign on from checkout, search (unary: search)
  provider groq         openai    https://api.groq.com/openai/v1 (pricing for 1 model)
           timeout first_byte 5s, total 2m; max_concurrency 10, queue 5; breaker opens after 3 failures for 10s
  provider together     openai    https://api.together.xyz/v1 (no pricing)
           timeout first_byte 30s, total 10m; max_concurrency unlimited; breaker opens after 5 failures for 30s
  model llama-3.3-70b        groq→llama-3.3-70b-versatile (retry 1), together→meta-llama/Llama-3.3-70B-Instruct-Turbo
`
	if out != want {
		t.Errorf("check valid.yaml printed\n%s\nwant\n%s", out, want)
	}
}

func TestCheckSummaryDefaults(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://user:pw@otel.example:4318?k=v")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	code, out, _ := runCmd("check", "-config", "../../router/config/testdata/minimal.yaml")
	if code != 0 {
		t.Fatalf("check minimal.yaml: exit %d", code)
	}
	for _, want := range []string{
		"  listen     127.0.0.1:8080 (no client auth: anyone who reaches it may use it)\n",
		"  admin      127.0.0.1:9464 (no admin token: /debug/routing and /admin/reload are open)\n",
		"  limits     max_body 10MiB, max_response 64MiB, max_buffered 96MiB, max_connections 4096, read_timeout 1m, idle_timeout 2m\n",
		"  shutdown   delay 0s, grace 30s\n",
		"  log        level info, format text, requests on\n",
		"  telemetry  service firstbyte; export to https://redacted@otel.example:4318?redacted (OTEL_EXPORTER_OTLP_ENDPOINT); ingest off\n",
		"  model m                    local→m\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check minimal.yaml output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pw") || strings.Contains(out, "k=v") {
		t.Errorf("check printed the credential in an endpoint URL:\n%s", out)
	}
}

// TestCheckErrors: a bad config exits 1 with "PATH: N error(s)" and then
// every error, one per line, in file order.
func TestCheckErrors(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `lisen: 127.0.0.1:8080
providers:
  groq: {base_url: "https://api.groq.com/openai/v1", timeout: {first_byte: 10}}
targets:
  - {virtual_key: grok, model_map: {m: up}}
  - {virtual_key: groq, modelmap: {m: up}}
`)
	code, out, errOut := runCmd("check", "-config", path)
	if code != 1 || out != "" {
		t.Errorf("check: exit %d, stdout %q; want 1 and nothing", code, out)
	}
	want := path + `: 4 error(s)
lisen: unknown key "lisen" (did you mean "listen"?)
providers.groq.timeout.first_byte: a number is not a duration: write a duration with a unit, e.g. 10s
targets[0].virtual_key: unknown provider "grok" (did you mean "groq"?)
targets[1].modelmap: unknown key "modelmap" (did you mean "model_map"?)
`
	if errOut != want {
		t.Errorf("check printed\n%s\nwant\n%s", errOut, want)
	}
}

func TestCheckSimulatorConfig(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCmd("check", "-config", "../../examples/sim.yaml")
	want := "../../examples/sim.yaml: 1 error(s)\nthis looks like a simulator config (firstbyte sim -config FILE), not a gateway config"
	if code != 1 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 2 {
		t.Errorf("check sim.yaml: exit %d\n%s\nwant 1 and one error starting %q", code, errOut, want)
	}
}

func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	if code, _, errOut := runCmd("check", "-config", filepath.Join(t.TempDir(), "nope.yaml")); code != 1 || !strings.Contains(errOut, "nope.yaml") {
		t.Errorf("check on a missing file: exit %d, %q; want 1 naming the file", code, errOut)
	}
	if code, _, _ := runCmd("check", "-no-such-flag"); code != 2 {
		t.Errorf("check with a bad flag: exit %d, want 2", code)
	}
	if code, _, errOut := runCmd("check", "-config", writeConfig(t, "providers: [\n")); code != 1 || !strings.Contains(errOut, "line 1") {
		t.Errorf("check on broken YAML: exit %d, %q; want 1 naming line 1", code, errOut)
	}
}

// TestCheckNeverPrintsSecrets: neither the summary nor the errors show a
// provider key, a client key, the admin token or the ingest token, even
// when one is in the wrong place or of the wrong type.
func TestCheckNeverPrintsSecrets(t *testing.T) {
	canaries := map[string]string{
		"FIRSTBYTE_API_KEY": "client-canary-1111",
		"GROQ_API_KEY":      "gsk-canary-2222",
		"TOGETHER_API_KEY":  "tgp-canary-3333",
		"ADMIN_TOKEN":       "admin-canary-4444",
		"INGEST_TOKEN":      "ingest-canary-5555",
	}
	for k, v := range canaries {
		t.Setenv(k, v)
	}
	check := func(name, out string) {
		t.Helper()
		for _, v := range canaries {
			if strings.Contains(out, v) {
				t.Errorf("%s printed the secret %q:\n%s", name, v, out)
			}
		}
	}
	code, out, errOut := runCmd("check", "-config", "../../router/config/testdata/valid.yaml")
	if code != 0 {
		t.Fatalf("check valid.yaml: exit %d\n%s", code, errOut)
	}
	check("check summary", out+errOut)

	bad := writeConfig(t, `
admin: {listen: 0.0.0.0:9464, token: [${ADMIN_TOKEN}]}
auth: {keys: ${FIRSTBYTE_API_KEY}}
providers:
  groq: {base_url: "https://api.groq.com/openai/v1", api_key: {${GROQ_API_KEY}: 1}, models: [m]}
  together: {base_url: "https://api.together.xyz/v1", api_key: "${TOGETHER_API_KEY}", models: [m]}
targets: [{virtual_key: groq}, {virtual_key: together}]
telemetry: {ingest: {enabled: true, token: [${INGEST_TOKEN}]}}
`)
	code, out, errOut = runCmd("check", "-config", bad)
	if code != 1 {
		t.Errorf("check bad config: exit %d, want 1\n%s", code, errOut)
	}
	check("check errors", out+errOut)
}

// TestServeLogsConfigWarnings: what check warns of, serve logs at start,
// one line per warning naming the field.
func TestServeLogsConfigWarnings(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("../../router/config/testdata/base_url_paths.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logConfigWarnings(slog.New(slog.NewTextHandler(&buf, nil)), cfg)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "field=providers.openai.base_url") {
		t.Errorf("logged\n%s\nwant 6 warnings, the first about providers.openai.base_url", buf.String())
	}
	if strings.Contains(buf.String(), "secret") {
		t.Errorf("a logged warning shows a base_url's credentials:\n%s", buf.String())
	}
}
