package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// The p50 a replica ranks on, when it gets 1 in N of the fleet's samples
// of a key: the real tracker (collector.NewTracker, its window of 100
// samples and 5 minutes), on a virtual clock, fed a log-normal stream.
// One tracker gets every sample (N = 1: what full fan-out gives every
// replica), the others every N-th (what a per-key rate limit of R spans a
// second gives, N = fleet rate / R: a token bucket under steady overload
// passes evenly spaced spans, not a random draw).
//
// Halfway through, the provider's median doubles; how long each tracker's
// p50 takes to cross halfway between the two medians is its lag.

// p50Params describes one run.
type p50Params struct {
	Rate     float64       // the fleet's samples a second for the key
	Median   time.Duration // before the step; doubled after
	Sigma    float64       // log-normal shape
	Duration time.Duration // virtual; the step is at half
	Seed     uint64
	Ns       []int
}

// defaultP50 is the run docs/fleet.md shows (seeds 1, 2 and 3).
var defaultP50 = p50Params{
	Rate: 20, Median: 200 * time.Millisecond, Sigma: 0.5, Duration: 20 * time.Minute,
	Ns: []int{1, 2, 5, 10, 20, 50, 100},
}

// p50Result is what one N gave in one run.
type p50Result struct {
	N int
	// Relative error of the p50 against the full tracker's, sampled once a
	// virtual second in the stationary part (from one full window after
	// the start until the step): median and 95th percentile.
	ErrMedian, ErrP95 float64
	// The same against the distribution's true median: what any window
	// of samples misses by, N = 1 included.
	TrueMedian, TrueP95 float64
	// Live samples in the tracker at the step.
	Samples int
	// From the step until the p50 crosses halfway to the new median; -1
	// when it did not within the run.
	Lag time.Duration
}

// runP50 feeds the stream to one tracker per N and compares them.
func runP50(p p50Params) []p50Result {
	start := time.Unix(1_700_000_000, 0)
	now := start
	clock := func() time.Time { return now }
	trackers := make([]*collector.Tracker, len(p.Ns))
	for i := range trackers {
		trackers[i] = collector.NewTracker(collector.TrackerOptions{Now: clock})
	}
	const target, model = "t", "m"
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	gap := time.Duration(float64(time.Second) / p.Rate)
	step := start.Add(p.Duration / 2)
	// The comparison starts once the full tracker's window has turned over.
	warm := start.Add(min(collector.DefaultMaxAge, time.Duration(float64(collector.DefaultWindow)/p.Rate*float64(time.Second))))
	halfway := time.Duration(float64(p.Median) * 1.5)

	errs := make([][]float64, len(p.Ns))
	trueErrs := make([][]float64, len(p.Ns))
	lags := make([]time.Duration, len(p.Ns))
	samplesAtStep := make([]int, len(p.Ns))
	for i := range lags {
		lags[i] = -1
	}
	nextCheck := start.Add(time.Second)
	for i := 0; now.Before(start.Add(p.Duration)); i++ {
		now = start.Add(time.Duration(i) * gap)
		median := p.Median
		if !now.Before(step) {
			median *= 2
		}
		ttfb := time.Duration(float64(median) * math.Exp(p.Sigma*rng.NormFloat64()))
		for k, n := range p.Ns {
			if i%n == 0 {
				trackers[k].RecordSample(target, model, ttfb, now, collector.OriginPeer)
			}
		}
		if now.Before(nextCheck) {
			continue
		}
		nextCheck = nextCheck.Add(time.Second)
		full := trackers[0].StatsAt(target, model, now).P50
		for k := range p.Ns {
			st := trackers[k].StatsAt(target, model, now)
			got, live, ok := st.P50, st.Samples, st.Samples > 0
			switch {
			case !now.Before(warm) && now.Before(step) && ok && full > 0:
				errs[k] = append(errs[k], math.Abs(float64(got-full))/float64(full))
				trueErrs[k] = append(trueErrs[k], math.Abs(float64(got-p.Median))/float64(p.Median))
			case !now.Before(step) && lags[k] < 0 && ok && got >= halfway:
				lags[k] = now.Sub(step)
			}
			if now.Before(step) {
				samplesAtStep[k] = live
			}
		}
	}
	out := make([]p50Result, len(p.Ns))
	for k, n := range p.Ns {
		out[k] = p50Result{N: n, ErrMedian: quantile(errs[k], 0.5), ErrP95: quantile(errs[k], 0.95),
			TrueMedian: quantile(trueErrs[k], 0.5), TrueP95: quantile(trueErrs[k], 0.95), Samples: samplesAtStep[k], Lag: lags[k]}
	}
	return out
}

// quantile is the q-quantile of xs (nearest rank); 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// writeP50Table runs p once per seed and writes one Markdown row per N,
// each figure as the range over the seeds.
func writeP50Table(w io.Writer, p p50Params, seeds []uint64) {
	byN := map[int][]p50Result{}
	for _, s := range seeds {
		p.Seed = s
		for _, r := range runP50(p) {
			byN[r.N] = append(byN[r.N], r)
		}
	}
	fmt.Fprintf(w, "Fleet rate %.0f samples/s for the key, log-normal median %v (sigma %.2f), doubling at %v; %d seeds (%v).\n\n",
		p.Rate, p.Median, p.Sigma, p.Duration/2, len(seeds), seeds)
	fmt.Fprintln(w, "| 1 in N | replica gets /s | live samples | error vs N = 1, median | vs N = 1, p95 | error vs the true median, median | vs true, p95 | lag after the step |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, n := range p.Ns {
		rs := byN[n]
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", n, perSecond(p.Rate/float64(n)),
			rangeOf(rs, func(r p50Result) float64 { return float64(r.Samples) }, "%.0f"),
			rangeOf(rs, func(r p50Result) float64 { return 100 * r.ErrMedian }, "%.1f %%"),
			rangeOf(rs, func(r p50Result) float64 { return 100 * r.ErrP95 }, "%.1f %%"),
			rangeOf(rs, func(r p50Result) float64 { return 100 * r.TrueMedian }, "%.1f %%"),
			rangeOf(rs, func(r p50Result) float64 { return 100 * r.TrueP95 }, "%.1f %%"),
			lagRange(rs))
	}
}

func rangeOf(rs []p50Result, f func(p50Result) float64, format string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	a, b := fmt.Sprintf(format, lo), fmt.Sprintf(format, hi)
	if a == b {
		return a
	}
	return strings.TrimSuffix(strings.TrimSuffix(a, " %"), " s") + "–" + b
}

func lagRange(rs []p50Result) string {
	for _, r := range rs {
		if r.Lag < 0 {
			return "not within the run"
		}
	}
	return rangeOf(rs, func(r p50Result) float64 { return r.Lag.Seconds() }, "%.0f s")
}

// perSecond writes a rate with the digits that matter: 200, 4, 0.4.
func perSecond(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2g", r)
}
