package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Defaults, all in one place. The config file uses them for keys it leaves out; the Go
// API uses them only where the zero value could not mean anything else (Chunks,
// Errors.Status, Listen), so that a zero [Provider] built in a test answers at once.
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
	// delay of their own (ErrorRate.After).
	Errors ErrorRate `yaml:"errors"`
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

// LoadConfig reads and parses a config file; see [ParseConfig].
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		// Keep one problem per line when there are several: each line then starts
		// with its field path, as `firstbyte check` prints them.
		if strings.Contains(err.Error(), "\n") {
			return nil, fmt.Errorf("%s:\n%w", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes YAML (unknown keys are errors), fills in defaults, resolves each
// phase's partial blocks against the phase before it, and validates the result.
func ParseConfig(data []byte) (*Config, error) {
	var f fileConfig
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return nil, errors.New(yaml.FormatError(err, false, true))
	}
	cfg := f.resolve()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// The file* types mirror the config with pointer leaves so that resolve can tell a key
// left out (take the default, or inherit from the previous phase) from a key set to
// zero (which is meaningful: `interval: 0s` means no pause).
type (
	fileConfig struct {
		Seed      uint64         `yaml:"seed"`
		Providers []fileProvider `yaml:"providers"`
	}
	fileProvider struct {
		Name              string      `yaml:"name"`
		Listen            string      `yaml:"listen"`
		Models            []string    `yaml:"models"`
		TTFB              *fileDist   `yaml:"ttfb"`
		Stream            *filePace   `yaml:"stream"`
		Errors            *fileErrors `yaml:"errors"`
		Phases            []filePhase `yaml:"phases"`
		CutAfter          int         `yaml:"cut_after"`
		StatusBody        *StatusBody `yaml:"status_body"`
		ContextOverflow   bool        `yaml:"context_overflow"`
		ParallelToolCalls bool        `yaml:"parallel_tool_calls"`
	}
	fileDist struct {
		Median *fileDuration `yaml:"median"`
		Spread *float64      `yaml:"spread"`
	}
	filePace struct {
		Chunks   *int          `yaml:"chunks"`
		Interval *fileDuration `yaml:"interval"`
	}
	fileErrors struct {
		Rate   *float64      `yaml:"rate"`
		Status *int          `yaml:"status"`
		After  *fileDuration `yaml:"after"`
	}
	filePhase struct {
		After  fileDuration `yaml:"after"`
		TTFB   *fileDist    `yaml:"ttfb"`
		Stream *filePace    `yaml:"stream"`
		Errors *fileErrors  `yaml:"errors"`
	}
)

// fileDuration is a Go duration string ("150ms", "2s"; a bare 0 is allowed too). It
// parses itself so that a bad value is reported with its line and column, which the
// YAML library does not do for time.Duration.
type fileDuration time.Duration

func (d *fileDuration) UnmarshalYAML(n ast.Node) error {
	switch n := n.(type) {
	case *ast.StringNode:
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			return &yaml.SyntaxError{Message: fmt.Sprintf("%q is not a duration: want a number with a unit such as 150ms or 2s", n.Value), Token: n.GetToken()}
		}
		*d = fileDuration(v)
		return nil
	case *ast.IntegerNode:
		if n.String() == "0" {
			*d = 0
			return nil
		}
	}
	return &yaml.SyntaxError{Message: fmt.Sprintf("%s is not a duration: want a number with a unit such as 150ms or 2s", n), Token: n.GetToken()}
}

func (f *fileConfig) resolve() *Config {
	cfg := &Config{Seed: f.Seed}
	for _, fp := range f.Providers {
		p := Provider{
			Name:            fp.Name,
			Listen:          fp.Listen,
			Models:          fp.Models,
			TTFB:            Dist{Median: DefaultMedian},
			Stream:          Pace{Chunks: DefaultChunks, Interval: DefaultInterval},
			Errors:          ErrorRate{Status: DefaultErrorStatus},
			CutAfter:        fp.CutAfter,
			StatusBody:      fp.StatusBody,
			ContextOverflow: fp.ContextOverflow,

			ParallelToolCalls: fp.ParallelToolCalls,
		}
		if p.Listen == "" {
			p.Listen = DefaultListen
		}
		fp.TTFB.mergeInto(&p.TTFB)
		fp.Stream.mergeInto(&p.Stream)
		fp.Errors.mergeInto(&p.Errors)

		// Each phase starts from what the previous one left in force.
		ttfb, stream, errs := p.TTFB, p.Stream, p.Errors
		for _, fph := range fp.Phases {
			ph := Phase{After: time.Duration(fph.After)}
			if fph.TTFB != nil {
				fph.TTFB.mergeInto(&ttfb)
				d := ttfb
				ph.TTFB = &d
			}
			if fph.Stream != nil {
				fph.Stream.mergeInto(&stream)
				s := stream
				ph.Stream = &s
			}
			if fph.Errors != nil {
				fph.Errors.mergeInto(&errs)
				e := errs
				ph.Errors = &e
			}
			p.Phases = append(p.Phases, ph)
		}
		cfg.Providers = append(cfg.Providers, p)
	}
	return cfg
}

func (f *fileDist) mergeInto(d *Dist) {
	if f == nil {
		return
	}
	if f.Median != nil {
		d.Median = time.Duration(*f.Median)
	}
	if f.Spread != nil {
		d.Spread = *f.Spread
	}
}

func (f *filePace) mergeInto(p *Pace) {
	if f == nil {
		return
	}
	if f.Chunks != nil {
		p.Chunks = *f.Chunks
	}
	if f.Interval != nil {
		p.Interval = time.Duration(*f.Interval)
	}
}

func (f *fileErrors) mergeInto(e *ErrorRate) {
	if f == nil {
		return
	}
	if f.Rate != nil {
		e.Rate = *f.Rate
	}
	if f.Status != nil {
		e.Status = *f.Status
	}
	if f.After != nil {
		e.After = time.Duration(*f.After)
	}
}

// fieldErrors collects every problem of a config, each as "field.path: message".
type fieldErrors []error

func (fe *fieldErrors) add(path, format string, args ...any) {
	*fe = append(*fe, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// Validate reports every problem, one "field.path: message" per line.
func (c *Config) Validate() error {
	var fe fieldErrors
	if len(c.Providers) == 0 {
		fe.add("providers", "at least one provider is required")
	}
	names := map[string]int{}
	ports := map[string]int{}
	for i, p := range c.Providers {
		path := fmt.Sprintf("providers[%d]", i)
		p.validate(path+".", &fe)
		if p.Name != "" {
			if j, dup := names[p.Name]; dup {
				fe.add(path+".name", "%q already used by providers[%d]", p.Name, j)
			} else {
				names[p.Name] = i
			}
		}
		// Port 0 asks for a free port, so only fixed ports can collide.
		if _, port, err := net.SplitHostPort(p.listen()); err == nil && port != "0" {
			if j, dup := ports[port]; dup {
				fe.add(path+".listen", "port %s already used by providers[%d]", port, j)
			} else {
				ports[port] = i
			}
		}
	}
	return errors.Join(fe...)
}

// Validate reports every problem of one provider, with field paths relative to it.
func (p *Provider) Validate() error {
	var fe fieldErrors
	p.validate("", &fe)
	return errors.Join(fe...)
}

func (p *Provider) validate(prefix string, fe *fieldErrors) {
	switch {
	case p.Name == "":
		fe.add(prefix+"name", "required")
	case !validName(p.Name):
		fe.add(prefix+"name", "%q: use letters, digits, '-', '_' or '.'", p.Name)
	}
	if err := checkLoopback(p.listen()); err != nil {
		fe.add(prefix+"listen", "%v", err)
	}
	for i, m := range p.Models {
		if m == "" {
			fe.add(fmt.Sprintf("%smodels[%d]", prefix, i), "must not be empty")
		}
	}
	p.TTFB.validate(prefix+"ttfb.", fe)
	p.Stream.validate(prefix+"stream.", fe)
	p.Errors.validate(prefix+"errors.", fe)
	var last time.Duration
	for i, ph := range p.Phases {
		path := fmt.Sprintf("%sphases[%d].", prefix, i)
		switch {
		case ph.After <= 0:
			fe.add(path+"after", "must be > 0")
		case i > 0 && ph.After <= last:
			fe.add(path+"after", "must be later than phases[%d].after (%v)", i-1, last)
		}
		last = ph.After
		if ph.TTFB != nil {
			ph.TTFB.validate(path+"ttfb.", fe)
		}
		if ph.Stream != nil {
			ph.Stream.validate(path+"stream.", fe)
		}
		if ph.Errors != nil {
			ph.Errors.validate(path+"errors.", fe)
		}
	}
	if p.CutAfter < 0 {
		fe.add(prefix+"cut_after", "must be >= 0 (0: never)")
	}
	if sb := p.StatusBody; sb != nil {
		if sb.Status < 200 || sb.Status > 599 {
			fe.add(prefix+"status_body.status", "%d: must be between 200 and 599", sb.Status)
		}
		if p.ContextOverflow {
			fe.add(prefix+"context_overflow", "cannot be combined with status_body")
		}
	}
}

func (d Dist) validate(prefix string, fe *fieldErrors) {
	if d.Median < 0 {
		fe.add(prefix+"median", "must be >= 0")
	}
	// The negated comparison also rejects NaN.
	if !(d.Spread >= 0 && d.Spread <= maxSpread) {
		fe.add(prefix+"spread", "%v: must be between 0 and %v", d.Spread, maxSpread)
	}
}

func (p Pace) validate(prefix string, fe *fieldErrors) {
	if p.Chunks < 0 || p.Chunks > maxChunks {
		fe.add(prefix+"chunks", "%d: must be between 0 and %d (0: %d)", p.Chunks, maxChunks, DefaultChunks)
	}
	if p.Interval < 0 {
		fe.add(prefix+"interval", "must be >= 0")
	}
}

func (e ErrorRate) validate(prefix string, fe *fieldErrors) {
	if !(e.Rate >= 0 && e.Rate <= 1) {
		fe.add(prefix+"rate", "%v: must be between 0 and 1", e.Rate)
	}
	if e.Status != 0 && (e.Status < 400 || e.Status > 599) {
		fe.add(prefix+"status", "%d: must be an error status, 400 to 599", e.Status)
	}
	if e.After < 0 {
		fe.add(prefix+"after", "must be >= 0 (0: after the TTFB draw)")
	}
}

func validName(s string) bool {
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
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

func (e ErrorRate) status() int {
	if e.Status == 0 {
		return DefaultErrorStatus
	}
	return e.Status
}

// checkLoopback accepts host:port only when host is a loopback IP or "localhost".
// The simulator is a test fixture that answers anyone without credentials; on any
// other interface it would be an open service on the network.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port on a loopback address, e.g. %s", addr, DefaultListen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: bad port %q", addr, port)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: only loopback addresses are allowed (127.0.0.1, ::1, localhost); the simulator must not be reachable from the network", addr)
	}
	return nil
}
