package sim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

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
		RateLimit         *fileLimit  `yaml:"rate_limit"`
		ContextOverflow   bool        `yaml:"context_overflow"`
		ParallelToolCalls bool        `yaml:"parallel_tool_calls"`
		MaxConcurrency    int         `yaml:"max_concurrency"`
		PromptCache       *fileCache  `yaml:"prompt_cache"`
		Spikes            Spikes      `yaml:"spikes"`
		Host              *Host       `yaml:"host"`
	}
	fileCache struct {
		TTL     fileDuration `yaml:"ttl"`
		Speedup float64      `yaml:"speedup"`
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
	fileLimit struct {
		Requests   int          `yaml:"requests"`
		Tokens     int          `yaml:"tokens"`
		Window     fileDuration `yaml:"window"`
		RetryAfter fileDuration `yaml:"retry_after"`
		After      fileDuration `yaml:"after"`
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
			MaxConcurrency:    fp.MaxConcurrency,
			Spikes:            fp.Spikes,
			Host:              fp.Host,
		}
		if c := fp.PromptCache; c != nil {
			p.PromptCache = &PromptCache{TTL: time.Duration(c.TTL), Speedup: c.Speedup}
		}
		if p.Listen == "" {
			p.Listen = DefaultListen
		}
		if l := fp.RateLimit; l != nil {
			p.RateLimit = &RateLimit{Requests: l.Requests, Tokens: l.Tokens, Window: time.Duration(l.Window),
				RetryAfter: time.Duration(l.RetryAfter), After: time.Duration(l.After)}
			if p.RateLimit.Window == 0 {
				p.RateLimit.Window = DefaultRateWindow
			}
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
