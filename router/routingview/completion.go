package routingview

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
	"github.com/firstbyte-dev/firstbyte/router/mode"
)

// Completion is a target's predicted time to the last token for a
// request that sets no output limit, and its parts (see mode.Predict):
// Seconds = TTFBSeconds + OutputTokens / OutputRate. It is shown in every
// mode (least-completion ranks on it); Measured is false while the target
// has no time-to-first-byte or no output-rate sample.
type Completion struct {
	Seconds      float64 `json:"predicted_seconds"`
	TTFBSeconds  float64 `json:"ttfb_p50_seconds"` // times the load factor
	OutputRate   float64 `json:"output_tokens_per_second_p50"`
	OutputTokens float64 `json:"expected_output_tokens"`
	Measured     bool    `json:"measured"`
}

// OutputRate is the percentiles of a target's output rate (tokens
// per second after the first chunk, streamed answers only); of fewer than
// 10 samples a percentile is the largest sample.
type OutputRate struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50"`
	P75     float64 `json:"p75"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
}

// addCompletion fills t's output rate and predicted time to the last
// token, when the statistics source keeps output rates; r is how the mode
// ranked c (least-completion's own prediction, when it is the mode).
func addCompletion(source mode.StatsSource, t *Target, r *mode.Ranked, model string, st *stats.Target, now time.Time) {
	src, ok := source.(mode.CompletionSource)
	if !ok {
		return
	}
	c := r.Candidate
	rate := src.RateAt(c.Target, c.Model, now)
	t.OutputRate = &OutputRate{Samples: rate.Samples, P50: rate.P50, P75: rate.P75, P90: rate.P90, P99: rate.P99}
	p := r.Completion
	if p == nil {
		q := mode.Predict(c, st, rate, mode.ExpectedTokens(src.OutputTokensAt(model, 0, now), 0))
		p = &q
	}
	t.Completion = &Completion{Seconds: p.Seconds, TTFBSeconds: p.TTFB, OutputRate: p.Rate, OutputTokens: p.Tokens, Measured: p.Measured}
}
