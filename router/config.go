package router

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Config is the gateway's configuration file (SPEC section 3). It is plain
// data: Load fills it, applyDefaults puts every default in one place, and
// Validate reports every problem with the field path it concerns.
type Config struct {
	// Listen is the client API address. Zero: 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	Admin  Admin  `yaml:"admin"`
	Auth   Auth   `yaml:"auth"`
	Limits Limits `yaml:"limits"`
	// Providers are the virtual keys, by name.
	Providers map[string]*ProviderConfig `yaml:"providers"`
	Strategy  StrategyConfig             `yaml:"strategy"`
	// Targets are tried in the order the strategy gives; their declaration
	// order is the fallback order and breaks latency ties.
	Targets   []TargetConfig `yaml:"targets"`
	Telemetry Telemetry      `yaml:"telemetry"`

	// unsetVars records fields whose ${VAR} named an unset variable, so
	// Validate can say which field needs which variable.
	unsetVars []FieldError
}

// Admin is the operator-facing listener (/metrics, /health, /readyz,
// /debug/routing, /v1/traces).
type Admin struct {
	// Listen is the admin address. Zero: 127.0.0.1:9464.
	Listen string `yaml:"listen"`
}

// Auth guards the client API.
type Auth struct {
	// Keys, when non-empty, are the only client keys accepted (as
	// "Authorization: Bearer KEY" or "x-api-key: KEY"). Empty: no auth.
	Keys []string `yaml:"keys"`
}

// Limits bound what a client may send.
type Limits struct {
	// MaxBody is the largest request body accepted ("10MiB", "512KiB",
	// "1000000"). Zero: 10 MiB. Larger bodies get 413.
	MaxBody ByteSize `yaml:"max_body"`
}

// ProviderConfig is one upstream account (a virtual key).
type ProviderConfig struct {
	// Kind is the wire format: "openai" or "anthropic". Zero: openai.
	Kind string `yaml:"kind"`
	// BaseURL is the API root including its version path, e.g.
	// https://api.groq.com/openai/v1 or https://api.anthropic.com/v1.
	// Required.
	BaseURL string `yaml:"base_url"`
	// APIKey is sent upstream (Bearer for openai, x-api-key for anthropic).
	// Empty: no credential is sent.
	APIKey string `yaml:"api_key"`
	// Models are the client-facing models served without a model_map.
	Models  []string `yaml:"models"`
	Timeout Timeouts `yaml:"timeout"`
	// MaxConcurrency caps in-flight requests to this provider. Zero: no cap.
	MaxConcurrency int `yaml:"max_concurrency"`
	// Queue is how many requests may wait for a slot when MaxConcurrency is
	// reached; beyond that the attempt fails over ("queue full"). Zero: none
	// wait.
	Queue          int            `yaml:"queue"`
	CircuitBreaker CircuitBreaker `yaml:"circuit_breaker"`
}

// Timeouts bound one attempt.
type Timeouts struct {
	// FirstByte bounds the wait from sending to the first chunk (streaming)
	// or the whole response (unary); past it the attempt fails over. Zero: 30s.
	FirstByte time.Duration `yaml:"first_byte"`
	// Total bounds the whole attempt including streaming. Zero: 10m.
	Total time.Duration `yaml:"total"`
}

// CircuitBreaker opens after consecutive failover-safe failures and skips
// the provider until the cooldown has passed.
type CircuitBreaker struct {
	// Failures is the number of consecutive failures that opens the
	// circuit. Zero: 5. Negative values are invalid; use a large number to
	// effectively disable it.
	Failures int `yaml:"failures"`
	// Cooldown is how long the circuit stays open. Zero: 30s.
	Cooldown time.Duration `yaml:"cooldown"`
}

// StrategyConfig chooses how eligible targets are ordered.
type StrategyConfig struct {
	// Mode names a registered strategy (see Strategies). Zero: least-latency.
	Mode string `yaml:"mode"`
}

// TargetConfig puts a provider behind one or more client-facing models.
type TargetConfig struct {
	// VirtualKey names a provider. Required.
	VirtualKey string `yaml:"virtual_key"`
	// ModelMap maps client models to upstream models; a model listed in the
	// provider's models and not here goes upstream under its own name.
	ModelMap map[string]string `yaml:"model_map"`
	Retry    Retry             `yaml:"retry"`
	// Weight is used by loadbalance. Nil: 1. Ignored by latency modes.
	Weight *float64 `yaml:"weight"`
}

// Retry is how often a target is tried before moving on.
type Retry struct {
	// Attempts is the number of extra tries on this target. Zero: none.
	Attempts int `yaml:"attempts"`
}

// Telemetry configures the OpenTelemetry side.
type Telemetry struct {
	// ServiceName is the resource's service.name (OTEL_SERVICE_NAME wins).
	// Zero: firstbyte.
	ServiceName string `yaml:"service_name"`
	// OTLPEndpoint is the OTLP/HTTP base URL spans are exported to. Empty:
	// OTEL_EXPORTER_OTLP_ENDPOINT; neither: no export.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	Ingest       Ingest `yaml:"ingest"`
}

// Ingest lets peers' spans in on admin POST /v1/traces (SPEC section 7).
type Ingest struct {
	// Enabled turns the endpoint on. Zero: off.
	Enabled bool `yaml:"enabled"`
	// Token, when set, must come as "Authorization: Bearer TOKEN".
	Token string `yaml:"token"`
}

// Defaults (one place).
const (
	DefaultListen       = "127.0.0.1:8080"
	DefaultAdminListen  = "127.0.0.1:9464"
	DefaultMaxBody      = 10 << 20
	DefaultKind         = KindOpenAI
	DefaultFirstByte    = 30 * time.Second
	DefaultTotal        = 10 * time.Minute
	DefaultCBFailures   = 5
	DefaultCBCooldown   = 30 * time.Second
	DefaultMode         = "least-latency"
	DefaultServiceName  = "firstbyte"
	DefaultTargetWeight = 1.0
)

// Provider kinds (wire formats).
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
)

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if c.Limits.MaxBody == 0 {
		c.Limits.MaxBody = DefaultMaxBody
	}
	for _, p := range c.Providers {
		if p == nil {
			continue
		}
		if p.Kind == "" {
			p.Kind = DefaultKind
		}
		if p.Timeout.FirstByte == 0 {
			p.Timeout.FirstByte = DefaultFirstByte
		}
		if p.Timeout.Total == 0 {
			p.Timeout.Total = DefaultTotal
		}
		if p.CircuitBreaker.Failures == 0 {
			p.CircuitBreaker.Failures = DefaultCBFailures
		}
		if p.CircuitBreaker.Cooldown == 0 {
			p.CircuitBreaker.Cooldown = DefaultCBCooldown
		}
	}
	if c.Strategy.Mode == "" {
		c.Strategy.Mode = DefaultMode
	}
	for i := range c.Targets {
		if c.Targets[i].Weight == nil {
			w := DefaultTargetWeight
			c.Targets[i].Weight = &w
		}
	}
	if c.Telemetry.ServiceName == "" {
		c.Telemetry.ServiceName = DefaultServiceName
	}
}

// LoadConfig reads, expands and defaults a config file. It does not
// validate: call Validate, which reports every problem at once.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, os.LookupEnv)
}

// ParseConfig decodes YAML (unknown keys and duplicate keys are errors),
// expands ${VAR} and ${VAR:-default} in every string with lookup, and
// applies defaults.
func ParseConfig(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
			return nil, decodeError(data, err)
		}
	}
	c.unsetVars = expandStrings(reflect.ValueOf(&c).Elem(), "", lookup)
	c.applyDefaults()
	return &c, nil
}

// decodeError names the field a YAML decode error is about
// ("providers.local.max_concurrency: cannot unmarshal ...") and keeps the
// source excerpt that points at it.
func decodeError(data []byte, err error) error {
	var yerr yaml.Error
	if !errors.As(err, &yerr) || yerr.GetToken() == nil {
		return fmt.Errorf("config: %w", err)
	}
	pos := yerr.GetToken().Position
	where := fmt.Sprintf("line %d", pos.Line)
	if file, perr := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey()); perr == nil {
		finder := &nodeAt{line: pos.Line, column: pos.Column}
		for _, doc := range file.Docs {
			ast.Walk(finder, doc)
		}
		if finder.path != "" {
			where = finder.path
		}
	}
	return fmt.Errorf("%s: %s\n%s", where, yerr.GetMessage(), yaml.FormatError(err, false, true))
}

// nodeAt finds the YAML path of the node at a position: the innermost
// key or value there ("$.providers.local.max_concurrency" → without "$.").
type nodeAt struct {
	line, column int
	path         string
}

func (f *nodeAt) Visit(n ast.Node) ast.Visitor {
	if n == nil {
		return nil
	}
	if tk := n.GetToken(); tk != nil && tk.Position.Line == f.line && tk.Position.Column == f.column {
		if p := strings.TrimPrefix(strings.TrimPrefix(n.GetPath(), "$"), "."); p != "" {
			f.path = p
		}
	}
	return f
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandStrings walks v and expands ${VAR} in every string it holds,
// returning the fields that named an unset variable without a default.
// It runs once at load, so reflection is fine here.
func expandStrings(v reflect.Value, path string, lookup func(string) (string, bool)) []FieldError {
	var unset []FieldError
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !strings.Contains(s, "${") {
			return nil
		}
		out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if val, ok := lookup(m[1]); ok && val != "" {
				return val
			}
			if m[2] != "" {
				return m[3]
			}
			unset = append(unset, FieldError{Path: path, Msg: fmt.Sprintf("environment variable %s is not set", m[1])})
			return ""
		})
		v.SetString(out)
	case reflect.Pointer:
		if !v.IsNil() {
			unset = append(unset, expandStrings(v.Elem(), path, lookup)...)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			unset = append(unset, expandStrings(v.Field(i), joinPath(path, name), lookup)...)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			unset = append(unset, expandStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", lookup)...)
		}
	case reflect.Map:
		// Map values are not addressable: expand a copy and store it back.
		for _, k := range v.MapKeys() {
			elem := v.MapIndex(k)
			if elem.Kind() == reflect.String {
				cp := reflect.New(elem.Type()).Elem()
				cp.Set(elem)
				unset = append(unset, expandStrings(cp, joinPath(path, k.String()), lookup)...)
				v.SetMapIndex(k, cp)
				continue
			}
			unset = append(unset, expandStrings(elem, joinPath(path, k.String()), lookup)...)
		}
	}
	return unset
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// ByteSize is a size in bytes written as "10MiB", "512KiB", "2MB" or a
// plain number.
type ByteSize int64

// invalidByteSize marks a size that did not parse; Validate reports it with
// its field path (a decode error could not say which field it was).
const invalidByteSize ByteSize = -1

// UnmarshalYAML implements yaml.BytesUnmarshaler.
func (b *ByteSize) UnmarshalYAML(data []byte) error {
	s := strings.Trim(strings.TrimSpace(string(data)), `"'`)
	n, err := ParseByteSize(s)
	if err != nil {
		*b = invalidByteSize
		return nil
	}
	*b = n
	return nil
}

// ParseByteSize parses "10MiB", "10MB", "10M", "1024" and the like.
func ParseByteSize(s string) (ByteSize, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 10MiB, 512KiB or a byte count)", s)
	}
	return ByteSize(n * mult), nil
}

// Weight returns the target's weight with its default applied.
func (t TargetConfig) weight() float64 {
	if t.Weight == nil {
		return DefaultTargetWeight
	}
	return *t.Weight
}
