package sim

import (
	"math"
	"time"
)

// maxDelay caps a draw so that a large spread cannot overflow time.Duration; no sane
// simulation waits longer than this for a first byte.
const maxDelay = 24 * time.Hour

// lognormal maps a standard normal draw z to a delay with the given median and spread
// (sigma of the underlying normal): median·e^(spread·z). Since z's median is 0, the
// delay's median is exactly median whatever the spread; spread 0 gives median always.
func lognormal(median time.Duration, spread, z float64) time.Duration {
	if median <= 0 {
		return 0
	}
	if spread == 0 || z == 0 {
		return median
	}
	d := float64(median) * math.Exp(spread*z)
	if d >= float64(maxDelay) || math.IsNaN(d) {
		return maxDelay
	}
	return time.Duration(d)
}
