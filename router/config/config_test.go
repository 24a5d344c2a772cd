package config

import (
	"errors"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/parser"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func loadTestConfig(t *testing.T, name string, vars map[string]string) (*Config, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(data, env(vars))
}

// configErrors loads a testdata file and returns every problem found, as
// check prints them.
func configErrors(t *testing.T, name string, vars map[string]string) []string {
	t.Helper()
	cfg, err := loadTestConfig(t, name, vars)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		return nil
	}
	var fes FieldErrors
	if !errors.As(err, &fes) {
		t.Fatalf("%s: error %T is not FieldErrors: %v", name, err, err)
	}
	lines := make([]string, len(fes))
	for i, fe := range fes {
		lines[i] = fe.Error()
	}
	return lines
}

var validEnv = map[string]string{"FIRSTBYTE_API_KEY": "k1", "GROQ_API_KEY": "gsk-test-key", "ANTHROPIC_API_KEY": "sk-ant-test-key", "AZURE_OPENAI_API_KEY": "azure-test-key", "GEMINI_API_KEY": "gemini-test-key"}

func TestLoadConfigValid(t *testing.T) {
	t.Parallel()
	cfg, err := loadTestConfig(t, "valid.yaml", validEnv)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"auth.keys expanded", cfg.Auth.Keys[0], "k1"},
		{"api_key expanded", cfg.Providers["groq"].APIKey, "gsk-test-key"},
		{"default from ${VAR:-default}", cfg.Providers["together"].APIKey, "none-given"},
		{"admin token", cfg.Admin.Token, "adm1n-t0ken"},
		{"ingest token default", cfg.Telemetry.Ingest.Token, "t0ken"},
		{"max_body", cfg.Limits.MaxBody, ByteSize(2 << 20)},
		{"max_response", cfg.Limits.MaxResponse, ByteSize(32 << 20)},
		{"max_buffered", cfg.Limits.MaxBuffered, ByteSize(48 << 20)},
		{"max_connections", cfg.Limits.MaxConnections, 512},
		{"read_timeout", cfg.Limits.ReadTimeout, 30 * time.Second},
		{"header timeout", cfg.Limits.HeaderTimeout(), 10 * time.Second},
		{"idle_timeout", cfg.Limits.IdleTimeout, 90 * time.Second},
		{"shutdown.delay", cfg.Shutdown.Delay, 2 * time.Second},
		{"shutdown.grace", cfg.Shutdown.Grace, 45 * time.Second},
		{"log.level", cfg.Log.Level, "debug"},
		{"log slog level", cfg.Log.SlogLevel(), slog.LevelDebug},
		{"log.format", cfg.Log.Format, "json"},
		{"log.requests explicit false", cfg.Log.LogRequests(), false},
		{"first_byte", cfg.Providers["groq"].Timeout.FirstByte, 5 * time.Second},
		{"kind default", cfg.Providers["together"].Kind, KindOpenAI},
		{"first_byte default", cfg.Providers["together"].Timeout.FirstByte, DefaultFirstByte},
		{"total default", cfg.Providers["together"].Timeout.Total, DefaultTotal},
		{"breaker failures", cfg.Providers["groq"].CircuitBreaker.Failures, 3},
		{"breaker default", cfg.Providers["together"].CircuitBreaker.Failures, DefaultCBFailures},
		{"pricing", cfg.Providers["groq"].Pricing["llama-3.3-70b-versatile"], Price{Input: 0.59, Output: 0.79}},
		{"no pricing", len(cfg.Providers["together"].Pricing), 0},
		{"retry", cfg.Targets[0].Retry.Attempts, 1},
		{"weight default", cfg.Targets[0].EffectiveWeight(), 1.0},
		{"weight", cfg.Targets[1].EffectiveWeight(), 2.0},
		{"model_map", cfg.Targets[1].ModelMap["llama-3.3-70b"], "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{"mode", cfg.Strategy.Mode, "least-latency"},
		{"service name", cfg.Telemetry.ServiceName, "gw"},
		{"ingest", cfg.Telemetry.Ingest.Enabled, true},
		{"foreign", cfg.Telemetry.Ingest.Foreign.Enabled, true},
		{"foreign services", strings.Join(cfg.Telemetry.Ingest.Foreign.Services, ","), "checkout,search"},
		{"foreign unary services", strings.Join(cfg.Telemetry.Ingest.Foreign.UnaryServices, ","), "search"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadTestConfig(t, "minimal.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", cfg.Listen, "127.0.0.1:8080"},
		{"admin.listen", cfg.Admin.Listen, "127.0.0.1:9464"},
		{"admin.token", cfg.Admin.Token, ""},
		{"max_body", cfg.Limits.MaxBody, ByteSize(10 << 20)},
		{"max_response", cfg.Limits.MaxResponse, ByteSize(64 << 20)},
		{"max_buffered", cfg.Limits.MaxBuffered, ByteSize(96 << 20)},
		{"max_connections", cfg.Limits.MaxConnections, 4096},
		{"read_timeout", cfg.Limits.ReadTimeout, 60 * time.Second},
		{"header timeout", cfg.Limits.HeaderTimeout(), 10 * time.Second},
		{"idle_timeout", cfg.Limits.IdleTimeout, 120 * time.Second},
		{"shutdown.delay", cfg.Shutdown.Delay, time.Duration(0)},
		{"shutdown.grace", cfg.Shutdown.Grace, 30 * time.Second},
		{"log.level", cfg.Log.Level, "info"},
		{"log slog level", cfg.Log.SlogLevel(), slog.LevelInfo},
		{"log.format", cfg.Log.Format, "text"},
		{"log.requests", cfg.Log.LogRequests(), true},
		{"mode", cfg.Strategy.Mode, "least-latency"},
		{"service_name", cfg.Telemetry.ServiceName, "firstbyte"},
		{"ingest", cfg.Telemetry.Ingest.Enabled, false},
		{"foreign", cfg.Telemetry.Ingest.Foreign.Enabled, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The zero Log (a Config built in Go) still logs requests.
	if !(Log{}).LogRequests() {
		t.Errorf("Log{}.LogRequests() = false, want true")
	}
}

// TestLoadConfigAnchors: anchors, aliases and merge keys decode as YAML
// says, a key written after a merge overriding what it brought.
func TestLoadConfigAnchors(t *testing.T) {
	t.Parallel()
	cfg, err := loadTestConfig(t, "anchors.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	b := cfg.Providers["b"]
	if b.BaseURL != "http://127.0.0.1:9102/v1" || b.Kind != KindOpenAI || b.Timeout.FirstByte != 3*time.Second || b.Timeout.Total != DefaultTotal {
		t.Errorf("providers.b = %+v, want a's kind, its own base_url and timeout (total defaulted)", *b)
	}
	if got := cfg.Targets[1].ModelMap["m"]; got != "up" {
		t.Errorf("targets[1].model_map.m = %q, want the aliased up", got)
	}
}

func TestLoadConfigReliableLatency(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`strategy: {mode: reliable-latency}
providers:
  local: {base_url: "http://127.0.0.1:9101/v1", models: [m]}
targets: [{virtual_key: local}]
`), env(nil))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

// configErrorTests are the testdata files with problems and every line
// check prints for each, in order. {modes} stands for the registered
// modes, which grow as strategies are added.
var configErrorTests = []struct {
	name string
	file string
	env  map[string]string
	want []string
}{
	{name: "aliases and routes", file: "routes_errors.yaml", want: []string{
		`aliases: empty alias name`,
		`aliases.claude-haiku-4-5: "claude-haiku-4-5" is a model a target serves: an alias must be a name of its own`,
		`routes[0].models[1]: "gpt-*" matches no model a target serves (claude-haiku-4-5, claude-sonnet-4-5, llama-3.3-70b)`,
		`routes[0].targets[0]: "c" serves none of the route's models (claude-haiku-4-5, claude-sonnet-4-5)`,
		`routes[0].targets[1]: "c" is listed twice`,
		`routes[1].models[0]: "claude-sonnet-4-5" never matches: routes[0].models[0] ("claude-*") matches every model it would`,
		`routes[2].models: required: the client models (names or globs) this route serves`,
	}},
	{name: "unknown top-level key", file: "unknown_key.yaml", want: []string{
		`lisen: unknown key "lisen" (did you mean "listen"?)`,
	}},
	{name: "unknown nested key", file: "unknown_nested_key.yaml", want: []string{
		`providers.local.timeuot: unknown key "timeuot" (did you mean "timeout"?)`,
	}},
	{name: "unknown key far from any", file: "unknown_key_no_suggestion.yaml", want: []string{
		`telemetry.exporter: unknown key "exporter" (valid here: service_name, otlp_endpoint, ingest)`,
	}},
	{name: "what is under an unknown parent key is checked as the key it nearly is", file: "unknown_parent_key.yaml", want: []string{
		`providers.groq.timeuot: unknown key "timeuot" (did you mean "timeout"?)`,
		`target: unknown key "target" (did you mean "targets"?)`,
		`target[0].modelmap: unknown key "modelmap" (did you mean "model_map"?)`,
		`target[0].retry.attempts: a quoted string is not a whole number: write e.g. 8`,
		`target[1].virtual_keys: unknown key "virtual_keys" (did you mean "virtual_key"?)`,
		`strategie: unknown key "strategie" (did you mean "strategy"?)`,
		`strategie.hegde: unknown key "hegde" (did you mean "hedge"?)`,
	}},
	{name: "typos next to semantic errors, without cascades", file: "typos.yaml", want: []string{
		`lisen: unknown key "lisen" (did you mean "listen"?)`,
		`frobnicate: unknown key "frobnicate" (valid here: listen, admin, auth, limits, shutdown, log, response_model, providers, strategy, aliases, routes, targets, telemetry)`,
		`providers.groq.timeuot: unknown key "timeuot" (did you mean "timeout"?)`,
		`providers.groq.max-concurrency: unknown key "max-concurrency" (did you mean "max_concurrency"?)`,
		`targets[0].virtual_keys: unknown key "virtual_keys" (did you mean "virtual_key"?)`,
		`targets[1].virtual_key: unknown provider "grok" (did you mean "groq"?)`,
		`targets[2].modelmap: unknown key "modelmap" (did you mean "model_map"?)`,
		`strategy.mode: unknown mode "least_latency" (did you mean "least-latency"?)`,
		`log.level: unknown level "warning" (did you mean "warn"?)`,
		`log.format: unknown format "yaml" (want one of text, json)`,
	}},
	{name: "answers' model name and the Responses API", file: "responses.yaml", want: []string{
		`response_model: unknown response_model "requestd" (did you mean "requested"?)`,
		`providers.claude.responses: only an openai provider serves the Responses API; /v1/responses requests to an anthropic provider are translated to Messages (leave it out)`,
	}},
	{name: "hedging out of range", file: "hedge.yaml", want: []string{
		`strategy.hedge.after: "p42" is not one of the quantiles p50, p75, p90, p95, p99, nor a duration (e.g. 300ms), nor adaptive`,
		`strategy.hedge.budget: must be above 0 and at most 1 (a share of requests), got 1.5`,
		`strategy.hedge.max: must be 1 to 8 hedges in flight per request, got 9`,
	}},
	{name: "hedging after a misspelt adaptive", file: "hedge_adaptive.yaml", want: []string{
		`routes[0].hedge.after: "Adaptive" is neither a quantile (e.g. p95), a duration (e.g. 300ms) nor adaptive (did you mean "adaptive"?)`,
	}},
	{name: "hedging after a duration too short", file: "hedge_short.yaml", want: []string{
		`strategy.hedge.after: 1ms is less than the floor of 5ms`,
		`strategy.hedge.budget: must be above 0 and at most 1 (a share of requests), got -0.1`,
	}},
	{name: "stream and rate-limit timings", file: "timings.yaml", want: []string{
		`providers.a.timeout.idle: must not be negative`,
		`providers.a.rate_limit.max_cooldown: must not be negative`,
		`providers.b.timeout.idle: 2m exceeds timeout.total 1m`,
	}},
	{name: "upstream transport settings", file: "transport.yaml", want: []string{
		`providers.a.http2: unknown http2 setting "h3" (want one of auto, prior_knowledge, off)`,
		`providers.a.tls.ca_file: "testdata/transport.yaml" holds no PEM certificate`,
		`providers.b.http2: prior_knowledge is unencrypted HTTP/2 (h2c), but base_url is https: leave it out (auto negotiates HTTP/2 over TLS)`,
		`providers.b.tls.ca_file: cannot read "/nonexistent/ca.pem": no such file or directory`,
	}},
	{name: "duplicate provider names", file: "duplicate_provider.yaml", want: []string{
		`providers.groq: key "groq" is written twice (lines 2 and 3); keep one`,
	}},
	{name: "duplicate keys at every level", file: "duplicate_keys.yaml", want: []string{
		`listen: key "listen" is written twice (lines 1 and 2); keep one`,
		`providers.local.models: key "models" is written twice on line 4; keep one`,
		`targets[0].retry.attempts: key "attempts" is written twice on line 6; keep one`,
	}},
	{name: "wrong type", file: "wrong_type.yaml", want: []string{
		`providers.local.max_concurrency: a string is not a whole number: write e.g. 8`,
	}},
	{name: "bad size", file: "bad_size.yaml", want: []string{
		`limits.max_body: a string is not a size: write a size such as 10MiB, 512KiB or a byte count`,
	}},
	{name: "wrong types of every kind", file: "wrong_types.yaml", want: []string{
		`limits: must be a mapping with keys such as max_body, max_response, max_buffered, max_connections, read_timeout, idle_timeout, not a string`,
		`shutdown.delay: a number is not a duration: write a duration with a unit, e.g. 10s`,
		`shutdown.grace: a string is not a duration: write a duration with a unit, e.g. 10s`,
		`log.requests: a quoted string is not true or false: write true or false`,
		`auth.keys: must be a list, not a string: write [...] for a single item`,
		`providers.groq.base_url: must be a string, not a mapping`,
		`providers.groq.models: must be a list, not a string: write [...] for a single item`,
		`providers.groq.timeout.first_byte: a number is not a duration: write a duration with a unit, e.g. 10s`,
		`providers.groq.timeout.total: a decimal number is not a duration: write a duration with a unit, e.g. 10s`,
		`providers.groq.max_concurrency: a quoted string is not a whole number: write it without quotes`,
		`providers.groq.queue: a decimal number is not a whole number: write e.g. 8`,
		`providers.groq.circuit_breaker.failures: a string is not a whole number: write e.g. 8`,
		`providers.groq.pricing.up.input: a string is not a number: write e.g. 1.5`,
		`providers.groq.pricing.up.output: an infinity is not a number: write e.g. 1.5`,
		`providers.broken: must be a mapping with keys such as kind, base_url, api_key, region, project, api_version, credentials, profile, api, headers, query, tls, http2, models, timeout, rate_limit, responses, max_concurrency, queue, circuit_breaker, pricing, not a list`,
		`targets[0].model_map: must be a mapping of names to values, not a list`,
		`targets[0].weight: a string is not a number: write e.g. 1.5`,
		`targets[2]: must be a mapping with keys such as virtual_key, model_map, retry, weight, not a number`,
		`telemetry.ingest.enabled: a number is not true or false: write true or false`,
		`telemetry.ingest.foreign.services: must be a list, not a mapping`,
	}},
	{name: "empty targets", file: "empty_targets.yaml", want: []string{
		`targets: at least one target is required`,
	}},
	{name: "every semantic error at once", file: "many_errors.yaml", want: []string{
		`listen: invalid address "not an address" (want host:port, e.g. 127.0.0.1:8080)`,
		`auth.keys[0]: environment variable FIRSTBYTE_TEST_UNSET_KEY is not set`,
		`providers.groq.kind: unknown kind "grpc" (want one of openai, anthropic, azure, bedrock, vertex, gemini)`,
		`providers.groq.base_url: invalid URL "ftp://example" (want http(s)://host/path)`,
		`providers.groq.timeout.first_byte: 2m exceeds timeout.total 1m`,
		`providers.groq.max_concurrency: must be 0 (unlimited) or positive`,
		`providers.groq.queue: must be 0 or positive`,
		`providers.groq.circuit_breaker.failures: must be positive`,
		`providers.empty.base_url: required`,
		`strategy.mode: unknown mode "fastest" (want one of {modes})`,
		`targets[0].virtual_key: unknown provider "grok" (did you mean "groq"?)`,
		`targets[1].retry.attempts: must be 0 or positive, got -1`,
		`targets[1].weight: must be 0 or positive, got -1`,
		`targets[2]: serves no model: give it a model_map or list models on provider "empty"`,
		`telemetry.otlp_endpoint: invalid URL "localhost:4318" (want http(s)://host:port, e.g. http://127.0.0.1:4318)`,
	}},
	{name: "limits, shutdown and log", file: "limits_shutdown_log.yaml", want: []string{
		`limits.max_response: a number is not a size: write a size such as 10MiB, 512KiB or a byte count`,
		`limits.max_connections: must be positive, got -5 (leave it out for the default, 4096)`,
		`limits.read_timeout: 500ms is too short to read a request: use at least 1s (the default is 1m)`,
		`limits.idle_timeout: must be positive, got -1s (leave it out for the default, 2m)`,
		`shutdown.delay: must be 0 or positive, got -1s`,
		`shutdown.grace: must be positive, got -30s (leave it out for the default, 30s)`,
		`log.level: unknown level "verbose" (want one of debug, info, warn, error)`,
		`log.format: unknown format "logfmt" (want one of text, json)`,
	}},
	{name: "max_buffered under max_response", file: "max_buffered.yaml", want: []string{
		`limits.max_buffered: 32MiB is less than limits.max_response (64MiB): an answer that size could never be held; write at least 64MiB, or leave it out`,
	}},
	{name: "pricing", file: "pricing.yaml", want: []string{
		`providers.groq.pricing.llama-3.3-70b: no target sends model "llama-3.3-70b" to groq (did you mean "llama-3.3-70b-versatile"?); pricing is by upstream model (the model_map value), and groq's are: llama-3.1-8b, llama-3.3-70b-versatile`,
		`providers.groq.pricing.llama-3.3-70b-versatile.input: must be 0 or positive, got -0.59`,
		`providers.groq.pricing.llama-3.1-8b.output: must be 0 or positive, got -1`,
		`providers.spare.pricing.anything: no target uses provider "spare", so this price is never read`,
	}},
	{name: "listeners on one address", file: "listeners_same.yaml", want: []string{
		`admin.listen: 127.0.0.1:9000 collides with listen 127.0.0.1:9000 (the same address): serve would fail with "address already in use"; give the two listeners different ports`,
	}},
	{name: "listener on every address", file: "listeners_wildcard.yaml", want: []string{
		`admin.listen: 127.0.0.1:9000 collides with listen 0.0.0.0:9000 (the same port, and 0.0.0.0 listens on every IPv4 address): serve would fail with "address already in use"; give the two listeners different ports`,
	}},
	{name: "listener on the other's default", file: "listeners_default.yaml", want: []string{
		`listen: localhost:9464 collides with admin.listen 127.0.0.1:9464 (the same port on the same host): serve would fail with "address already in use"; give the two listeners different ports`,
	}},
	{name: "both addresses invalid", file: "bad_addresses.yaml", want: []string{
		`listen: invalid address "8080" (want host:port, e.g. 127.0.0.1:8080)`,
		`admin.listen: invalid address "localhost" (want host:port, e.g. 127.0.0.1:8080)`,
	}},
	{name: "the same target twice", file: "duplicate_target.yaml", want: []string{
		`targets[3]: the same target as targets[0]: both serve llama-3.1-8b, llama-3.3-70b through provider "groq"; list it once (for more tries use retry.attempts)`,
	}},
	{name: "ingest without a token, foreign lists", file: "ingest.yaml", want: []string{
		`telemetry.ingest.token: required when ingest is enabled and admin.listen (0.0.0.0:9464) is not a loopback address: without it anyone who reaches that port can send spans that steer routing`,
		`telemetry.ingest.foreign.services[1]: must not be empty`,
		`telemetry.ingest.foreign.unary_services[0]: "search" is not in services, so its spans are never taken`,
		`telemetry.ingest.foreign.unary_services[1]: must not be empty`,
	}},
	{name: "foreign without ingest", file: "foreign_without_ingest.yaml", want: []string{
		`telemetry.ingest.foreign.enabled: foreign spans arrive on the ingest endpoint: set telemetry.ingest.enabled: true too`,
	}},
	{name: "not YAML", file: "not_yaml.yaml", want: []string{
		`line 1, column 12: not valid YAML: sequence end token ']' not found`,
	}},
	{name: "not a mapping", file: "not_a_mapping.yaml", want: []string{
		`the config must be a mapping of keys (listen, admin, auth, limits, shutdown, log, response_model, providers, strategy, aliases, routes, targets, telemetry), not a list`,
	}},
	{name: "two documents", file: "two_documents.yaml", want: []string{
		`line 4: a second YAML document; a config file is one document (remove the --- separator)`,
	}},
	{name: "a mapping merging itself", file: "merge_self.yaml", want: []string{
		`providers.a: << merges nest too deeply (does a mapping merge itself?)`,
	}},
	{name: "a top-level merge of nothing, each error once", file: "merge_no_anchor.yaml", want: []string{
		`<< must merge a mapping, not a number`,
		`alias *nope names no anchor`,
	}},
	{name: "an alias of nothing, once and at its field", file: "alias_no_anchor.yaml", want: []string{
		`providers: alias *nope names no anchor`,
	}},
	{name: "a target without virtual_key, model_map entries without a name", file: "target_names.yaml", want: []string{
		`targets[0].virtual_key: required: the name of a provider (not a client key; those are auth.keys)`,
		`targets[1].model_map: empty client model name`,
		`targets[1].model_map.m: empty upstream model`,
		`targets[1].model_map.n: empty upstream model`,
	}},
	{name: "no providers, no targets", file: "no_providers.yaml", want: []string{
		`providers: at least one provider is required`,
		`targets: at least one target is required`,
	}},
	{name: "a target but no providers", file: "no_providers_target.yaml", want: []string{
		`providers: at least one provider is required`,
		`targets[0].virtual_key: unknown provider "groq" (none is configured)`,
	}},
	{name: "a provider without a value", file: "provider_empty.yaml", want: []string{
		`providers.groq: must be a mapping with kind and base_url`,
	}},
	{name: "simulator config", file: "sim_config.yaml", want: []string{simConfigMsg}},
	{name: "a variable set but empty, and one error per unset variable", file: "env_empty.yaml",
		env: map[string]string{"OPENAI_API_KEY": ""}, want: []string{
			`auth.keys[0]: environment variable FIRSTBYTE_API_KEY is not set`,
			`providers.openai.api_key: environment variable OPENAI_API_KEY is set but empty`,
			`providers.groq.base_url: environment variable GROQ_BASE_URL is not set`,
		}},
	{name: "a virtual_key typo before the prices that follow from it", file: "virtual_key_typo.yaml", want: []string{
		`targets[0].virtual_key: unknown provider "grok" (did you mean "groq"?)`,
		`providers.groq.pricing.llama-3.3-70b-versatile: no target uses provider "groq", so this price is never read (targets[0].virtual_key names no provider: was it meant to be "groq"?)`,
		`targets[2].virtual_key: unknown provider "togther" (did you mean "together"?)`,
		`providers.together.pricing.meta-llama/Llama-3.1-8B-Instruct-Turbo: no target sends model "meta-llama/Llama-3.1-8B-Instruct-Turbo" to together; ` +
			`pricing is by upstream model (the model_map value), and together's are: meta-llama/Llama-3.3-70B-Instruct-Turbo ` +
			`(targets[2].virtual_key names no provider: was it meant to be "together"?)`,
	}},
}

const simConfigMsg = "this looks like a simulator config (firstbyte sim -config FILE), not a gateway config: " +
	"its providers are a list of simulated servers; a gateway config names providers in a mapping and routes to them with targets"

// configWarningTests are testdata files that validate but have warnings,
// and every warning, in order.
var configWarningTests = []struct {
	name string
	file string
	want []string
}{
	{name: "api_keys too short to be real", file: "short_keys.yaml", want: []string{
		`providers.a.api_key: is 1 character(s) long; no provider issues a key under 8: a placeholder the provider will refuse`,
		`providers.seven.api_key: is 7 character(s) long; no provider issues a key under 8: a placeholder the provider will refuse`,
	}},
	{name: "base_urls without their API path", file: "base_url_paths.yaml", want: []string{
		`providers.openai.base_url: https://api.openai.com has no API path: requests would go to https://api.openai.com/chat/completions, which answers 404; write https://api.openai.com/v1`,
		`providers.anthropic.base_url: https://api.anthropic.com has no API path: requests would go to https://api.anthropic.com/messages, which answers 404; write https://api.anthropic.com/v1`,
		`providers.groq.base_url: https://api.groq.com/v1 is not the API root of api.groq.com (/openai/v1): requests would go to https://api.groq.com/v1/chat/completions, which answers 404; write https://api.groq.com/openai/v1`,
		`providers.fireworks.base_url: https://api.fireworks.ai/inference is not the API root of api.fireworks.ai (/inference/v1): requests would go to https://api.fireworks.ai/inference/chat/completions, which answers 404; write https://api.fireworks.ai/inference/v1`,
		`providers.openrouter.base_url: https://openrouter.ai/api/v1/chat/completions is not the API root of openrouter.ai (/api/v1): requests would go to https://openrouter.ai/api/v1/chat/completions/chat/completions, which answers 404; write https://openrouter.ai/api/v1`,
		`providers.proxy.base_url: https://llm-proxy.internal has no version segment (such as /v1, /v1beta, /openai/v1): an OpenAI-compatible API's root ends in one, and without it requests would go to https://llm-proxy.internal/chat/completions, which usually answers 404; write the provider's API root, e.g. https://llm-proxy.internal/v1`,
	}},
}

func TestConfigWarnings(t *testing.T) {
	t.Parallel()
	for _, tt := range configWarningTests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadTestConfig(t, tt.file, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s: Validate() = %v, want nil (warnings are not errors)", tt.file, err)
			}
			var got []string
			for _, w := range cfg.Warnings() {
				got = append(got, w.Error())
				if strings.Contains(w.Error(), "secret") {
					t.Errorf("a warning shows the URL's credentials: %s", w)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s: warnings\n%s\nwant\n%s", tt.file, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// The examples and the valid fixtures warn of nothing.
	for _, f := range configValidFiles {
		cfg, err := loadTestConfig(t, f, validEnv)
		if err != nil {
			t.Fatal(err)
		}
		if ws := cfg.Warnings(); len(ws) > 0 {
			t.Errorf("%s: warnings %v, want none", f, ws)
		}
	}
}

// configValidFiles are the testdata files that must load and validate.
var configValidFiles = []string{"valid.yaml", "minimal.yaml", "anchors.yaml", "ingest_loopback.yaml", "cost_optimized_mode.yaml", "hosts_valid.yaml", "least_completion_mode.yaml"}

func TestLoadConfigErrors(t *testing.T) {
	t.Parallel()
	modes := strings.Join(Modes, ", ")
	for _, tt := range configErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "{modes}", modes)
			}
			got := configErrors(t, tt.file, tt.env)
			if !slices.Equal(got, want) {
				t.Errorf("%s: errors\n%s\nwant\n%s", tt.file, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	for _, f := range configValidFiles {
		t.Run(f, func(t *testing.T) {
			if got := configErrors(t, f, validEnv); got != nil {
				t.Errorf("%s: errors\n%s\nwant none", f, strings.Join(got, "\n"))
			}
		})
	}
}

// TestConfigTestdataAllTested: every testdata file is in one of the tables
// above, so no fixture is left unchecked.
func TestConfigTestdataAllTested(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tested := slices.Clone(configValidFiles)
	for _, tt := range configErrorTests {
		tested = append(tested, tt.file)
	}
	for _, tt := range configWarningTests {
		tested = append(tested, tt.file)
	}
	for _, f := range files {
		if !slices.Contains(tested, filepath.Base(f)) {
			t.Errorf("testdata/%s is in no table of config_test.go", filepath.Base(f))
		}
	}
}

// TestEveryValidateMessageHasARow: every message Validate writes (each
// v.add and v.addAfter format in validate*.go, its verbs matching anything) is some line
// of configErrorTests, so none goes untested. "%s" alone is an
// unknownValue, whose wording the rows of typos.yaml and many_errors.yaml
// cover.
func TestEveryValidateMessageHasARow(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("validate*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no validate*.go: %v", err)
	}
	verb := regexp.MustCompile(`%[sdgqv]`)
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		inspectAdds(t, fset, f, verb, &found)
	}
	if found < 40 {
		t.Fatalf("found %d v.add calls in validate*.go; has it been restructured?", found)
	}
}

// inspectAdds checks every v.add and v.addAfter message in f (see
// TestEveryValidateMessageHasARow), counting them in found.
func inspectAdds(t *testing.T, fset *token.FileSet, f *ast.File, verb *regexp.Regexp, found *int) {
	t.Helper()
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		msgArg := map[string]int{"add": 1, "addAfter": 2}[sel.Sel.Name] // the format's argument
		if msgArg == 0 || len(call.Args) <= msgArg {
			return true
		}
		*found++
		lit, ok := call.Args[msgArg].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s: the message is not a string literal; this test cannot check it", fset.Position(call.Pos()))
			return true
		}
		format, _ := strconv.Unquote(lit.Value)
		if format == "%s" {
			return true
		}
		parts := verb.Split(format, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re := regexp.MustCompile(`: ` + strings.Join(parts, ".*") + `$`)
		for _, tt := range configErrorTests {
			if slices.ContainsFunc(tt.want, re.MatchString) {
				return true
			}
		}
		t.Errorf("%s: %q is in no row of configErrorTests: add a testdata file that makes it", fset.Position(call.Pos()), format)
		return true
	})
}

// TestTopLevelMergeBudgetSpentOnce: a top-level merge that expands to more
// than a third of the merge budget decodes; the budget is spent once for
// the file, not once for every look at its top level.
func TestTopLevelMergeBudgetSpentOnce(t *testing.T) {
	t.Parallel()
	const fan = 50 // each level merges its source fan times
	inner := "&m1 {listen: 127.0.0.1:8080}" + strings.Repeat(", *m1", fan-1)
	outer := "&m2 {<<: [" + inner + "]}" + strings.Repeat(", *m2", fan-1)
	text := "<<: [" + outer + "]\n" +
		"providers:\n  local: {base_url: \"http://127.0.0.1:9000/v1\", models: [m]}\n" +
		"targets:\n  - virtual_key: local\n"
	d := newDecoder()
	file, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		t.Fatal(err)
	}
	d.collectAnchors(file.Docs[0].Body)
	if _, ok := d.mappingEntries(file.Docs[0].Body, ""); !ok || d.mergedEntries*3 < maxMergeEntries || d.mergedEntries >= maxMergeEntries {
		t.Fatalf("the merge expands to %d entries, want between a third of %d and %d", d.mergedEntries, maxMergeEntries, maxMergeEntries)
	}
	cfg, err := Parse([]byte(text), env(nil))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatalf("errors:\n%v\nwant none", err)
	}
	if cfg.Listen != "127.0.0.1:8080" {
		t.Errorf("listen = %q, want the merged 127.0.0.1:8080", cfg.Listen)
	}
}

// TestValidateOrderIsStable: the same file gives the same errors in the
// same order every time (maps of several keys included), sorted by where
// they are in the file.
func TestValidateOrderIsStable(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"many_errors.yaml", "typos.yaml", "wrong_types.yaml", "pricing.yaml", "duplicate_target.yaml"} {
		first := configErrors(t, file, nil)
		for range 20 {
			if got := configErrors(t, file, nil); !slices.Equal(got, first) {
				t.Fatalf("%s: errors\n%s\nthen\n%s", file, strings.Join(first, "\n"), strings.Join(got, "\n"))
			}
		}
		cfg, err := loadTestConfig(t, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		var fes FieldErrors
		if !errors.As(cfg.Validate(), &fes) {
			t.Fatalf("%s: Validate() is not FieldErrors", file)
		}
		for i := 1; i < len(fes); i++ {
			a, b := fes[i-1], fes[i]
			if b.Line != 0 && (a.Line == 0 || a.Line > b.Line || (a.Line == b.Line && a.Column > b.Column)) {
				t.Errorf("%s: %q (line %d:%d) after %q (line %d:%d): not in file order", file, b, b.Line, b.Column, a, a.Line, a.Column)
			}
		}
	}
}

func TestValidateReportsEveryErrorAsFieldErrors(t *testing.T) {
	t.Parallel()
	cfg, err := loadTestConfig(t, "many_errors.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var fes FieldErrors
	if !errors.As(cfg.Validate(), &fes) {
		t.Fatalf("Validate() is not FieldErrors")
	}
	for _, fe := range fes {
		if fe.Path == "" || fe.Line == 0 {
			t.Errorf("error without field path or line: %+v", fe)
		}
	}
}

// TestSimulatorConfigIsNamed: the simulator's own example is recognised as
// one clear error, not a cascade.
func TestSimulatorConfigIsNamed(t *testing.T) {
	t.Parallel()
	cfg, err := Load("../../examples/sim.yaml")
	if cfg != nil || err == nil || err.Error() != simConfigMsg {
		t.Errorf("Load(examples/sim.yaml) = %v, %v; want only %q", cfg, err, simConfigMsg)
	}
}

// TestErrorsNeverShowSecrets: a key, token or client key of the wrong
// shape is reported without repeating it.
func TestErrorsNeverShowSecrets(t *testing.T) {
	t.Parallel()
	const canary = "sk-canary-4242"
	cfg, err := Parse([]byte(fmt.Sprintf(`
admin: {listen: 127.0.0.1:9464, token: [%[1]s]}
auth: {keys: %[1]s}
providers:
  p: {base_url: "http://127.0.0.1:1/v1", models: [m], api_key: [%[1]s]}
targets: [{virtual_key: p}]
telemetry: {ingest: {token: {%[1]s: 1}}}
`, canary)), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("Validate() = %v, want errors that do not contain %q", err, canary)
	}
	if n := len(err.(FieldErrors)); n != 4 {
		t.Errorf("Validate() gave %d errors, want 4:\n%v", n, err)
	}
}

func TestListenersCollide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "127.0.0.1:9464", false},
		{"0.0.0.0:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "0.0.0.0:8080", true},
		{"0.0.0.0:8080", "10.1.2.3:8080", true},
		{":8080", "127.0.0.1:8080", true},
		{"[::]:8080", "127.0.0.1:8080", true},
		{"[::]:8080", "[::1]:8080", true},
		{"0.0.0.0:8080", "[::1]:8080", false},
		{"localhost:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "127.0.0.2:8080", false},
		{"[::1]:8080", "[0:0:0:0:0:0:0:1]:8080", true},
		{"127.0.0.1:0", "127.0.0.1:0", false}, // port 0: each gets a free one
		{"gw.internal:8080", "GW.internal:8080", true},
		{"gw.internal:8080", "127.0.0.1:8080", false},
		{"gw.internal:8080", "0.0.0.0:8080", true},
	}
	for _, tt := range tests {
		if _, got := listenersCollide(tt.a, tt.b); got != tt.want {
			t.Errorf("listenersCollide(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true, "localhost:9464": true, "[::1]:9464": true, "127.8.0.1:1": true,
		"0.0.0.0:9464": false, ":9464": false, "[::]:9464": false, "10.0.0.1:9464": false, "gw:9464": false, "nonsense": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	keys := []string{"virtual_key", "model_map", "retry", "weight"}
	tests := []struct {
		got        string
		candidates []string
		want       string
	}{
		{"modelmap", keys, "model_map"},
		{"virtual_keys", keys, "virtual_key"},
		{"virtualKey", keys, "virtual_key"},
		{"wieght", keys, "weight"},
		{"retries", keys, ""}, // three edits from retry: too far for a 7-letter word
		{"timeuot", []string{"timeout", "total"}, "timeout"},
		{"warning", logLevels, "warn"},
		{"INFO", logLevels, "info"},
		{"grok", []string{"groq", "together"}, "groq"},
		{"zzz", keys, ""},
		{"x", keys, ""},
		{"", keys, ""},
		{"least_latency", []string{"ewma-latency", "least-latency"}, "least-latency"},
		{"fastest", []string{"ewma-latency", "least-latency", "fallback"}, ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.got, tt.candidates); got != tt.want {
			t.Errorf("suggest(%q, %v) = %q, want %q", tt.got, tt.candidates, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"timeuot", "timeout", 1}, {"ab", "ba", 1}, {"abc", "abc", 0}, {"naïve", "naive", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"10MiB", 10 << 20, true}, {"512KiB", 512 << 10, true}, {"2MB", 2000000, true},
		{"1024", 1024, true}, {"1G", 1 << 30, true}, {"-1", 0, false}, {"ten", 0, false}, {"", 0, false},
		{"9999999999999GiB", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestByteSizeString(t *testing.T) {
	t.Parallel()
	for size, want := range map[ByteSize]string{0: "0", 1000: "1000", 1 << 10: "1KiB", 10 << 20: "10MiB", 1536 << 10: "1536KiB", 2 << 30: "2GiB"} {
		if got := size.String(); got != want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(size), got, want)
		}
		if back, err := ParseByteSize(want); err != nil || back != size {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", want, back, err, size)
		}
	}
}

func TestTargetRoutes(t *testing.T) {
	t.Parallel()
	target := Target{VirtualKey: "groq", ModelMap: map[string]string{"big": "llama-70b", "small": "llama-8b-instant"}}
	p := &Provider{Models: []string{"small", "mixtral"}}
	want := map[string]string{"big": "llama-70b", "small": "llama-8b-instant", "mixtral": "mixtral"}
	if got := target.Routes(p); !maps.Equal(got, want) {
		t.Errorf("Routes = %v, want %v (the provider's models as themselves, model_map winning)", got, want)
	}
	if got := (Target{}).Routes(p); !maps.Equal(got, map[string]string{"small": "small", "mixtral": "mixtral"}) {
		t.Errorf("Routes without model_map = %v, want the provider's models", got)
	}
	if got := target.Routes(nil); !maps.Equal(got, target.ModelMap) {
		t.Errorf("Routes(nil) = %v, want the model_map", got)
	}
	if got := (Target{}).Routes(&Provider{}); len(got) != 0 {
		t.Errorf("Routes of nothing = %v, want none", got)
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{0: "0s", 30 * time.Second: "30s", 10 * time.Minute: "10m", time.Hour: "1h", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestExampleConfigsAreValid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, f := range files {
		if strings.HasSuffix(filepath.Base(f), "sim.yaml") { // simulator configs: TestSimulatorConfigIsNamed, and internal/sim's tests
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Parse(data, func(string) (string, bool) { return "set-by-the-environment", true })
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if ws := cfg.Warnings(); len(ws) > 0 {
				t.Errorf("%s: warnings\n%v", f, ws)
			}
		})
	}
}

// TestDecoderKnowsEveryFieldType: every field of the config structs has a
// type the decoder handles (it panics on one it does not), so a new field
// cannot silently fail to decode.
func TestDecoderKnowsEveryFieldType(t *testing.T) {
	t.Parallel()
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty {
		case durationType, byteSizeType:
			return
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice:
			walk(ty.Elem(), path)
		case reflect.Map:
			if ty.Key().Kind() != reflect.String {
				t.Errorf("%s: map key %s, want string", path, ty.Key())
			}
			walk(ty.Elem(), path)
		case reflect.Struct:
			fields := yamlFields(ty)
			for _, name := range fieldNames(fields) {
				walk(ty.Field(fields[name]).Type, joinPath(path, name))
			}
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		default:
			t.Errorf("%s: type %s is not decoded", path, ty)
		}
	}
	walk(reflect.TypeFor[Config](), "")
}
