package collector

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// Percentiles of a key's live samples, of the time to first byte and of
// the output rate (tokens per second after the first chunk, from the
// attempt spans of streamed answers): what a request's preferences bound
// and sort on. A percentile of fewer than stats.MinPercentileSamples
// samples is the largest sample (Percentile): too few to say more. The
// output rates are least-completion's (completion.go), one store for both.

// percentileIndex is the index of quantile q among n ascending samples:
// the largest below stats.MinPercentileSamples, else element ⌊q·n⌋.
func percentileIndex(n int, q float64) int {
	if n < stats.MinPercentileSamples {
		return n - 1
	}
	return quantileIndex(n, q)
}

// TTFBPercentile is quantile q (0.5, 0.75, 0.9, 0.99, ...) of the live
// time-to-first-byte samples of (target, model) as of now, and how many
// there are (0: none, and the duration is 0).
func (t *Tracker) TTFBPercentile(target, model string, q float64, now time.Time) (time.Duration, int) {
	s := t.lookup(target, model)
	if s == nil {
		return 0, 0
	}
	s.current(now.UnixNano(), t.maxAge) // expire what has gone
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.sorted)
	if n == 0 {
		return 0, 0
	}
	return s.sorted[percentileIndex(n, q)], n
}

// OutputRatePercentile is quantile q (0.5, 0.75, 0.9 or 0.99; any other
// reads as 0.99) of the live output-rate samples of (target, model) as of
// now, in tokens per second, and how many there are: the rates RecordRate
// keeps for least-completion.
func (t *Tracker) OutputRatePercentile(target, model string, q float64, now time.Time) (float64, int) {
	r := t.RateAt(target, model, now)
	switch {
	case q <= 0.5:
		return r.P50, r.Samples
	case q <= 0.75:
		return r.P75, r.Samples
	case q <= 0.9:
		return r.P90, r.Samples
	}
	return r.P99, r.Samples
}
