package collector

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of TrackerOptions (SPEC section 5).
const (
	DefaultWindow = 100
	DefaultMaxAge = 5 * time.Minute
)

// TrackerOptions configures a Tracker. The zero value is the SPEC's tracker.
type TrackerOptions struct {
	// Window is how many samples each (target, model) keeps: the most
	// recently taken ones. Zero (or negative) means DefaultWindow, 100.
	Window int
	// MaxAge is how long a sample counts after it was taken; a sample taken at
	// T stops counting at T+MaxAge exactly. Zero (or negative) means
	// DefaultMaxAge, 5 minutes.
	MaxAge time.Duration
	// Now tells the time; every expiry is judged against it. Nil means
	// time.Now. Tests inject a fake clock.
	Now func() time.Time
	// MaxKeys bounds how many (target, model) keys the tracker holds, so
	// spans from a misbehaving peer cannot grow it without end; samples for
	// further keys are dropped. Zero (or negative) means DefaultMaxKeys.
	MaxKeys int
}

// DefaultMaxKeys is far above any real set of targets times models.
const DefaultMaxKeys = 4096

// maxKeyLen bounds a target or model name taken from a span.
const maxKeyLen = 256

// Tracker keeps the recent time-to-first-byte samples of every (target,
// upstream model) and answers their median (and EWMA and log moments), and
// keeps the weighted outcomes of its recent attempts for an error rate. The
// router reads P50 for every eligible target of every request, so reads take
// no lock and allocate nothing unless a sample has expired since the last
// change; Record, once per attempt, locks only its own key.
type Tracker struct {
	// Immutable after NewTracker.
	window  int
	maxAge  int64 // nanoseconds
	now     func() time.Time
	maxKeys int

	// index maps a key to its series. It is copied on write (a key is added
	// once per target and model, rarely) so lookups are one atomic load and a
	// map read, with no lock shared between readers.
	index   atomic.Pointer[map[seriesKey]*series]
	indexMu sync.Mutex // serializes adding keys to index
}

// KeyStats is what the tracker knows about one (target, model).
type KeyStats struct {
	Target, Model string
	P50           time.Duration
	Samples       int           // live samples
	OldestAge     time.Duration // age of the oldest live sample
}

type seriesKey struct{ target, model string }

// NewTracker returns an empty tracker.
func NewTracker(o TrackerOptions) *Tracker {
	t := &Tracker{
		window: o.Window,
		maxAge: int64(o.MaxAge),
		now:    o.Now,
	}
	t.maxKeys = o.MaxKeys
	if t.maxKeys <= 0 {
		t.maxKeys = DefaultMaxKeys
	}
	if t.window <= 0 {
		t.window = DefaultWindow
	}
	if t.maxAge <= 0 {
		t.maxAge = int64(DefaultMaxAge)
	}
	if t.now == nil {
		t.now = time.Now
	}
	empty := map[seriesKey]*series{}
	t.index.Store(&empty)
	return t
}

// Record adds a sample of ttfb for (target, model), taken at takenAt. A zero
// takenAt means now; one in the future (a peer's clock running ahead) is
// taken as now; one that has already expired is dropped, as is a negative
// ttfb. Once the key holds Window samples, the oldest taken is evicted (or the
// new one dropped, if it is older still).
//
// A sample is also a successful attempt: it counts as an outcome of weight 0
// towards the error rate ReliabilityAt reports.
func (t *Tracker) Record(target, model string, ttfb time.Duration, takenAt time.Time) {
	if ttfb < 0 {
		return
	}
	now, at, ok := t.sampleTime(takenAt)
	if !ok {
		return
	}
	s := t.seriesFor(target, model)
	if s == nil {
		return
	}
	s.mu.Lock()
	s.expire(now, t.maxAge)
	s.insert(sample{ttfb: ttfb, logTTFB: logSeconds(ttfb), takenAt: at}, t.window)
	s.outcomes.insert(outcome{takenAt: at}, t.window)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// Outcome weights of failed attempts towards the error rate (SPEC section 5):
// a rate limit, an overload or a server error, a timeout or a transport
// failure counts fully; the provider rejecting the request (400, 422), which
// may be the client's fault as much as the provider's, counts half. A success
// weighs 0 (Record counts it).
const (
	WeightFailure  = 1.0
	WeightRejected = 0.5
)

// RecordOutcome adds the outcome of an attempt on (target, model) that gave
// no latency sample, weighing weight (0 a success, 1 a failure; see
// WeightFailure), taken at takenAt. Same window, expiry and handling of
// takenAt as Record, over the outcomes rather than the samples. A weight
// outside [0, 1] (or NaN) is dropped.
func (t *Tracker) RecordOutcome(target, model string, weight float64, takenAt time.Time) {
	if !(weight >= 0 && weight <= 1) {
		return
	}
	now, at, ok := t.sampleTime(takenAt)
	if !ok {
		return
	}
	s := t.seriesFor(target, model)
	if s == nil {
		return
	}
	s.mu.Lock()
	s.expire(now, t.maxAge)
	s.outcomes.insert(outcome{weight: weight, takenAt: at}, t.window)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// sampleTime reads the clock and places takenAt on it, in unix ns: zero or
// in the future means now; ok is false when it has already expired.
func (t *Tracker) sampleTime(takenAt time.Time) (now, at int64, ok bool) {
	nowT := t.now()
	now = nowT.UnixNano()
	at = now
	if !takenAt.IsZero() && takenAt.Before(nowT) {
		// Compare as times first: Sub saturates where UnixNano of a time
		// centuries away would overflow.
		if nowT.Sub(takenAt) >= time.Duration(t.maxAge) {
			return 0, 0, false
		}
		at = takenAt.UnixNano()
	}
	return now, at, true
}

// seriesFor returns the series of (target, model), adding it if needed; nil
// over MaxKeys, or for a name no target could have.
func (t *Tracker) seriesFor(target, model string) *series {
	if s := t.lookup(target, model); s != nil {
		return s
	}
	return t.add(target, model)
}

// P50 returns the median TTFB of the live samples of (target, model) and how
// many there are; ok is false when there is none. It is on the request path:
// it allocates nothing and, unless a sample has just expired, locks nothing.
func (t *Tracker) P50(target, model string) (p50 time.Duration, samples int, ok bool) {
	return t.P50At(target, model, t.now())
}

// P50At is P50 as of now, which the caller read from the same clock as the
// tracker's: the router reads the clock once per request instead of once per
// candidate (a clock read costs more than the rest of a P50 here).
func (t *Tracker) P50At(target, model string, now time.Time) (p50 time.Duration, samples int, ok bool) {
	s := t.lookup(target, model)
	if s == nil {
		return 0, 0, false
	}
	st := s.current(now.UnixNano(), t.maxAge)
	if st.samples == 0 {
		return 0, 0, false
	}
	return st.p50, st.samples, true
}

// EWMAAt is the exponentially weighted moving average (alpha EWMAAlpha) of
// the live samples of (target, model) in the order they were taken, as of
// now; ok is false when there is none. Same window and expiry as P50.
func (t *Tracker) EWMAAt(target, model string, now time.Time) (ewma time.Duration, samples int, ok bool) {
	s := t.lookup(target, model)
	if s == nil {
		return 0, 0, false
	}
	st := s.current(now.UnixNano(), t.maxAge)
	if st.samples == 0 {
		return 0, 0, false
	}
	return st.ewma, st.samples, true
}

// ReliabilityAt is what reliable-latency draws from, as of now (from the
// tracker's clock): the mean and the sample standard deviation (0 for one
// sample) of the natural logarithms of the live TTFB samples of (target,
// model) in seconds, how many there are, and the weighted error rate of the
// live outcomes (the sum of their weights over their count; 0 with none).
// ok is false when there is no live sample; errRate is still reported then.
// Like P50At it allocates nothing and, unless something has just expired,
// locks nothing.
func (t *Tracker) ReliabilityAt(target, model string, now time.Time) (logMean, logStd float64, samples int, errRate float64, ok bool) {
	s := t.lookup(target, model)
	if s == nil {
		return 0, 0, 0, 0, false
	}
	st := s.current(now.UnixNano(), t.maxAge)
	if st.samples == 0 {
		return 0, 0, 0, st.errRate, false
	}
	return st.logMean, st.logStd, st.samples, st.errRate, true
}

// Stats returns what the tracker knows about (target, model); ok is false
// when it has no live sample.
func (t *Tracker) Stats(target, model string) (KeyStats, bool) {
	s := t.lookup(target, model)
	if s == nil {
		return KeyStats{}, false
	}
	now := t.now().UnixNano()
	return s.keyStats(now, t.maxAge)
}

// OldestSampleAge returns how long ago the oldest live sample of (target,
// model) was taken; ok is false when there is none. (The router's debug page
// asks for it through an optional interface.)
func (t *Tracker) OldestSampleAge(target, model string) (time.Duration, bool) {
	ks, ok := t.Stats(target, model)
	return ks.OldestAge, ok
}

// All returns the stats of every key with at least one live sample, sorted
// by target, then model.
func (t *Tracker) All() []KeyStats {
	now := t.now().UnixNano()
	index := *t.index.Load()
	out := make([]KeyStats, 0, len(index))
	for _, s := range index {
		if ks, ok := s.keyStats(now, t.maxAge); ok {
			out = append(out, ks)
		}
	}
	slices.SortFunc(out, func(a, b KeyStats) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Model, b.Model))
	})
	return out
}

func (t *Tracker) lookup(target, model string) *series {
	return (*t.index.Load())[seriesKey{target, model}]
}

// add returns the series of (target, model), creating it if needed; nil
// when the tracker is full or a name is absurdly long.
func (t *Tracker) add(target, model string) *series {
	if len(target) > maxKeyLen || len(model) > maxKeyLen {
		return nil
	}
	t.indexMu.Lock()
	defer t.indexMu.Unlock()
	k := seriesKey{target, model}
	old := *t.index.Load()
	if s, ok := old[k]; ok {
		return s // added while we waited for indexMu
	}
	if len(old) >= t.maxKeys {
		return nil
	}
	s := newSeries(target, model, t.window)
	next := maps.Clone(old)
	next[k] = s
	t.index.Store(&next)
	return s
}

// series holds the samples of one (target, model).
type series struct {
	// Immutable after newSeries.
	target, model string

	// stats is what readers see: the figures as of the last change and when
	// they go stale. It is replaced, never modified, under mu.
	stats atomic.Pointer[seriesStats]

	mu       sync.Mutex
	ring     sampleRing      // guarded by mu: live samples, oldest taken first
	sorted   []time.Duration // guarded by mu: the TTFBs in ring, ascending
	outcomes outcomeRing     // guarded by mu: live attempt outcomes, oldest taken first
}

// seriesStats is an immutable summary of a series.
type seriesStats struct {
	p50     time.Duration
	ewma    time.Duration // EWMAAlpha-weighted mean of the live samples, oldest first
	samples int
	oldest  int64 // takenAt of the oldest live sample, unix ns
	staleAt int64 // unix ns at which the oldest sample or outcome expires; math.MaxInt64 with none

	logMean, logStd float64 // of ln(TTFB in seconds) over the live samples
	errRate         float64 // weighted error rate of the live outcomes
}

var emptyStats = &seriesStats{staleAt: math.MaxInt64}

type sample struct {
	ttfb    time.Duration
	logTTFB float64 // logSeconds(ttfb), taken once at insert
	takenAt int64   // unix ns
}

func (x sample) when() int64 { return x.takenAt }

// outcome is one attempt's contribution to the error rate.
type outcome struct {
	weight  float64 // 0 success .. 1 failure
	takenAt int64   // unix ns
}

func (x outcome) when() int64 { return x.takenAt }

type (
	sampleRing  = timeRing[sample]
	outcomeRing = timeRing[outcome]
)

func newSeries(target, model string, window int) *series {
	s := &series{
		target:   target,
		model:    model,
		ring:     sampleRing{buf: make([]sample, window)},
		sorted:   make([]time.Duration, 0, window),
		outcomes: outcomeRing{buf: make([]outcome, window)},
	}
	s.stats.Store(emptyStats)
	return s
}

// current returns the series' stats as of now, first expiring samples if
// the published stats have gone stale. That check is the whole cost of a read
// with nothing to expire.
func (s *series) current(now, maxAge int64) *seriesStats {
	if st := s.stats.Load(); now < st.staleAt {
		return st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expire(now, maxAge) {
		s.publish(maxAge)
	}
	return s.stats.Load()
}

func (s *series) keyStats(now, maxAge int64) (KeyStats, bool) {
	st := s.current(now, maxAge)
	if st.samples == 0 {
		return KeyStats{}, false
	}
	return KeyStats{
		Target:    s.target,
		Model:     s.model,
		P50:       st.p50,
		Samples:   st.samples,
		OldestAge: time.Duration(max(0, now-st.oldest)), // a sample recorded since now was read
	}, true
}

// expire drops the samples and outcomes that have expired by now and
// reports whether there were any. The rings are in takenAt order, so they are
// at their fronts. Called with mu held.
func (s *series) expire(now, maxAge int64) bool {
	dropped := false
	for s.ring.n > 0 && expired(s.ring.front().takenAt, now, maxAge) {
		s.sorted = removeSorted(s.sorted, s.ring.popFront().ttfb)
		dropped = true
	}
	for s.outcomes.n > 0 && expired(s.outcomes.front().takenAt, now, maxAge) {
		s.outcomes.popFront()
		dropped = true
	}
	return dropped
}

// insert adds x, evicting the oldest sample if the window is full. Called
// with mu held.
func (s *series) insert(x sample, window int) {
	if s.ring.n == window {
		if x.takenAt < s.ring.front().takenAt {
			return // older than every sample kept: not among the last Window
		}
		s.sorted = removeSorted(s.sorted, s.ring.popFront().ttfb)
	}
	s.ring.insertByTime(x)
	s.sorted = insertSorted(s.sorted, x.ttfb)
}

// publish replaces the readers' stats with the current figures. Called with
// mu held.
func (s *series) publish(maxAge int64) {
	n := len(s.sorted)
	if n == 0 && s.outcomes.n == 0 {
		s.stats.Store(emptyStats)
		return
	}
	st := &seriesStats{samples: n, staleAt: math.MaxInt64}
	if n > 0 {
		st.oldest = s.ring.front().takenAt
		st.staleAt = st.oldest + maxAge
		st.p50 = s.sorted[medianIndex(n)]
		front := s.ring.front()
		ewma := float64(front.ttfb)
		m := moments{shift: front.logTTFB}
		a, b := s.ring.segments()
		for _, x := range a[1:] { // the front is a[0]
			ewma = ewmaStep(ewma, float64(x.ttfb))
			m.add(x.logTTFB)
		}
		for _, x := range b {
			ewma = ewmaStep(ewma, float64(x.ttfb))
			m.add(x.logTTFB)
		}
		m.add(front.logTTFB)
		st.ewma = time.Duration(math.Round(ewma))
		st.logMean, st.logStd = m.mean(), m.std()
	}
	if s.outcomes.n > 0 {
		st.staleAt = min(st.staleAt, s.outcomes.front().takenAt+maxAge)
		sum := 0.0
		a, b := s.outcomes.segments()
		for _, x := range a {
			sum += x.weight
		}
		for _, x := range b {
			sum += x.weight
		}
		st.errRate = errorRate(sum, s.outcomes.n)
	}
	s.stats.Store(st)
}

// minTTFBForLog bounds a TTFB's logarithm from below: a sample of 0 (a clock's
// resolution) counts as one microsecond rather than as ln 0 = -Inf.
const minTTFBForLog = time.Microsecond

// logSeconds is ln of ttfb in seconds, ttfb taken as at least
// minTTFBForLog.
func logSeconds(ttfb time.Duration) float64 {
	return math.Log(max(ttfb, minTTFBForLog).Seconds())
}

// moments accumulates the mean and the variance of values in one pass with
// no division per value (publish runs on every Record): sums of deviations
// from shift, a value near the others (the first), which keeps the
// sum-of-squares formula accurate where raw sums would cancel.
type moments struct {
	shift      float64
	n          int
	sum, sumSq float64 // of x - shift, (x - shift)^2
}

func (m *moments) add(x float64) {
	d := x - m.shift
	m.n++
	m.sum += d
	m.sumSq += d * d
}

// mean is the mean of the values added; 0 with none.
func (m *moments) mean() float64 {
	if m.n == 0 {
		return 0
	}
	return m.shift + m.sum/float64(m.n)
}

// std is the sample standard deviation (n-1 in the denominator); 0 for fewer
// than two values.
func (m *moments) std() float64 {
	if m.n < 2 {
		return 0
	}
	n := float64(m.n)
	return math.Sqrt(max(0, (m.sumSq-m.sum*m.sum/n)/(n-1)))
}

// errorRate is the weighted error rate of n outcomes whose weights sum to
// sum, clamped to [0, 1]; 0 with none.
func errorRate(sum float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return min(1, max(0, sum/float64(n)))
}

// EWMAAlpha is the weight of the newest sample in the ewma-latency mode's
// moving average (SPEC section 5).
const EWMAAlpha = 0.3

// ewmaStep folds sample x into the average avg.
func ewmaStep(avg, x float64) float64 { return EWMAAlpha*x + (1-EWMAAlpha)*avg }

// expired reports whether a sample taken at takenAt has expired by now: it
// lives for maxAge, so at takenAt+maxAge exactly it no longer counts.
func expired(takenAt, now, maxAge int64) bool {
	return now-takenAt >= maxAge
}

// medianIndex is the index of the p50 among n samples sorted ascending:
// ⌊n/2⌋ (SPEC section 5), so for an even n it is the upper middle one.
func medianIndex(n int) int {
	return n / 2
}

// insertSorted inserts v into the ascending slice sorted, after any equal
// values, and returns the extended slice. It does not allocate while
// cap(sorted) > len(sorted).
func insertSorted(sorted []time.Duration, v time.Duration) []time.Duration {
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })
	sorted = append(sorted, 0)
	copy(sorted[i+1:], sorted[i:])
	sorted[i] = v
	return sorted
}

// removeSorted removes one occurrence of v from the ascending slice sorted,
// if there is one, and returns the shortened slice.
func removeSorted(sorted []time.Duration, v time.Duration) []time.Duration {
	i, found := slices.BinarySearch(sorted, v)
	if !found {
		return sorted
	}
	return slices.Delete(sorted, i, i+1)
}

// timed is an entry of a timeRing: it knows when it was taken (unix ns).
type timed interface{ when() int64 }

// timeRing is a fixed-capacity ring of samples (or outcomes) kept in
// takenAt order, so the oldest, the next to expire or be evicted, is always
// at the front. They normally arrive in that order (an attempt ends after the
// previous one); a peer's that arrives late is slotted in by time.
type timeRing[T timed] struct {
	buf  []T // len(buf) is the capacity
	head int // index in buf of the front
	n    int // entries held
}

// insert adds x, evicting the oldest entry if the ring is full (or dropping
// x, if it is older still: it is not among the last len(buf)).
func (r *timeRing[T]) insert(x T, window int) {
	if r.n == window {
		if x.when() < r.front().when() {
			return
		}
		r.popFront()
	}
	r.insertByTime(x)
}

func (r *timeRing[T]) at(i int) *T {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

// segments returns the entries held, oldest first, as the two runs of buf
// they occupy (b is empty unless they wrap around its end).
func (r *timeRing[T]) segments() (a, b []T) {
	end := r.head + r.n
	if end <= len(r.buf) {
		return r.buf[r.head:end], nil
	}
	return r.buf[r.head:], r.buf[:end-len(r.buf)]
}

func (r *timeRing[T]) front() T { return r.buf[r.head] }

func (r *timeRing[T]) popFront() T {
	x := r.buf[r.head]
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return x
}

// insertByTime adds x after every sample taken no later than it. The ring
// must not be full.
func (r *timeRing[T]) insertByTime(x T) {
	i := r.n
	for ; i > 0 && (*r.at(i - 1)).when() > x.when(); i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(i) = x
	r.n++
}
