package sim

import (
	"net/http"
	"time"
)

// Defaults, all in one place. The config file uses them for keys it leaves out; the Go
// API uses them only where the zero value could not mean anything else (Chunks,
// Errors.Status, Listen, RateLimit.Window), so that a zero [Provider] built in a test answers at once.
const (
	// DefaultListen is a random free port on the IPv4 loopback.
	DefaultListen = "127.0.0.1:0"
	// DefaultMedian is the TTFB median of a config file provider without ttfb.median.
	DefaultMedian = 100 * time.Millisecond
	// DefaultChunks is the number of content chunks when Pace.Chunks is zero.
	DefaultChunks = 8
	// DefaultInterval is the pause between chunks of a config file provider without
	// stream.interval.
	DefaultInterval = 10 * time.Millisecond
	// DefaultErrorStatus is the status of an injected error when ErrorRate.Status is zero.
	DefaultErrorStatus = http.StatusServiceUnavailable
	// DefaultRateWindow is the length of a rate limit's windows when RateLimit.Window
	// is zero.
	DefaultRateWindow = time.Second
)

// Limits that keep a config from asking for something absurd by mistake.
const (
	maxSpread = 3.0 // sigma 3: the 99th percentile is already ~1000x the median
	maxChunks = 100000
)

// Config is the content of a `firstbyte sim -config FILE` file, after defaults and
// phase inheritance have been resolved. Build one in Go or with [ParseConfig].
type Config struct {
	// Seed seeds every provider's random draws (TTFB and errors); provider i gets its
	// own stream derived from (Seed, i), so one provider's traffic never shifts
	// another's draws. Zero means a random seed.
	Seed uint64 `yaml:"seed"`
	// Providers are the simulated upstreams, each on its own listener.
	Providers []Provider `yaml:"providers"`
	// Protocols is how every provider speaks HTTP (firstbyte sim's -tls
	// and -h2c); not in the file. Zero: HTTP/1.1 in clear text.
	Protocols Protocols `yaml:"-"`
}

// Provider is one simulated upstream.
type Provider struct {
	// Name identifies the provider: required, unique, letters, digits, '-', '_', '.'.
	// It is sent back in the X-Sim-Provider header of every response.
	Name string `yaml:"name"`
	// Listen is the loopback host:port to listen on; empty means DefaultListen.
	// Only loopback addresses (127.0.0.0/8, ::1, localhost) are accepted.
	Listen string `yaml:"listen,omitempty"`
	// Models are listed by GET /v1/models. The simulator answers for any model name
	// whether listed or not; empty lists none.
	Models []string `yaml:"models,omitempty"`
	// TTFB is the delay before the first byte of every answer but GET /v1/models.
	TTFB Dist `yaml:"ttfb"`
	// Stream is the pace of generation: a stream sends Chunks content chunks Interval
	// apart after the first byte; a unary answer waits TTFB + Chunks×Interval.
	Stream Pace `yaml:"stream"`
	// Errors injects error answers at a rate, after the TTFB draw or after a fixed
	// delay of their own (ErrorRate.After). Rate 1 gives every request the same
	// answer: a 401 is then a revoked key, in the words each real API uses.
	Errors ErrorRate `yaml:"errors"`
	// RateLimit, when set, refuses requests beyond a number a window with 429, and
	// says on every answer what remains, as real providers do. Nil: no limit.
	RateLimit *RateLimit `yaml:"rate_limit,omitempty"`
	// MaxConcurrency, when positive, is how many requests the provider serves
	// at once: each valid request the rate limit lets through takes a slot
	// before its TTFB and holds it until its answer ends (a stream's last
	// chunk); beyond, requests wait for a slot, first come first served, and
	// the wait adds to their time to first byte. A client that goes away
	// leaves the queue. Zero means no limit.
	MaxConcurrency int `yaml:"max_concurrency,omitempty"`
	// PromptCache, when set, answers a prompt prefix the provider answered
	// lately sooner and reports its tokens as cached. Nil: no cache.
	PromptCache *PromptCache `yaml:"prompt_cache,omitempty"`
	// Spikes make a share of the TTFB draws (in every phase) a number of times
	// as long. Zero: none.
	Spikes Spikes `yaml:"spikes,omitempty"`
	// Phases change TTFB, Stream and Errors once the server has run for a while.
	// Their After must be positive and increasing.
	Phases []Phase `yaml:"phases,omitempty"`

	// CutAfter, when positive, breaks every answer: a stream sends its first byte and
	// CutAfter content chunks (at most Chunks) and then the connection is aborted
	// without the stream's end; a unary request gets its connection closed instead of
	// an answer. Zero means never.
	CutAfter int `yaml:"cut_after,omitempty"`
	// StatusBody, when set, is the answer to every POST after the TTFB, whatever the
	// error rate says: for example a fixed 422 that a gateway must pass through.
	StatusBody *StatusBody `yaml:"status_body,omitempty"`
	// ContextOverflow makes every generation request (chat, responses, messages)
	// answer 400 with the provider's own "context length exceeded" error after the TTFB.
	ContextOverflow bool `yaml:"context_overflow,omitempty"`
	// ParallelToolCalls makes a request that calls tools call the first two of
	// its tools at once (when it defines two and does not name one or forbid
	// parallel calls), as a request whose first message holds ParallelMarker
	// does on any provider. False: one call.
	ParallelToolCalls bool `yaml:"parallel_tool_calls,omitempty"`
	// Host, when set, makes the provider speak a cloud host's API (Azure
	// OpenAI, Bedrock, Vertex AI) with its auth and framing (hosts.go).
	// Nil: the plain OpenAI and Anthropic APIs.
	Host *Host `yaml:"host,omitempty"`
}

// Dist is a log-normal distribution of delays given by its median and the standard
// deviation of the underlying normal (Spread). The median is what a tracker's p50
// converges to, which is why it is the parameter rather than the mean.
type Dist struct {
	// Median of the delay. Zero means no delay at all. A provider that hangs is a
	// median far beyond any client's timeout (1h, spread 0): every wait ends when the
	// client gives up, as every wait selects on the request's context.
	Median time.Duration `yaml:"median"`
	// Spread is sigma of ln(delay), between 0 and 3; 0 means always exactly Median.
	// 0.25 keeps about 95% of draws within ×0.6..×1.6 of the median.
	Spread float64 `yaml:"spread"`
}

// Fixed is a distribution that always gives d.
func Fixed(d time.Duration) Dist { return Dist{Median: d} }

// Pace is how fast a reply is generated.
type Pace struct {
	// Chunks is the number of content chunks in a reply; zero means DefaultChunks.
	Chunks int `yaml:"chunks"`
	// Interval is the pause before each content chunk; zero means none.
	Interval time.Duration `yaml:"interval"`
}

// ErrorRate injects error answers.
type ErrorRate struct {
	// Rate is the probability, 0 to 1, that a request gets an error answer; 0 never.
	Rate float64 `yaml:"rate"`
	// Status of the error answer, 400 to 599; zero means DefaultErrorStatus. A 429
	// carries Retry-After: 1. The body is an error in the endpoint's API shape.
	Status int `yaml:"status"`
	// After, when positive, is how long an error answer takes to come, instead of
	// the TTFB draw: a provider that refuses at once (1ms) or only after a long wait
	// (300ms) whatever its latency otherwise. Zero means the error comes after the
	// TTFB draw, as a success would. Successes always take the TTFB draw.
	After time.Duration `yaml:"after,omitempty"`
}

// RateLimit is a provider's request and token limits, counted in fixed windows: a
// window starts at every whole multiple of Window on the clock (Options.Now), so a 1s
// window starts afresh at each whole second. A request that would go beyond a limit
// is refused with 429 (after After), in the endpoint's API shape, with Retry-After
// (seconds) and, from OpenAI-shaped endpoints, retry-after-ms; a refused request is
// not counted. Every answer to a POST says the limits, what remains of them and when
// they reset: OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens} (reset as
// a duration: "1s", "830ms") from OpenAI-shaped endpoints, Anthropic's
// anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset} (reset as an RFC 3339
// instant) from /v1/messages.
type RateLimit struct {
	// Requests is how many requests a window takes; zero means no request limit.
	Requests int `yaml:"requests,omitempty"`
	// Tokens is how many tokens a window takes, zero meaning no token limit. A
	// request costs its prompt tokens (the body's length / 4, as usage says) plus
	// the output it asks for at most (max_tokens, max_completion_tokens or
	// max_output_tokens; none: nothing).
	Tokens int `yaml:"tokens,omitempty"`
	// Window is the length of the windows; zero means DefaultRateWindow.
	Window time.Duration `yaml:"window,omitempty"`
	// RetryAfter is how long a refusal tells the client to wait; zero means until
	// the window ends (Retry-After rounded up to a whole second, retry-after-ms to
	// the millisecond).
	RetryAfter time.Duration `yaml:"retry_after,omitempty"`
	// After is how long a refusal takes to come; zero means at once.
	After time.Duration `yaml:"after,omitempty"`
}

// Phase overrides a provider's behaviour from After on (time since the server
// started, on the injected clock) until the next phase. A nil block keeps the
// previous phase's; a set block replaces it whole. In a config file a block may name
// only some fields: the others are inherited from the previous phase.
type Phase struct {
	After  time.Duration `yaml:"after"`
	TTFB   *Dist         `yaml:"ttfb,omitempty"`
	Stream *Pace         `yaml:"stream,omitempty"`
	Errors *ErrorRate    `yaml:"errors,omitempty"`
}

// StatusBody is a fixed answer.
type StatusBody struct {
	// Status of the answer, 200 to 599.
	Status int `yaml:"status"`
	// Body sent as is; empty means an error body in the endpoint's API shape.
	Body string `yaml:"body,omitempty"`
	// ContentType of Body; empty means application/json.
	ContentType string `yaml:"content_type,omitempty"`
}

func (p *Provider) listen() string {
	if p.Listen == "" {
		return DefaultListen
	}
	return p.Listen
}

func (p Pace) chunks() int {
	if p.Chunks == 0 {
		return DefaultChunks
	}
	return p.Chunks
}

func (l *RateLimit) window() time.Duration {
	if l.Window == 0 {
		return DefaultRateWindow
	}
	return l.Window
}

func (e ErrorRate) status() int {
	if e.Status == 0 {
		return DefaultErrorStatus
	}
	return e.Status
}
