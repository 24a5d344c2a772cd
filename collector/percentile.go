package collector

import "github.com/firstbyte-dev/firstbyte/internal/stats"

// Percentile is quantile q (0 < q <= 1) of sorted, which holds samples in
// ascending order: element ⌊q·n⌋ (the last one at most), or, with fewer
// than stats.MinPercentileSamples samples, the largest one: a few samples
// say too little of a tail to rank on, and the largest is what a caller
// has seen can happen. 0 with no sample.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n < stats.MinPercentileSamples:
		return sorted[n-1]
	}
	return sorted[quantileIndex(n, q)]
}
