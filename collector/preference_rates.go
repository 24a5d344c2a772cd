package collector

import (
	"slices"
	"sync"
	"time"
)

// Percentiles of a key's live samples, of the time to first byte and of
// the output rate (tokens per second after the first chunk, from the
// attempt spans of streamed answers): what a request's preferences bound
// and sort on. A percentile of fewer than PercentileMinSamples samples is
// the largest sample: too few to say more, and the largest never flatters
// a target (for a rate, it flatters; preferences read a rate bound as met
// by an unmeasured target anyway).
const PercentileMinSamples = 10

// percentileIndex is the index of quantile q among n ascending samples:
// the largest below PercentileMinSamples, else element ⌊q·n⌋.
func percentileIndex(n int, q float64) int {
	if n < PercentileMinSamples {
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

// OutputRatePercentile is quantile q of the live output-rate samples of
// (target, model) as of now, in tokens per second, and how many there are.
func (t *Tracker) OutputRatePercentile(target, model string, q float64, now time.Time) (float64, int) {
	w := t.rates.get(seriesKey{target, model})
	if w == nil {
		return 0, 0
	}
	return w.percentile(q, now.UnixNano(), t.maxAge)
}

// RecordOutputRate adds an output-rate sample (tokens per second) of
// (target, model) taken at takenAt, for a key the tracker holds samples
// of; the window and expiry are the latency samples'.
func (t *Tracker) RecordOutputRate(target, model string, rate float64, takenAt time.Time) {
	if !(rate > 0) || t.lookup(target, model) == nil {
		return
	}
	_, at, ok := t.sampleTime(takenAt)
	if !ok {
		return
	}
	t.rates.add(seriesKey{target, model}, t.window).insert(rate, at)
}

// rateStore holds each key's output-rate window; a key is added once (the
// tracker's keys bound them).
type rateStore struct {
	mu   sync.Mutex
	byID map[seriesKey]*rateWindow // guarded by mu
}

func (r *rateStore) get(k seriesKey) *rateWindow {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[k]
}

func (r *rateStore) add(k seriesKey, window int) *rateWindow {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.byID[k]; w != nil {
		return w
	}
	if r.byID == nil {
		r.byID = map[seriesKey]*rateWindow{}
	}
	w := &rateWindow{ring: timeRing[rateSample]{buf: make([]rateSample, window)}}
	r.byID[k] = w
	return w
}

type rateSample struct {
	rate    float64
	takenAt int64 // unix ns
}

func (x rateSample) when() int64 { return x.takenAt }

// rateWindow is one key's live output rates.
type rateWindow struct {
	mu     sync.Mutex
	ring   timeRing[rateSample] // guarded by mu: oldest taken first
	sorted []float64            // guarded by mu: the rates in ring, ascending
}

func (w *rateWindow) insert(rate float64, at int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x := rateSample{rate: rate, takenAt: at}
	evicted, didEvict, ok := w.ring.makeRoom(x)
	if !ok {
		return
	}
	if didEvict {
		w.drop(evicted.rate)
	}
	w.ring.insertByTime(x)
	i, _ := slices.BinarySearch(w.sorted, rate)
	w.sorted = slices.Insert(w.sorted, i, rate)
}

func (w *rateWindow) drop(rate float64) {
	if i, found := slices.BinarySearch(w.sorted, rate); found {
		w.sorted = slices.Delete(w.sorted, i, i+1)
	}
}

func (w *rateWindow) percentile(q float64, now, maxAge int64) (float64, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.ring.n > 0 && expired(w.ring.front().takenAt, now, maxAge) {
		w.drop(w.ring.popFront().rate)
	}
	n := len(w.sorted)
	if n == 0 {
		return 0, 0
	}
	return w.sorted[percentileIndex(n, q)], n
}
