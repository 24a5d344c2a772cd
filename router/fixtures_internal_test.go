package router

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// The gateway tests' statistics and randomness, as package mode's tests
// have them: a table of statistics by target, a scripted source, a fixed
// clock.

// statsTable is a StatsSource from a table keyed by target (the model is
// always "m" here): the tracker's contract without its window maths, which
// the collector tests. Keyed by target alone so a lookup does not allocate.
type statsTable map[string]stats.Target

func (s statsTable) StatsAt(target, _ string, _ time.Time) stats.Target { return s[target] }

// scriptedRand answers IntN from a script (each value taken modulo n) and
// Float64 from another, so an order is exact.
type scriptedRand struct {
	ints   []int
	floats []float64
}

func (r *scriptedRand) IntN(n int) int {
	if len(r.ints) == 0 {
		return n - 1 // never 0: "do not explore"
	}
	v := r.ints[0]
	r.ints = r.ints[1:]
	return v % n
}

func (r *scriptedRand) Float64() float64 {
	if len(r.floats) == 0 {
		return 0
	}
	v := r.floats[0]
	r.floats = r.floats[1:]
	return v
}

// t0 is when the statistics were seen; fixedNow reads it.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// target builds the statistics of a target seen just now: a typical latency
// with the given log spread over n recent samples, and outcomes of which
// faults (weighted) failed after faultCost each.
func target(p50 time.Duration, logStd float64, n int, outcomes int, faults float64, faultCost time.Duration) stats.Target {
	st := stats.Target{
		Samples: n, P50: p50, EWMA: p50, LogMean: math.Log(p50.Seconds()), LogStd: logStd, LogWeight: float64(n),
		Newest: t0, Outcomes: outcomes, Faults: faults, WeightedOutcomes: float64(outcomes), WeightedFaults: faults,
		FaultSeconds: faultCost.Seconds(),
	}
	if outcomes > 0 {
		st.FaultRate = faults / float64(outcomes)
		st.LastOutcome = t0
	}
	return st
}
