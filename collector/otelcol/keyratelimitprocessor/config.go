package keyratelimitprocessor

import (
	"errors"
	"fmt"
	"math"
)

// Defaults of Config.
const (
	DefaultMaxKeys = 10000
)

// What happens to a span that carries no firstbyte.target.
const (
	WithoutKeyPass = "pass"
	WithoutKeyDrop = "drop"
)

// Config is the processor's configuration:
//
//	processors:
//	  firstbyte_ratelimit:
//	    spans_per_second: 10   # per (firstbyte.target, gen_ai.request.model)
//	    burst: 20
//	    max_keys: 10000
//	    without_key: pass
type Config struct {
	// SpansPerSecond is how many spans a second each (firstbyte.target,
	// gen_ai.request.model) key passes, on average. Required, above 0.
	SpansPerSecond float64 `mapstructure:"spans_per_second"`
	// Burst is how many spans a key may pass at once after a quiet spell:
	// the bucket's size. Zero: SpansPerSecond rounded up (at least 1).
	Burst int `mapstructure:"burst"`
	// MaxKeys bounds how many keys have a bucket of their own; spans of
	// keys beyond it share one more bucket of the same rate, so a flood of
	// invented keys passes no more than one key would. A key idle long
	// enough for its bucket to refill holds no state and gives its place
	// up. Zero: DefaultMaxKeys.
	MaxKeys int `mapstructure:"max_keys"`
	// WithoutKey is what happens to spans without firstbyte.target (server
	// spans, applications' GenAI spans): "pass" (the default) or "drop".
	// A gateway learns nothing from server spans; drop them when no
	// gateway takes foreign spans.
	WithoutKey string `mapstructure:"without_key"`
}

func createDefaultConfig() *Config {
	return &Config{MaxKeys: DefaultMaxKeys, WithoutKey: WithoutKeyPass}
}

// Validate reports every problem, each naming its field.
func (c *Config) Validate() error {
	var errs []error
	if !(c.SpansPerSecond > 0) || math.IsInf(c.SpansPerSecond, 0) {
		errs = append(errs, fmt.Errorf("spans_per_second: must be above 0, got %v", c.SpansPerSecond))
	}
	if c.Burst < 0 {
		errs = append(errs, fmt.Errorf("burst: must be 0 (SpansPerSecond rounded up) or more, got %d", c.Burst))
	}
	if c.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("max_keys: must be 0 (%d) or more, got %d", DefaultMaxKeys, c.MaxKeys))
	}
	switch c.WithoutKey {
	case "", WithoutKeyPass, WithoutKeyDrop:
	default:
		errs = append(errs, fmt.Errorf("without_key: %q, want %q or %q", c.WithoutKey, WithoutKeyPass, WithoutKeyDrop))
	}
	return errors.Join(errs...)
}

// burst is Burst with its default applied.
func (c *Config) burst() float64 {
	if c.Burst > 0 {
		return float64(c.Burst)
	}
	return math.Max(1, math.Ceil(c.SpansPerSecond))
}

func (c *Config) maxKeys() int {
	if c.MaxKeys > 0 {
		return c.MaxKeys
	}
	return DefaultMaxKeys
}
