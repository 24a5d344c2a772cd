package config

import (
	"log/slog"
	"time"

	"github.com/goccy/go-yaml/token"
)

// Config is the gateway's configuration file. It is plain data: Load
// fills it, applyDefaults puts every default in one place, and Validate
// reports every problem, YAML-level and semantic, each with the field path
// it concerns. docs/config.md documents every key; a test keeps the two in
// step.
//
// Fields tagged secret:"true" hold credentials: their values never appear
// in an error, and check's summary only says whether they are set. Fields
// tagged reload:"restart" belong to what a process builds once (listeners,
// servers, the log encoder, the telemetry SDK): a reload that changes one
// is refused; ",hidden" keeps its values out of that refusal (a URL may
// carry credentials).
type Config struct {
	// Listen is the client API address. Zero: 127.0.0.1:8080. A reload
	// cannot change it.
	Listen string `yaml:"listen" reload:"restart"`
	Admin  Admin  `yaml:"admin"`
	Auth   Auth   `yaml:"auth"`
	Limits Limits `yaml:"limits"`
	// Shutdown is how a SIGTERM or SIGINT drains.
	Shutdown Shutdown `yaml:"shutdown"`
	Log      Log      `yaml:"log"`
	// ResponseModel is the model name answers report: "upstream", the
	// upstream model that answered (what cost-tracking tools price by),
	// translated answers included; or "requested", the name the client
	// asked for (a relayed answer is rewritten). Zero: upstream.
	ResponseModel string `yaml:"response_model"`
	// Providers are the virtual keys, by name: a target names one in its
	// virtual_key. Client keys are Auth.Keys, not these. At least one is
	// required.
	Providers map[string]*Provider `yaml:"providers"`
	Strategy  Strategy             `yaml:"strategy"`
	// Aliases are client model names that stand for a served model (alias
	// -> model). An alias resolves before anything else: routes, metrics
	// and logs see the model it names. Empty: none.
	Aliases map[string]string `yaml:"aliases"`
	// Routes give the models they match their own mode, hedge and
	// targets; the first route (in declaration order) matching a model
	// wins, and a model no route matches follows Strategy. Empty: Strategy
	// serves every model.
	Routes []Route `yaml:"routes"`
	// Targets are tried in the order the strategy gives; their declaration
	// order is the fallback order and breaks latency ties. At least one is
	// required.
	Targets   []Target  `yaml:"targets"`
	Telemetry Telemetry `yaml:"telemetry"`

	// What Parse learnt about the file besides its values, for
	// Validate: problems found while decoding, fields whose ${VAR} named
	// a variable that is not set or is empty, where each field path was
	// written, and the paths that could not be decoded (see decoder).
	decodeErrs []FieldError
	unsetVars  []FieldError
	positions  map[string]token.Position
	undecoded  map[string]bool
}

// Admin is the operator-facing listener (/metrics, /health, /readyz,
// /debug/routing, /admin/reload, /v1/traces).
type Admin struct {
	// Listen is the admin address. Zero: 127.0.0.1:9464. A reload cannot
	// change it.
	Listen string `yaml:"listen" reload:"restart"`
	// Token, when set, must come as "Authorization: Bearer TOKEN" on
	// /debug/routing and /admin/reload; /metrics, /health and /readyz stay
	// open. Empty: those two are open to whoever reaches the admin address.
	Token string `yaml:"token" secret:"true"`
}

// Auth guards the client API.
type Auth struct {
	// Keys, when non-empty, are the only client keys accepted (as
	// "Authorization: Bearer KEY" or "x-api-key: KEY"). Empty: no auth.
	Keys []string `yaml:"keys" secret:"true"`
}

// Limits bound what a client may send and an upstream may answer, and how
// long connections may sit.
type Limits struct {
	// MaxBody is the largest request body accepted ("10MiB", "512KiB",
	// "1000000"). Zero: 10 MiB. Larger bodies get 413.
	MaxBody ByteSize `yaml:"max_body"`
	// MaxResponse is the largest unary upstream answer read; a larger one
	// is a provider fault (failover-safe; 502 when it was the last
	// candidate). Streams are not bounded by it. Zero: 64 MiB.
	MaxResponse ByteSize `yaml:"max_response"`
	// MaxBuffered bounds the bytes the process holds for unary answers at
	// once, all requests together (beyond the 32 KiB each answer starts
	// with): an answer whose next buffer would not fit fails over as
	// response_buffer_full (503 when it was the last candidate), which is
	// not the provider's fault. At least MaxResponse. Zero: 96 MiB, or
	// MaxResponse when that is larger.
	MaxBuffered ByteSize `yaml:"max_buffered"`
	// MaxConnections caps open connections per listener (client and admin
	// each); beyond it new connections wait in the kernel's backlog. Zero:
	// 4096. There is no "unlimited"; write a large number.
	MaxConnections int `yaml:"max_connections" reload:"restart"`
	// ReadTimeout bounds reading a whole request, headers and body; the
	// headers get at most HeaderTimeout of it. Zero: 60s. Under 1s is
	// refused by Validate: no real client body arrives that fast.
	ReadTimeout time.Duration `yaml:"read_timeout" reload:"restart"`
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request, on both listeners. Zero: 120s.
	IdleTimeout time.Duration `yaml:"idle_timeout" reload:"restart"`
}

// MaxHeaderTimeout is the most of ReadTimeout that reading the request
// headers may take.
const MaxHeaderTimeout = 10 * time.Second

// HeaderTimeout is the budget for reading a request's headers:
// ReadTimeout, but at most MaxHeaderTimeout.
func (l Limits) HeaderTimeout() time.Duration {
	return min(l.ReadTimeout, MaxHeaderTimeout)
}

// Shutdown is the drain on SIGTERM or SIGINT: /readyz turns 503 at once,
// the listener keeps accepting for Delay, then stops, and in-flight
// requests get Grace to finish.
type Shutdown struct {
	// Delay is how long the listener keeps accepting after the signal, so
	// a load balancer polling /readyz can stop sending first. Zero: it
	// stops at once.
	Delay time.Duration `yaml:"delay"`
	// Grace is how long in-flight requests and streams then get; a stream
	// still open at its end ends with an error event. Zero: 30s.
	Grace time.Duration `yaml:"grace"`
}

// Log configures the process's log/slog output.
type Log struct {
	// Level is the least severe level written: debug, info, warn or
	// error. Zero: info.
	Level string `yaml:"level"`
	// Format is text or json. Zero: text.
	Format string `yaml:"format" reload:"restart"`
	// Requests writes one line per client request (never a prompt,
	// completion or key). Nil: true; an explicit false is kept. Read it
	// through LogRequests.
	Requests *bool `yaml:"requests"`
}

// LogRequests reports whether a line per client request is wanted
// (Requests, defaulting to true).
func (l Log) LogRequests() bool { return l.Requests == nil || *l.Requests }

// SlogLevel is Level as a slog.Level; an unknown level (which Validate
// refuses) reads as info.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Provider is one upstream account (a virtual key).
type Provider struct {
	// Kind is the host: one of Kinds (see hosts.go). Zero: openai.
	Kind string `yaml:"kind"`
	// BaseURL is the API root including its version path, e.g.
	// https://api.groq.com/openai/v1 or https://api.anthropic.com/v1; for
	// azure the resource endpoint, for vertex the bare host. Required for
	// openai, anthropic and azure; zero elsewhere: the host's own (from
	// Region for bedrock and vertex).
	BaseURL string `yaml:"base_url"`
	// APIKey is sent upstream (Bearer for openai and bedrock, x-api-key
	// for anthropic, api-key for azure, x-goog-api-key for gemini). Empty:
	// openai and anthropic send none; azure, bedrock and vertex use their
	// cloud's credential chain.
	APIKey string `yaml:"api_key" secret:"true"`
	// Region is a bedrock provider's AWS region (its host and its
	// signature's), or a vertex provider's location: global, us, eu or a
	// region such as us-east5. Required for both; no other kind takes it.
	Region string `yaml:"region"`
	// Project is a vertex provider's Google Cloud project. Required there.
	Project string `yaml:"project"`
	// APIVersion is an azure provider's API: v1 (/openai/v1/..., the
	// deployment as model) or a date such as 2024-10-21
	// (/openai/deployments/{deployment}/...?api-version=DATE). Zero: v1.
	APIVersion string `yaml:"api_version"`
	// Credentials is a vertex provider's Google credentials file (service
	// account or ADC JSON). Empty: Application Default Credentials.
	Credentials string `yaml:"credentials"`
	// Profile is a bedrock provider's AWS shared-config profile for the
	// default credential chain. Empty: AWS_PROFILE, else "default".
	Profile string `yaml:"profile"`
	// API overrides which call an upstream model goes through (APIFor):
	// bedrock converse or invoke, vertex invoke, gemini or openai. Empty:
	// chosen by the upstream model's name.
	API string `yaml:"api"`
	// Headers are added to every upstream request; Query to every upstream
	// URL (${VAR} allowed in both). Empty: none.
	Headers map[string]string `yaml:"headers" secret:"true"`
	Query   map[string]string `yaml:"query" secret:"true"`
	TLS     TLS               `yaml:"tls"`
	// HTTP2 is auto (Go's default: HTTP/2 over TLS when the server offers
	// it, HTTP/1.1 otherwise), prior_knowledge (unencrypted HTTP/2, h2c)
	// or off. Zero: auto.
	HTTP2 string `yaml:"http2"`
	// Models are the client-facing models served under the same name
	// upstream, by every target of this provider. Empty: its targets serve
	// only what their model_map names.
	Models    []string  `yaml:"models"`
	Timeout   Timeouts  `yaml:"timeout"`
	RateLimit RateLimit `yaml:"rate_limit"`
	// Responses says whether an openai provider serves the Responses API
	// (POST /responses): /v1/responses requests go to it as they came.
	// False: they are translated to Chat Completions for it, as for an
	// OpenAI-compatible server that has only that. Nil: true for kind
	// openai, false for anthropic (whose targets get them translated to
	// Messages); true on an anthropic provider is refused.
	Responses *bool `yaml:"responses"`
	// MaxConcurrency caps in-flight requests to this provider. Zero: no cap.
	MaxConcurrency int `yaml:"max_concurrency"`
	// Queue is how many requests may wait for a slot when MaxConcurrency is
	// reached; beyond that the attempt fails over ("queue full"). Zero: none
	// wait.
	Queue          int            `yaml:"queue"`
	CircuitBreaker CircuitBreaker `yaml:"circuit_breaker"`
	// Pricing is the rate card by upstream model (the model name sent
	// upstream, not the client's). cost-optimized ranks on it and
	// firstbyte_cost_usd_total counts with it. Nil, or a model missing:
	// unpriced (ranked last by cost-optimized, no cost counted).
	Pricing map[string]Price `yaml:"pricing"`
}

// Price is what one upstream model costs, in USD per million tokens.
type Price struct {
	// Input is the price of a million prompt tokens. Zero: free.
	Input float64 `yaml:"input"`
	// Output is the price of a million completion tokens. Zero: free.
	Output float64 `yaml:"output"`
}

// Timeouts bound one attempt.
type Timeouts struct {
	// FirstByte bounds the wait from sending to the first byte: a stream's
	// first event that carries data, a unary answer's response headers (its
	// body is then bounded by Total); past it the attempt fails over.
	// Zero: 30s.
	FirstByte time.Duration `yaml:"first_byte"`
	// Idle bounds the pause between two data events of a stream once it has
	// started; past it the stream ends with an error event and the attempt
	// is a provider fault (stall). At most Total. Zero: 30s.
	Idle time.Duration `yaml:"idle"`
	// Total bounds the whole attempt: a stream to its end, a unary answer
	// to the last byte of its body. Zero: 10m.
	Total time.Duration `yaml:"total"`
}

// RateLimit is how the provider's own rate-limit signals are honoured.
type RateLimit struct {
	// MaxCooldown caps how long one Retry-After, retry-after-ms or reset
	// header may cool the provider (skip it, reason rate_limited). Zero: 5m.
	MaxCooldown time.Duration `yaml:"max_cooldown"`
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

// Strategy chooses how eligible targets are ordered.
type Strategy struct {
	// Mode is one of Modes. Zero: least-latency.
	Mode  string `yaml:"mode"`
	Hedge Hedge  `yaml:"hedge"`
}

// Hedge races a second attempt against a first one that is late: when the
// first has produced no first byte after After, the next candidate in the
// mode's order starts in parallel and whichever answers first serves the
// request. It costs tokens (the loser's upstream may have started work):
// off unless Enabled.
type Hedge struct {
	// Enabled turns hedging on, in every mode. Zero: off.
	Enabled bool `yaml:"enabled"`
	// After is how late the first attempt must be: a quantile of its
	// target's own live samples (p50, p75, p90, p95 or p99; no hedge on a
	// target with fewer than 10 samples) or a duration (e.g. 300ms); never
	// less than 5ms. Zero: p95.
	After string `yaml:"after"`
	// Budget bounds hedges as a share of a model's requests over a
	// sliding 10 s window, so a slow provider never doubles the load.
	// Zero: 0.05.
	Budget float64 `yaml:"budget"`
	// Max is how many hedges one request may have in flight beside its
	// first attempt. Zero: 1.
	Max int `yaml:"max"`
}

// Target puts a provider behind one or more client-facing models.
type Target struct {
	// VirtualKey names a provider (a key of Config.Providers), not a
	// client key. Required.
	VirtualKey string `yaml:"virtual_key"`
	// ModelMap maps client models to upstream models; a model listed in the
	// provider's models and not here goes upstream under its own name.
	// Empty: the target serves the provider's models only.
	ModelMap map[string]string `yaml:"model_map"`
	Retry    Retry             `yaml:"retry"`
	// Weight is used by loadbalance, and breaks price ties in
	// cost-optimized. Nil: 1. Ignored by latency modes.
	Weight *float64 `yaml:"weight"`
}

// Retry is how often a target is tried before moving on.
type Retry struct {
	// Attempts is the number of extra tries on this target. Zero: none.
	Attempts int `yaml:"attempts"`
}

// Defaults (one place).
const (
	DefaultListen         = "127.0.0.1:8080"
	DefaultAdminListen    = "127.0.0.1:9464"
	DefaultMaxBody        = 10 << 20
	DefaultMaxResponse    = 64 << 20
	DefaultMaxBuffered    = 96 << 20
	DefaultMaxConnections = 4096
	DefaultReadTimeout    = 60 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
	DefaultShutdownGrace  = 30 * time.Second
	DefaultLogLevel       = "info"
	DefaultLogFormat      = "text"
	DefaultLogRequests    = true
	DefaultKind           = KindOpenAI
	DefaultFirstByte      = 30 * time.Second
	DefaultTotal          = 10 * time.Minute
	DefaultIdle           = 30 * time.Second
	DefaultMaxCooldown    = 5 * time.Minute
	DefaultCBFailures     = 5
	DefaultCBCooldown     = 30 * time.Second
	DefaultMode           = "least-latency"
	DefaultHedgeAfter     = "p95"
	DefaultHedgeBudget    = 0.05
	DefaultHedgeMax       = 1
	DefaultServiceName    = "firstbyte"
	DefaultResponseModel  = ResponseModelUpstream
	DefaultTargetWeight   = 1.0
)

// ResponseModel values.
const (
	ResponseModelUpstream  = "upstream"
	ResponseModelRequested = "requested"
)

// Modes are the routing modes strategy.mode accepts, sorted; package
// router registers a strategy under each of these names (its tests hold
// the two lists together).
var Modes = []string{"cost-optimized", "ewma-latency", "fallback", "least-completion", "least-latency", "loadbalance", "reliable-latency", "round-robin"}

// Log levels and formats Validate accepts.
var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
	// responseModels are the values response_model accepts.
	responseModels = []string{ResponseModelUpstream, ResponseModelRequested}
)

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	setDefault(&c.Limits.MaxBody, DefaultMaxBody)
	setDefault(&c.Limits.MaxResponse, DefaultMaxResponse)
	// A config that raised max_response alone keeps working: one answer of
	// that size still fits the budget.
	setDefault(&c.Limits.MaxBuffered, max(DefaultMaxBuffered, c.Limits.MaxResponse))
	setDefault(&c.Limits.MaxConnections, DefaultMaxConnections)
	setDefault(&c.Limits.ReadTimeout, DefaultReadTimeout)
	setDefault(&c.Limits.IdleTimeout, DefaultIdleTimeout)
	setDefault(&c.Shutdown.Grace, DefaultShutdownGrace)
	setDefault(&c.Log.Level, DefaultLogLevel)
	setDefault(&c.Log.Format, DefaultLogFormat)
	if c.Log.Requests == nil {
		v := DefaultLogRequests
		c.Log.Requests = &v
	}
	for _, p := range c.Providers {
		if p == nil {
			continue
		}
		setDefault(&p.Kind, DefaultKind)
		p.applyHostDefaults()
		setDefault(&p.Timeout.FirstByte, DefaultFirstByte)
		setDefault(&p.Timeout.Total, DefaultTotal)
		setDefault(&p.Timeout.Idle, min(DefaultIdle, p.Timeout.Total))
		setDefault(&p.RateLimit.MaxCooldown, DefaultMaxCooldown)
		if p.Responses == nil {
			v := p.Kind == KindOpenAI
			p.Responses = &v
		}
		setDefault(&p.CircuitBreaker.Failures, DefaultCBFailures)
		setDefault(&p.CircuitBreaker.Cooldown, DefaultCBCooldown)
	}
	setDefault(&c.Strategy.Mode, DefaultMode)
	setDefault(&c.Strategy.Hedge.After, DefaultHedgeAfter)
	setDefault(&c.Strategy.Hedge.Budget, DefaultHedgeBudget)
	setDefault(&c.Strategy.Hedge.Max, DefaultHedgeMax)
	c.routeDefaults()
	for i := range c.Targets {
		if c.Targets[i].Weight == nil {
			w := DefaultTargetWeight
			c.Targets[i].Weight = &w
		}
	}
	setDefault(&c.Telemetry.ServiceName, DefaultServiceName)
	setDefault(&c.ResponseModel, DefaultResponseModel)
}

// setDefault sets *field to def when it is zero.
func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}
