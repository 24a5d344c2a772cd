package router

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	return ParseConfig(data, env(vars))
}

func TestLoadConfigValid(t *testing.T) {
	cfg, err := loadTestConfig(t, "valid.yaml", map[string]string{"FIRSTBYTE_API_KEY": "k1", "GROQ_API_KEY": "gsk"})
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"auth.keys expanded", cfg.Auth.Keys[0], "k1"},
		{"api_key expanded", cfg.Providers["groq"].APIKey, "gsk"},
		{"default from ${VAR:-default}", cfg.Providers["together"].APIKey, "none"},
		{"ingest token default", cfg.Telemetry.Ingest.Token, "t0ken"},
		{"max_body", cfg.Limits.MaxBody, ByteSize(2 << 20)},
		{"first_byte", cfg.Providers["groq"].Timeout.FirstByte, 5 * time.Second},
		{"kind default", cfg.Providers["together"].Kind, KindOpenAI},
		{"first_byte default", cfg.Providers["together"].Timeout.FirstByte, DefaultFirstByte},
		{"total default", cfg.Providers["together"].Timeout.Total, DefaultTotal},
		{"breaker failures", cfg.Providers["groq"].CircuitBreaker.Failures, 3},
		{"breaker default", cfg.Providers["together"].CircuitBreaker.Failures, DefaultCBFailures},
		{"retry", cfg.Targets[0].Retry.Attempts, 1},
		{"weight default", cfg.Targets[0].weight(), 1.0},
		{"weight", cfg.Targets[1].weight(), 2.0},
		{"model_map", cfg.Targets[1].ModelMap["llama-3.3-70b"], "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{"mode", cfg.Strategy.Mode, "least-latency"},
		{"service name", cfg.Telemetry.ServiceName, "gw"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := loadTestConfig(t, "minimal.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if cfg.Listen != DefaultListen || cfg.Admin.Listen != DefaultAdminListen {
		t.Errorf("listen = %q, %q; want loopback defaults", cfg.Listen, cfg.Admin.Listen)
	}
	if cfg.Limits.MaxBody != DefaultMaxBody {
		t.Errorf("max_body = %d, want %d", cfg.Limits.MaxBody, DefaultMaxBody)
	}
	if cfg.Strategy.Mode != "least-latency" {
		t.Errorf("mode = %q, want least-latency (the default)", cfg.Strategy.Mode)
	}
	if cfg.Telemetry.ServiceName != "firstbyte" {
		t.Errorf("service_name = %q", cfg.Telemetry.ServiceName)
	}
}

// TestLoadConfigReliableLatency: every mode SPEC section 5 names but
// cost-optimized is built, reliable-latency included.
func TestLoadConfigReliableLatency(t *testing.T) {
	cfg, err := ParseConfig([]byte(`strategy: {mode: reliable-latency}
providers:
  local: {base_url: "http://127.0.0.1:9101/v1", models: [m]}
targets: [{virtual_key: local}]
`), env(nil))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

// TestLoadConfigErrors: every decode or validation error names its field.
func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // substrings, each must appear in the error text
	}{
		{"unknown top-level key", "unknown_key.yaml", []string{`lisen: unknown field "lisen"`}},
		{"unknown nested key", "unknown_nested_key.yaml", []string{`providers.local.timeuot: unknown field "timeuot"`}},
		{"duplicate provider names", "duplicate_provider.yaml", []string{`providers.groq: mapping key "groq" already defined`}},
		{"wrong type", "wrong_type.yaml", []string{"providers.local.max_concurrency: cannot unmarshal string"}},
		{"bad size", "bad_size.yaml", []string{"limits.max_body: invalid size"}},
		{"empty targets", "empty_targets.yaml", []string{"targets: at least one target is required"}},
		{"every error at once", "many_errors.yaml", []string{
			`listen: invalid address "not an address"`,
			"auth.keys[0]: environment variable FIRSTBYTE_TEST_UNSET_KEY is not set",
			"auth.keys[0]: must not be empty",
			`providers.groq.kind: unknown kind "grpc"`,
			`providers.groq.base_url: invalid URL "ftp://example"`,
			"providers.groq.timeout.first_byte: 2m0s exceeds timeout.total 1m0s",
			"providers.groq.max_concurrency: must be 0 (unlimited) or positive",
			"providers.groq.queue: must be 0 or positive",
			"providers.groq.circuit_breaker.failures: must be positive",
			"providers.empty.base_url: required",
			`strategy.mode: unknown mode "fastest"`,
			`targets[0].virtual_key: unknown provider "grok"`,
			"targets[1].retry.attempts: must be 0 or positive, got -1",
			"targets[1].weight: must be 0 or positive, got -1",
			`targets[2]: serves no model`,
			`telemetry.otlp_endpoint: invalid URL "localhost:4318"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadTestConfig(t, tt.file, nil)
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				t.Fatalf("%s: no error, want %q", tt.file, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error\n%v\nwant it to contain %q", tt.file, err, w)
				}
			}
		})
	}
}

func TestValidateReportsEveryErrorAsFieldErrors(t *testing.T) {
	cfg, err := loadTestConfig(t, "many_errors.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var fes FieldErrors
	if !errors.As(cfg.Validate(), &fes) {
		t.Fatalf("Validate() is not FieldErrors")
	}
	if len(fes) < 15 {
		t.Errorf("len(FieldErrors) = %d, want >= 15 (all at once): %v", len(fes), fes)
	}
	for _, fe := range fes {
		if fe.Path == "" {
			t.Errorf("error without field path: %v", fe)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"10MiB", 10 << 20, true}, {"512KiB", 512 << 10, true}, {"2MB", 2000000, true},
		{"1024", 1024, true}, {"1G", 1 << 30, true}, {"-1", 0, false}, {"ten", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestExampleConfigsAreValid(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, f := range files {
		if filepath.Base(f) == "sim.yaml" { // a simulator config: router/sim checks it
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseConfig(data, func(string) (string, bool) { return "set", true })
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		})
	}
}
