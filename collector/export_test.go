package collector

import (
	"cmp"
	"slices"
	"time"
)

// What the collector's tests read of the tracker beyond what the router
// reads (StatsAt): direct views of a key's window.

// KeyStats is what the tracker knows about one (target, model), for
// listings.
type KeyStats struct {
	Target, Model string
	P50           time.Duration
	Samples       int           // live samples
	OldestAge     time.Duration // age of the oldest live sample
}

// Record adds a sample of this instance's own of ttfb for (target, model),
// taken at takenAt; see RecordSample.
func (t *Tracker) Record(target, model string, ttfb time.Duration, takenAt time.Time) {
	t.RecordSample(target, model, ttfb, takenAt, OriginSelf)
}

// Now is the tracker's clock.
func (t *Tracker) Now() time.Time { return t.now() }

// P50 returns the median TTFB of the live samples of (target, model) and how
// many there are; ok is false when there is none.
func (t *Tracker) P50(target, model string) (p50 time.Duration, samples int, ok bool) {
	return t.P50At(target, model, t.now())
}

// P50At is P50 as of now, from the tracker's clock.
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

// Stats returns what the tracker knows about (target, model); ok is false
// when it has no live sample.
func (t *Tracker) Stats(target, model string) (KeyStats, bool) {
	s := t.lookup(target, model)
	if s == nil {
		return KeyStats{}, false
	}
	return s.keyStats(t.now().UnixNano(), t.maxAge)
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

// Keys returns how many (target, model) keys the tracker holds.
func (t *Tracker) Keys() int { return len(*t.index.Load()) }

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
