package sim

import "time"

// Spikes make a share of a provider's answers slow: each TTFB draw is, with
// probability Rate, Factor times as long. The tail of a provider having slow
// moments, beside the log-normal spread of every draw.
type Spikes struct {
	// Rate is the share of draws that spike, 0 to 1; 0: none.
	Rate float64 `yaml:"rate,omitempty"`
	// Factor is how many times as long a spiked draw is: at least 1 when
	// Rate is above 0.
	Factor float64 `yaml:"factor,omitempty"`
}

func (sp Spikes) validate(prefix string, fe *fieldErrors) {
	if !(sp.Rate >= 0 && sp.Rate <= 1) {
		fe.add(prefix+"rate", "%v: must be between 0 and 1", sp.Rate)
	}
	if sp.Rate > 0 && !(sp.Factor >= 1 && sp.Factor <= 1000) {
		fe.add(prefix+"factor", "%v: must be between 1 and 1000", sp.Factor)
	}
}

// admit is what a provider that reacts to its load does with a request
// about to wait its TTFB: wait for a slot (MaxConcurrency), then answer a
// cached prompt prefix sooner (PromptCache). ok is false when the client
// went away while it waited; otherwise done must be called when the answer
// is over, to give the slot back and remember the prefix as answered.
func (s *Server) admit(x *exchange, ttfb *time.Duration, fail bool) (done func(), ok bool) {
	if s.slots != nil && s.slots.acquire(x.ctx) != nil {
		return nil, false
	}
	if s.cache != nil && !fail && s.cache.lookup(x.prefix, s.now()) {
		*ttfb = time.Duration(float64(*ttfb) * s.cache.cfg.speedup())
		x.cachedTokens = x.prefix.tokens
	}
	return func() {
		if s.cache != nil && !fail && x.ctx.Err() == nil {
			s.cache.answered(x.prefix, s.now())
		}
		if s.slots != nil {
			s.slots.release()
		}
	}, true
}

// Slots reports the provider's queue (MaxConcurrency); all zero without
// one.
func (s *Server) Slots() SlotStats { return s.slots.stats() }

// PromptCacheStats reports the provider's prompt cache hits and misses;
// zero without a PromptCache.
func (s *Server) PromptCacheStats() CacheStats { return s.cache.stats() }
