package mode

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// CompletionSource is what a mode that predicts the time to the last token
// reads beside StatsSource: the collector's tracker satisfies both, and
// New finds it in Deps.Stats when Deps.Completion is nil.
type CompletionSource interface {
	// RateAt is the output rate (tokens per second after the first chunk)
	// of (target, upstream model) as of now.
	RateAt(target, model string, now time.Time) stats.Rate
	// OutputTokensAt is how long the client model's answers are, for a
	// request asking for at most maxTokens (0: no limit), as of now.
	OutputTokensAt(model string, maxTokens int, now time.Time) stats.OutputTokens
}

// LengthAware is a Strategy whose order depends on the request's own limit
// on its answer's length (max_tokens, max_completion_tokens,
// max_output_tokens): OrderFor is Order for a request that set maxTokens
// (0: none).
type LengthAware interface {
	OrderFor(dst []*Candidate, model string, maxTokens int, eligible []*Candidate) ([]*Candidate, string)
}

// OrderFor asks s for the order of a request that set maxTokens (0: none):
// through LengthAware when s is, else its plain Order.
func OrderFor(s Strategy, dst []*Candidate, model string, maxTokens int, eligible []*Candidate) ([]*Candidate, string) {
	if la, ok := s.(LengthAware); ok {
		return la.OrderFor(dst, model, maxTokens, eligible)
	}
	return s.Order(dst, model, eligible)
}

// Prediction is a candidate's predicted time to the last token and its
// parts:
//
//	Seconds = TTFB (p50, scaled by its load) + Tokens / Rate (p50)
//
// Measured is false when the candidate has no TTFB sample or no rate
// sample: it ranks as unmeasured (tried first, so it gets one).
type Prediction struct {
	Seconds  float64 // predicted time to the last token; 0 unless Measured
	TTFB     float64 // p50 time to first byte, seconds, times the load factor
	Rate     float64 // p50 output tokens per second; 0 with no rate sample
	Tokens   float64 // expected output tokens
	Measured bool
}

// ExpectedTokens is how many output tokens a request for model that set
// maxTokens (0: none) is expected to produce: the median length of the
// model's recent answers in its max_tokens bucket (all recent answers when
// that bucket holds too few), capped by maxTokens. With no answer seen, it
// is maxTokens itself (0 with no limit: the prediction is the time to
// first byte alone, as least-latency ranks).
func ExpectedTokens(ot stats.OutputTokens, maxTokens int) float64 {
	n := ot.Median
	if ot.Samples == 0 {
		n = float64(maxTokens)
	}
	if maxTokens > 0 && n > float64(maxTokens) {
		n = float64(maxTokens)
	}
	return n
}

// Predict is the predicted time to the last token of a request expected to
// produce tokens output tokens at c, from c's figures st (time to first
// byte, load) and rate.
func Predict(c *Candidate, st *stats.Target, rate stats.Rate, tokens float64) Prediction {
	p := Prediction{Rate: rate.P50, Tokens: tokens}
	if st.Samples == 0 {
		return p
	}
	p.TTFB = st.P50.Seconds() * LoadFactor(c, st)
	if rate.Samples == 0 || !(rate.P50 > 0) {
		return p
	}
	p.Seconds, p.Measured = p.TTFB+tokens/rate.P50, true
	return p
}
