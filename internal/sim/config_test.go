package sim

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

func TestLoadConfigValid(t *testing.T) {
	got, err := LoadConfig(filepath.Join("testdata", "valid.yaml"))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	// Phase blocks name only some fields; the rest are inherited from the phase
	// before (spread 0.25 and status 503 in phase 0, everything but the interval in
	// phase 1 touches nothing else).
	want := &Config{
		Seed: 1,
		Providers: []Provider{
			{
				Name:   "fast",
				Listen: "127.0.0.1:0",
				Models: []string{"sim-small", "sim-large"},
				TTFB:   Dist{Median: 150 * time.Millisecond, Spread: 0.25},
				Stream: Pace{Chunks: 16, Interval: 15 * time.Millisecond},
				Errors: ErrorRate{Rate: 0.02, Status: 503},
				Phases: []Phase{
					{
						After:  time.Minute,
						TTFB:   &Dist{Median: 2 * time.Second, Spread: 0.25},
						Errors: &ErrorRate{Rate: 0.3, Status: 503},
					},
					{
						After:  2 * time.Minute,
						Stream: &Pace{Chunks: 16, Interval: 0},
					},
				},
			},
			{
				Name:              "steady",
				Listen:            "localhost:0",
				TTFB:              Dist{Median: DefaultMedian},
				Stream:            Pace{Chunks: DefaultChunks, Interval: DefaultInterval},
				Errors:            ErrorRate{Status: DefaultErrorStatus},
				ParallelToolCalls: true,
				RateLimit:         &RateLimit{Requests: 40, Window: DefaultRateWindow, RetryAfter: 2 * time.Second, After: 5 * time.Millisecond},
			},
			{
				Name:     "broken",
				Listen:   "[::1]:0",
				TTFB:     Dist{Median: 0},
				Stream:   Pace{Chunks: DefaultChunks, Interval: DefaultInterval},
				Errors:   ErrorRate{Status: DefaultErrorStatus},
				CutAfter: 3,
				StatusBody: &StatusBody{
					Status: 422,
					Body:   `{"error":{"message":"nope","type":"invalid_request_error"}}`,
				},
			},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadConfig(valid.yaml) =\n%+v\nwant\n%+v", got, want)
	}
}

// A resolved Config marshals to a file that parses back to the same Config: the
// exported types' YAML tags describe the same format the parser reads.
func TestConfigRoundTrip(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join("testdata", "valid.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(data)
	if err != nil {
		t.Fatalf("ParseConfig(Marshal(cfg)): %v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip =\n%+v\nwant\n%+v\nvia\n%s", back, cfg, data)
	}
}

func TestLoadConfigInvalid(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error, each required
	}{
		{"invalid_unknown_key", []string{`unknown field "sigma"`}},
		{"invalid_no_providers", []string{"providers: at least one provider is required"}},
		{"invalid_missing_name", []string{"providers[0].name: required"}},
		{"invalid_bad_name", []string{`providers[0].name: "a b": use letters`}},
		{"invalid_duplicate_name", []string{`providers[1].name: "fast" already used by providers[0]`}},
		{"invalid_non_loopback", []string{`providers[0].listen: "0.0.0.0:8080": only loopback addresses are allowed`}},
		{"invalid_all_interfaces", []string{`providers[0].listen: ":8080": only loopback addresses are allowed`}},
		{"invalid_hostname", []string{`providers[0].listen: "example.com:80": only loopback addresses are allowed`}},
		{"invalid_port", []string{`providers[0].listen: "127.0.0.1:99999": bad port`}},
		{"invalid_duplicate_port", []string{"providers[1].listen: port 9001 already used by providers[0]"}},
		{"invalid_negative_median", []string{"providers[1].ttfb.median: must be >= 0"}},
		{"invalid_spread", []string{"providers[0].ttfb.spread: 4: must be between 0 and 3"}},
		{"invalid_chunks", []string{"providers[0].stream.chunks: -1: must be between 0 and"}},
		{"invalid_interval", []string{"providers[0].stream.interval: must be >= 0"}},
		{"invalid_rate", []string{"providers[0].errors.rate: 1.5: must be between 0 and 1"}},
		{"invalid_status", []string{"providers[0].errors.status: 200: must be an error status"}},
		{"invalid_phase_after", []string{"providers[0].phases[0].after: must be > 0"}},
		{"invalid_phase_order", []string{"providers[0].phases[1].after: must be later than phases[0].after (1m0s)"}},
		{"invalid_phase_rate", []string{"providers[0].phases[0].errors.rate: -0.1: must be between 0 and 1"}},
		{"invalid_duration", []string{"[3:20] 150 is not a duration"}},
		{"invalid_duration_unit", []string{`[3:20] "150 ms" is not a duration`}},
		{"invalid_cut_after", []string{"providers[0].cut_after: must be >= 0"}},
		{"invalid_status_body", []string{"providers[0].status_body.status: 99: must be between 200 and 599"}},
		{"invalid_overflow_and_status_body", []string{"providers[0].context_overflow: cannot be combined with status_body"}},
		{"invalid_empty_model", []string{"providers[0].models[1]: must not be empty"}},
		{"invalid_rate_limit", []string{
			"providers[0].rate_limit.requests: -1: must be >= 0 (0: no request limit)",
			"providers[0].rate_limit.tokens: -5: must be >= 0 (0: no token limit)",
			"providers[0].rate_limit.window: must be >= 0 (0: 1s)",
			"providers[0].rate_limit.retry_after: must be >= 0 (0: until the window ends)",
			"providers[0].rate_limit.after: must be >= 0 (0: at once)",
		}},
		{"invalid_rate_limit_empty", []string{"providers[0].rate_limit.requests: a rate limit needs requests or tokens (or both) above 0"}},
		{"invalid_many", []string{
			"providers[0].name: required",
			`providers[0].listen: "10.0.0.1:80": only loopback`,
			"providers[0].ttfb.median: must be >= 0",
			"providers[0].ttfb.spread: -1: must be between",
			"providers[0].errors.rate: 2: must be between 0 and 1",
			"providers[0].errors.status: 302: must be an error status",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file+".yaml")
			cfg, err := LoadConfig(path)
			if err == nil {
				t.Fatalf("LoadConfig(%s) = %+v, want an error", path, cfg)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("LoadConfig(%s) error =\n%v\nwant it to contain %q", path, err, w)
				}
			}
		})
	}
}

// Every invalid fixture is in the table above, so a new file cannot go untested.
func TestInvalidFixturesAreTested(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 28 {
		t.Errorf("found %d invalid_*.yaml fixtures, TestLoadConfigInvalid lists 28: add the new ones to the table", len(files))
	}
}

// The Go API's zero values mean "no delay": a test can build a Provider with only a
// name and get instant answers.
func TestProviderZeroValueIsValid(t *testing.T) {
	p := Provider{Name: "zero"}
	if err := p.Validate(); err != nil {
		t.Fatalf("Provider{Name}.Validate() = %v, want nil", err)
	}
	if got := p.Stream.chunks(); got != DefaultChunks {
		t.Errorf("zero Pace chunks = %d, want %d", got, DefaultChunks)
	}
	if got := p.Errors.status(); got != DefaultErrorStatus {
		t.Errorf("zero ErrorRate status = %d, want %d", got, DefaultErrorStatus)
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.1.2.3:8080", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"LOCALHOST:0", true},
		{"0.0.0.0:0", false},
		{"[::]:0", false},
		{":0", false},
		{"192.168.1.2:80", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
		{"127.0.0.1:-1", false},
		{"127.0.0.1:http", false},
	}
	for _, tt := range tests {
		err := checkLoopback(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
		}
	}
}

// TestExampleSimConfig: the simulator config users start from is valid.
func TestExampleSimConfig(t *testing.T) {
	cfg, err := LoadConfig("../../examples/sim.yaml")
	if err != nil {
		t.Fatalf("examples/sim.yaml: %v", err)
	}
	if len(cfg.Providers) != 3 || len(cfg.Providers[0].Phases) != 1 {
		t.Errorf("examples/sim.yaml: %d providers, want 3 with a phase on the first", len(cfg.Providers))
	}
}

func TestMixedPoolExampleLoads(t *testing.T) {
	cfg, err := LoadConfig("../../examples/mixed-pool-sim.yaml")
	if err != nil {
		t.Fatalf("examples/mixed-pool-sim.yaml: %v", err)
	}
	if len(cfg.Providers) != 3 || cfg.Providers[2].Name != "anthropic-like" || len(cfg.Providers[2].Phases) != 1 {
		t.Errorf("examples/mixed-pool-sim.yaml: %+v", cfg.Providers)
	}
}
