package routinge2e

import (
	"slices"
	"time"
)

// Figures summarize the outcomes of the requests sent in a stretch of a
// run.
type Figures struct {
	Requests int
	// Served is the share answered 200.
	Served float64
	// Mean, P50 and P99 are of the end-to-end TTFB of served requests.
	Mean, P50, P99 time.Duration
	// FailedAttempts and Skips are per request.
	FailedAttempts, Skips float64
	// FirstPicks is each target's share of first picks (requests that
	// reached any provider); ServedBy its share of served requests;
	// Selections the share of each X-Firstbyte-Selection.
	FirstPicks, ServedBy, Selections map[string]float64
}

// Summarize computes the figures of the outcomes sent in w (a zero w: all).
func Summarize(outs []Outcome, w Window) Figures {
	f := Figures{FirstPicks: map[string]float64{}, ServedBy: map[string]float64{}, Selections: map[string]float64{}}
	var ttfbs []time.Duration
	var sum time.Duration
	failed, skips, picked := 0, 0, 0
	for _, o := range outs {
		if w.To > 0 && !w.Contains(o.Start) {
			continue
		}
		f.Requests++
		failed += o.FailedAttempts()
		skips += o.Skipped
		f.Selections[o.Selection]++
		if o.First != "" {
			f.FirstPicks[o.First]++
			picked++
		}
		if o.Served() {
			ttfbs = append(ttfbs, o.TTFB)
			sum += o.TTFB
			f.ServedBy[o.Target]++
		}
	}
	if f.Requests == 0 {
		return f
	}
	n := float64(f.Requests)
	f.Served = float64(len(ttfbs)) / n
	f.FailedAttempts, f.Skips = float64(failed)/n, float64(skips)/n
	scale(f.Selections, n)
	scale(f.FirstPicks, float64(picked))
	scale(f.ServedBy, float64(len(ttfbs)))
	if len(ttfbs) > 0 {
		slices.Sort(ttfbs)
		f.Mean = sum / time.Duration(len(ttfbs))
		f.P50, f.P99 = Percentile(ttfbs, 50), Percentile(ttfbs, 99)
	}
	return f
}

func scale(m map[string]float64, n float64) {
	for k := range m {
		if n > 0 {
			m[k] /= n
		}
	}
}

// Percentile is the p-th percentile (0 < p <= 100) of sorted ds by the
// nearest-rank method.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// FirstPickShares is target's share of first picks in consecutive bins of
// width bin over [0, d): -1 for a bin without a picked request.
func FirstPickShares(outs []Outcome, target string, bin, d time.Duration) []float64 {
	n := int((d + bin - 1) / bin)
	hits, all := make([]int, n), make([]int, n)
	for _, o := range outs {
		i := int(o.Start / bin)
		if o.First == "" || i < 0 || i >= n {
			continue
		}
		all[i]++
		if o.First == target {
			hits[i]++
		}
	}
	shares := make([]float64, n)
	for i := range shares {
		shares[i] = -1
		if all[i] > 0 {
			shares[i] = float64(hits[i]) / float64(all[i])
		}
	}
	return shares
}

// Lead bins and sustain: a target leads from the end of the first LeadBin
// after which it has more than half the first picks in every bin for
// LeadSustain.
const (
	LeadBin     = 250 * time.Millisecond
	LeadSustain = time.Second
)

// TimeToLead is how long after at target took the lead: the time from at
// to the end of the first LeadBin-wide bin (bins counted from at) that
// starts LeadSustain in which target has more than half of the first
// picks in every bin. ok is false when that never happened before end.
func TimeToLead(outs []Outcome, target string, at, end time.Duration) (time.Duration, bool) {
	return TimeToLeadFor(outs, target, at, end, LeadSustain)
}

// TimeToLeadFor is TimeToLead with a lead that must last sustain (a
// multiple of LeadBin).
func TimeToLeadFor(outs []Outcome, target string, at, end, sustain time.Duration) (time.Duration, bool) {
	var shifted []Outcome
	for _, o := range outs {
		if o.Start >= at && o.Start < end {
			o.Start -= at
			shifted = append(shifted, o)
		}
	}
	shares := FirstPickShares(shifted, target, LeadBin, end-at)
	need := max(int(sustain/LeadBin), 1)
	run := 0
	for i, s := range shares {
		if s > 0.5 {
			run++
		} else {
			run = 0
		}
		if run == need {
			first := i - need + 1
			return time.Duration(first+1) * LeadBin, true
		}
	}
	return 0, false
}
