package keyratelimitprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// The span attributes a key is made of: what a firstbyte gateway's
// attempt span says its target and upstream model are.
const (
	attrTarget = "firstbyte.target"
	attrModel  = "gen_ai.request.model"
)

// rateLimiter drops the spans of a key beyond its rate.
type rateLimiter struct {
	// Immutable after newRateLimiter.
	limiter   *limiter
	dropNoKey bool
	now       func() time.Time
}

func newRateLimiter(cfg *Config, now func() time.Time) *rateLimiter {
	if now == nil {
		now = time.Now
	}
	return &rateLimiter{
		limiter:   newLimiter(cfg.SpansPerSecond, cfg.burst(), cfg.maxKeys()),
		dropNoKey: cfg.WithoutKey == WithoutKeyDrop,
		now:       now,
	}
}

// processTraces removes, in place, the spans their key's bucket refuses
// (and, with without_key: drop, those without a key), then the scopes and
// resources left empty. When nothing is left the batch goes no further.
func (p *rateLimiter) processTraces(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	p.limiter.batch(p.now(), func(allow allowFunc) {
		td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !p.keep(s, allow) })
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
	})
	if td.ResourceSpans().Len() == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

func (p *rateLimiter) keep(s ptrace.Span, allow allowFunc) bool {
	target, ok := s.Attributes().Get(attrTarget)
	if !ok {
		return !p.dropNoKey
	}
	var model string
	if m, ok := s.Attributes().Get(attrModel); ok {
		model = m.AsString()
	}
	return allow(key{target: target.AsString(), model: model})
}
