package study

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// What one run measured. Only requests that start within the measured time
// count (the warm-up's do not); each is counted whole, even when it ends
// after the measured time.

// Result is one run's measurements.
type Result struct {
	Scenario *Scenario
	Mode     string // a registered mode or Oracle

	Requests int // that started within the measured time
	Served   int // of them, ended with a success
	// TTFB of the served requests, start to the first byte of the
	// successful attempt (failed attempts' time included), sorted.
	TTFB []time.Duration
	// LastToken is the served requests' time to the last token (the TTFB
	// where answers are not simulated), sorted; LastTokenBy the same by
	// answer length (scenarios with Lengths).
	LastToken   []time.Duration
	LastTokenBy map[int][]time.Duration
	// Attempts made, failed attempts (faults), and skips (a candidate whose
	// circuit refused it), summed over the requests.
	Attempts, Faults, Skips int
	// Selections counts the requests' X-Firstbyte-Selection.
	Selections map[string]int
	// Picks[b][i] counts the requests starting in bucket b (Bucket long)
	// whose first attempt went to target i.
	Picks [][]int
	// BucketRequests[b] counts the requests starting in bucket b.
	BucketRequests []int
	// WindowTTFB is the mean TTFB of the served requests that started in
	// the scenario's Window (0 without one); WindowServed how many.
	WindowTTFB   time.Duration
	WindowServed int
	// ChangeTimes[k] is the adaptation or recovery time after the
	// scenario's change k: from the change to the end of the first bucket
	// from which its leader has more than half of the first picks in every
	// bucket until the next change (or the end). -1: never within that.
	ChangeTimes []time.Duration
	// Draws[i][b] are the provider draws of target i for attempts starting
	// in bucket b: what the simulated provider really did.
	Draws [][]Draws
	// Admitted and Resolved count the breaker admissions handed out and
	// resolved: every one handed out must be resolved.
	Admitted, Resolved int
	// Hedged counts the requests that had a hedge, HedgesWon those a hedge
	// served, Lost the attempts cancelled because another won.
	Hedged, HedgesWon, Lost int
	// Recovered is, in a scenario with an outage, how long after its end
	// the first request was served (-1: never); LateFailures counts the
	// requests that failed after that.
	Recovered    time.Duration
	LateFailures int
	// FailedWithRoom counts the requests that failed while some target
	// would have served an attempt at once (no limit, or a free slot).
	FailedWithRoom int
	// Queued counts the attempts that waited for a provider's slot, and
	// QueueWait sums their waits.
	Queued    int
	QueueWait time.Duration
	// LeaderPicks[k][w][i] counts the requests of replica k starting in
	// leadership window w (LeaderWindow long) whose first attempt went to
	// target i; LeaderChanges[k] is how often replica k's leader changed,
	// per minute of measured time (leadership.go).
	LeaderPicks   [][][]int
	LeaderChanges []float64
	// Split, for a split oracle, is the share of the requests sent to each
	// target, and SplitsTried how many splits the search ran.
	Split       []float64
	SplitsTried int

	duration  time.Duration
	windowSum time.Duration
}

// Draws are a provider's answers over an interval.
type Draws struct {
	Attempts, Successes, Faults, Timeouts int
	SuccessTime                           time.Duration // sum over the successes
}

// MeanSuccess is the mean latency of the successes (0 with none).
func (d Draws) MeanSuccess() time.Duration {
	if d.Successes == 0 {
		return 0
	}
	return d.SuccessTime / time.Duration(d.Successes)
}

func newResult(s *Scenario, mode string, duration time.Duration) *Result {
	n := buckets(duration)
	r := &Result{Scenario: s, Mode: mode, Selections: map[string]int{}, duration: duration, Recovered: -1,
		Picks: make([][]int, n), BucketRequests: make([]int, n), Draws: make([][]Draws, len(s.Targets))}
	for b := range r.Picks {
		r.Picks[b] = make([]int, len(s.Targets))
	}
	for i := range r.Draws {
		r.Draws[i] = make([]Draws, n)
	}
	r.LeaderPicks = make([][][]int, s.replicas())
	for k := range r.LeaderPicks {
		r.LeaderPicks[k] = make([][]int, leaderWindows(duration))
		for w := range r.LeaderPicks[k] {
			r.LeaderPicks[k][w] = make([]int, len(s.Targets))
		}
	}
	return r
}

// buckets is how many Bucket-long buckets cover the measured time.
func buckets(d time.Duration) int { return int((d + Bucket - 1) / Bucket) }

// measured reports whether a request or attempt starting at t counts, and
// its bucket.
func (r *Result) measured(t time.Duration) (int, bool) {
	if t < 0 || t >= r.duration {
		return 0, false
	}
	return int(t / Bucket), true
}

// drew records a provider's answer to an attempt starting at t.
func (r *Result) drew(target int, t time.Duration, end router.Result, took time.Duration) {
	b, ok := r.measured(t)
	if !ok {
		return
	}
	d := &r.Draws[target][b]
	d.Attempts++
	switch {
	case end.Outcome == telemetry.OutcomeSuccess:
		d.Successes++
		d.SuccessTime += took
	case fault.IsTimeout(end.ErrorType):
		d.Timeouts++
	default:
		d.Faults++
	}
}

// queued records the wait for a slot of an attempt starting at t that
// holds h.
func (r *Result) queued(t time.Duration, h hold) {
	if _, ok := r.measured(t); !ok || h.slot < 0 || h.before <= t {
		return
	}
	r.Queued++
	r.QueueWait += h.before - t
}

// record counts a request that had its first byte after ttfb and ended
// after last.
func (r *Result) record(c *client, served bool, ttfb, last time.Duration) {
	b, ok := r.measured(c.start)
	if !ok {
		return
	}
	r.Requests++
	r.BucketRequests[b]++
	r.Attempts += c.attempts
	r.Faults += c.faults
	r.Skips += c.skips
	r.Selections[c.selection]++
	if c.firstPick >= 0 {
		r.Picks[b][c.firstPick]++
		r.LeaderPicks[c.replica][int(c.start/LeaderWindow)][c.firstPick]++
	}
	if o := r.Scenario.Outage; o != nil {
		switch end := c.start + ttfb; {
		case served && end >= o.To && r.Recovered < 0:
			r.Recovered = end - o.To
		case !served && r.Recovered >= 0:
			r.LateFailures++
		}
	}
	if !served {
		return
	}
	r.Served++
	r.TTFB = append(r.TTFB, ttfb)
	r.LastToken = append(r.LastToken, last)
	if r.Scenario.Lengths != nil {
		if r.LastTokenBy == nil {
			r.LastTokenBy = map[int][]time.Duration{}
		}
		r.LastTokenBy[c.tokens] = append(r.LastTokenBy[c.tokens], last)
	}
	if w := r.Scenario.Window; w != nil && c.start >= w.From && c.start < w.To {
		r.windowSum += ttfb
		r.WindowServed++
	}
}

// finish computes the figures derived from the counts.
func (r *Result) finish() {
	slices.Sort(r.TTFB)
	slices.Sort(r.LastToken)
	for _, v := range r.LastTokenBy {
		slices.Sort(v)
	}
	if r.WindowServed > 0 {
		r.WindowTTFB = r.windowSum / time.Duration(r.WindowServed)
	}
	changes := r.Scenario.Changes
	r.ChangeTimes = make([]time.Duration, len(changes))
	for k, ch := range changes {
		until := r.duration
		if k+1 < len(changes) {
			until = changes[k+1].At
		}
		r.ChangeTimes[k] = r.sustainedLead(ch.Leader, ch.At, until)
	}
	r.LeaderChanges = make([]float64, len(r.LeaderPicks))
	for k, picks := range r.LeaderPicks {
		r.LeaderChanges[k] = float64(LeaderChanges(picks)) / r.duration.Minutes()
	}
}

// ChangeWindow is how long after change k its leader had to take the
// lead: until the next change, or the end of the measured time.
func (r *Result) ChangeWindow(k int) time.Duration {
	changes := r.Scenario.Changes
	until := r.duration
	if k+1 < len(changes) {
		until = changes[k+1].At
	}
	return max(0, min(until, r.duration)-changes[k].At)
}

// ChangeText prints change k's adaptation or recovery time.
func (r *Result) ChangeText(k int) string {
	d := r.ChangeTimes[k]
	if d < 0 {
		return fmt.Sprintf("not within %s", secs(r.ChangeWindow(k)))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// sustainedLead is the time from `from` to the end of the first bucket
// from which target has more than half of the first picks in every bucket
// up to until; -1 when there is none (or the change is past the measured
// time). A bucket with no first pick breaks nothing.
func (r *Result) sustainedLead(target int, from, until time.Duration) time.Duration {
	first, last := int(from/Bucket), buckets(min(until, r.duration))
	if first >= last {
		return -1
	}
	start := -1
	for b := last - 1; b >= first; b-- {
		all := 0
		for _, k := range r.Picks[b] {
			all += k
		}
		if all > 0 && 2*r.Picks[b][target] <= all {
			break
		}
		start = b
	}
	if start < 0 {
		return -1
	}
	return time.Duration(start+1)*Bucket - from
}

// Mean is the mean TTFB of the served requests.
func (r *Result) Mean() time.Duration {
	if len(r.TTFB) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.TTFB {
		sum += d
	}
	return sum / time.Duration(len(r.TTFB))
}

// Quantile is the nearest-rank q-quantile of the served requests' TTFB.
func (r *Result) Quantile(q float64) time.Duration {
	n := len(r.TTFB)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(n))) - 1
	return r.TTFB[min(max(k, 0), n-1)]
}

// MeanQueueWait is the mean wait of the attempts that waited for a slot
// (0 with none).
func (r *Result) MeanQueueWait() time.Duration {
	if r.Queued == 0 {
		return 0
	}
	return r.QueueWait / time.Duration(r.Queued)
}

// PerRequest divides a count by the requests.
func (r *Result) PerRequest(n int) float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(n) / float64(r.Requests)
}

// ServedShare is the share of the requests that were served.
func (r *Result) ServedShare() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Served) / float64(r.Requests)
}

// SelectionShare is the share of the requests with this selection.
func (r *Result) SelectionShare(selection string) float64 {
	return r.PerRequest(r.Selections[selection])
}

// PickShare is target i's share of the first picks over the measured time.
func (r *Result) PickShare(i int) float64 {
	n, all := 0, 0
	for b := range r.Picks {
		n += r.Picks[b][i]
		for _, k := range r.Picks[b] {
			all += k
		}
	}
	if all == 0 {
		return 0
	}
	return float64(n) / float64(all)
}

// PickShareAt is target i's share of the first picks in bucket b (NaN when
// the bucket has none).
func (r *Result) PickShareAt(b, i int) float64 {
	all := 0
	for _, k := range r.Picks[b] {
		all += k
	}
	if all == 0 {
		return math.NaN()
	}
	return float64(r.Picks[b][i]) / float64(all)
}

// DrawsBetween sums target i's draws over the attempts starting in
// [from, to).
func (r *Result) DrawsBetween(i int, from, to time.Duration) Draws {
	var d Draws
	for b := int(from / Bucket); b < buckets(min(to, r.duration)); b++ {
		x := r.Draws[i][b]
		d.Attempts += x.Attempts
		d.Successes += x.Successes
		d.Faults += x.Faults
		d.Timeouts += x.Timeouts
		d.SuccessTime += x.SuccessTime
	}
	return d
}
