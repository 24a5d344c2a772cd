package mode

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Re-measuring: a mode that sends a runner-up no traffic of its own accord
// (ewma-latency; reliable-latency as a safety net) would never notice that
// it recovered. So when what a mode knows of a runner-up has gone stale, one
// request leads with it: a probe. Probes are bounded per candidate (at most
// one per interval, whatever the number of concurrent requests), so their
// cost is a handful of requests a second, not a fixed share of traffic.

// staleProbe picks the runner-up of out (out[0] is the mode's choice) whose
// newest data is the oldest, provided it is older than its interval, and
// claims the probe for it; it returns its index in out, or -1. lastSeen[i]
// is when out[i] last taught anything (zero: never), every[i] how stale it
// may get.
func staleProbe(out []*Candidate, lastSeen []time.Time, now time.Time, every []time.Duration) int {
	pick := -1
	var oldest time.Time
	for i := 1; i < len(out); i++ {
		seen := lastSeen[i]
		if now.Sub(seen) < every[i] {
			continue
		}
		if pick < 0 || seen.Before(oldest) {
			pick, oldest = i, seen
		}
	}
	if pick < 0 || !out[pick].claimProbe(now, every[pick]) {
		return -1
	}
	return pick
}

// claimProbe takes the candidate's probe for this interval: true for
// exactly one caller per interval.
func (c *Candidate) claimProbe(now time.Time, every time.Duration) bool {
	last := c.lastProbe.Load()
	if now.UnixNano()-last < int64(every) {
		return false
	}
	return c.lastProbe.CompareAndSwap(last, now.UnixNano())
}

// orderByScoreProbing is the ordering skeleton of the modes that rank by a
// score and re-measure stale runners-up: eligible appended to dst by
// ascending score (rankByScore, with scratch), the unscored first and
// shuffled (selection cold); else a runner-up whose newest data (seen, per
// eligible index) is older than every(i) leads one request (selection
// explore). Otherwise the selection is "": the mode says why its first
// candidate leads.
func orderByScoreProbing(dst, eligible []*Candidate, scores, scratch []float64, seen []time.Time, now time.Time, r Rand, buf *probeScratch, every func(i int) time.Duration) ([]*Candidate, string) {
	base := len(dst)
	dst, cold := rankByScore(dst, eligible, scores, scratch)
	out := dst[base:]
	if cold > 0 {
		shuffle(out[:cold], r)
		return dst, telemetry.SelectionCold
	}
	_, _, _, oseen, intervals := buf.slices(len(eligible))
	for _, c := range out {
		i := indexOf(eligible, c)
		oseen, intervals = append(oseen, seen[i]), append(intervals, every(i))
	}
	if k := staleProbe(out, oseen, now, intervals); k > 0 {
		Lead(out, k)
		return dst, telemetry.SelectionExplore
	}
	return dst, ""
}
