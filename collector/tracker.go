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
// upstream model) and answers their median. The router reads P50 for every
// eligible target of every request, so reads take no lock and allocate
// nothing unless a sample has expired since the last change; Record, once per
// attempt, locks only its own key.
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
func (t *Tracker) Record(target, model string, ttfb time.Duration, takenAt time.Time) {
	if ttfb < 0 {
		return
	}
	nowT := t.now()
	now := nowT.UnixNano()
	at := now
	if !takenAt.IsZero() && takenAt.Before(nowT) {
		// Compare as times first: Sub saturates where UnixNano of a time
		// centuries away would overflow.
		if nowT.Sub(takenAt) >= time.Duration(t.maxAge) {
			return
		}
		at = takenAt.UnixNano()
	}
	s := t.lookup(target, model)
	if s == nil {
		if s = t.add(target, model); s == nil {
			return // over MaxKeys, or a name no target could have
		}
	}
	s.mu.Lock()
	s.expire(now, t.maxAge)
	s.insert(sample{ttfb: ttfb, takenAt: at}, t.window)
	s.publish(t.maxAge)
	s.mu.Unlock()
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

	mu     sync.Mutex
	ring   sampleRing      // guarded by mu: live samples, oldest taken first
	sorted []time.Duration // guarded by mu: the TTFBs in ring, ascending
}

// seriesStats is an immutable summary of a series.
type seriesStats struct {
	p50     time.Duration
	ewma    time.Duration // EWMAAlpha-weighted mean of the live samples, oldest first
	samples int
	oldest  int64 // takenAt of the oldest live sample, unix ns
	staleAt int64 // unix ns at which the oldest sample expires; math.MaxInt64 with no sample
}

var emptyStats = &seriesStats{staleAt: math.MaxInt64}

type sample struct {
	ttfb    time.Duration
	takenAt int64 // unix ns
}

func newSeries(target, model string, window int) *series {
	s := &series{
		target: target,
		model:  model,
		ring:   sampleRing{buf: make([]sample, window)},
		sorted: make([]time.Duration, 0, window),
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

// expire drops the samples that have expired by now and reports whether
// there were any. The ring is in takenAt order, so they are at its front.
// Called with mu held.
func (s *series) expire(now, maxAge int64) bool {
	dropped := false
	for s.ring.n > 0 && expired(s.ring.front().takenAt, now, maxAge) {
		s.sorted = removeSorted(s.sorted, s.ring.popFront().ttfb)
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
	if n == 0 {
		s.stats.Store(emptyStats)
		return
	}
	oldest := s.ring.front().takenAt
	ewma := float64(s.ring.front().ttfb)
	for i := 1; i < s.ring.n; i++ {
		ewma = ewmaStep(ewma, float64(s.ring.at(i).ttfb))
	}
	s.stats.Store(&seriesStats{
		ewma:    time.Duration(math.Round(ewma)),
		p50:     s.sorted[medianIndex(n)],
		samples: n,
		oldest:  oldest,
		staleAt: oldest + maxAge,
	})
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

// sampleRing is a fixed-capacity ring of samples kept in takenAt order, so
// the oldest sample, the next to expire or be evicted, is always at the
// front. Samples normally arrive in that order (an attempt ends after the
// previous one); a peer's sample that arrives late is slotted in by time.
type sampleRing struct {
	buf  []sample // len(buf) is the capacity
	head int      // index in buf of the front
	n    int      // samples held
}

func (r *sampleRing) at(i int) *sample {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

func (r *sampleRing) front() sample { return r.buf[r.head] }

func (r *sampleRing) popFront() sample {
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
func (r *sampleRing) insertByTime(x sample) {
	i := r.n
	for ; i > 0 && r.at(i-1).takenAt > x.takenAt; i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(i) = x
	r.n++
}
