package collector

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/internal/homes"
	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// Defaults of TrackerOptions: the last 100 samples of the last 5 minutes.
const (
	DefaultWindow = 100
	DefaultMaxAge = 5 * time.Minute
)

// TrackerOptions configures a Tracker. The zero value is the product's
// tracker.
type TrackerOptions struct {
	// Window is how many samples (and, separately, outcomes) each (target,
	// model) keeps: the most recently taken ones. Zero (or negative) means
	// DefaultWindow, 100.
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

// Tracker keeps the recent time-to-first-byte samples and attempt outcomes
// of every (target, upstream model) and answers the statistics every routing
// mode ranks on (StatsAt). The router reads them for every eligible target of
// every request, so reads take no lock and allocate nothing unless something
// has expired since the last change; a record, once per attempt, locks only
// its own key.
type Tracker struct {
	// Immutable after NewTracker.
	window  int
	maxAge  int64 // nanoseconds
	now     func() time.Time
	maxKeys int
	homes   *homes.Map // which target stored which response (responsehomes.go); locks itself
	// completion is the output rates and answer lengths (completion.go);
	// locks itself.
	completion *completionMemory

	// index maps a key to its series. It is copied on write (a key is added
	// once per target and model, rarely) so lookups are one atomic load and a
	// map read, with no lock shared between readers.
	index   atomic.Pointer[map[seriesKey]*series]
	indexMu sync.Mutex // serializes changes to index
}

type seriesKey struct{ target, model string }

// NewTracker returns an empty tracker.
func NewTracker(o TrackerOptions) *Tracker {
	t := &Tracker{
		window:  o.Window,
		maxAge:  int64(o.MaxAge),
		now:     o.Now,
		maxKeys: o.MaxKeys,
		homes:   homes.New(0, 0),
	}
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
	t.completion = newCompletionMemory(t.window, t.maxKeys, t.maxAge)
	empty := map[seriesKey]*series{}
	t.index.Store(&empty)
	return t
}

// RecordSample adds a latency sample of ttfb for (target, model), taken at
// takenAt, from origin. A zero takenAt means now; one in the future (a
// peer's clock running ahead) is taken as now; one that has already expired
// is dropped, as is a negative ttfb. Once the key holds Window samples, the
// oldest taken is evicted (or the new one dropped, if it is older still).
//
// A sample is also a successful attempt: it counts as an outcome with no
// fault towards the fault rate.
func (t *Tracker) RecordSample(target, model string, ttfb time.Duration, takenAt time.Time, origin Origin) {
	t.recordSample(target, model, ttfb, takenAt, origin, 0)
}

// recordSample is RecordSample and, when inflight > 0, a step of the load
// curve at the level the sample met (inflight, this instance's attempts in
// flight there when it started, plus the peers' as last reported), under
// one lock: this instance's own samples say the load they met.
func (t *Tracker) recordSample(target, model string, ttfb time.Duration, takenAt time.Time, origin Origin, inflight int) {
	if ttfb < 0 || origin >= originCount {
		return
	}
	s, now, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	s.insertSample(sample{ttfb: ttfb, logTTFB: logSeconds(ttfb), takenAt: at, origin: origin})
	s.insertOutcome(outcome{takenAt: at})
	if inflight > 0 && ttfb > 0 {
		s.addLoad(inflight+s.peersNow(now), ttfb, at, now)
	}
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// RecordFault adds the outcome of an attempt on (target, model) that failed
// with fault (fault.Half or fault.Full; fault.None is not an outcome and is
// ignored) after cost, taken at takenAt; timeout says it ran out of time.
// Same window, expiry and handling of takenAt as RecordSample, over the
// outcomes rather than the samples. A negative cost counts as 0.
func (t *Tracker) RecordFault(target, model string, f fault.Fault, cost time.Duration, timeout bool, takenAt time.Time) {
	if f != fault.Half && f != fault.Full {
		return
	}
	s, _, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	s.insertOutcome(outcome{fault: f, timeout: timeout, cost: max(0, cost), takenAt: at})
	s.insertTry(at)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// RecordLate adds a censored observation for (target, model), taken at
// takenAt, from origin: an attempt that had waited waited without a first
// byte when it was cancelled because another attempt of its request
// answered first (hedge_lost). It is not an outcome (the failure model says
// nothing of it), and its time to first byte is unknown: it says only that
// the target was slower than waited. Left out, it would bias every estimate
// low, the more so the more a target is hedged (survivorship: a target
// whose slow attempts hedges keep beating would show only its fast ones).
// So it counts at the time such an attempt is expected to take
// (censoredValue), in the samples' window: in the EWMA, the recency-weighted
// log moments and CensoredP99; not in Samples, the origins, P50-P99 (the
// answers' own: the hedge's delay and the preferences read them), the load
// curve, the output rates or the fault rate. It also counts as an attempt without a sample
// (stats.ColdTries), and, when waited is past the target's p95 (a hedge
// cancelled early, because the attempt it raced answered, says nothing
// against its target), as a late (stats.Target.Late), which
// reliable-latency weighs with its faults when it is past its p99.
func (t *Tracker) RecordLate(target, model string, waited time.Duration, takenAt time.Time, origin Origin) {
	if origin >= originCount {
		return
	}
	s, _, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	waited = max(0, waited)
	if n := len(s.sorted); n == 0 || waited >= s.sorted[quantileIndex(n, 0.95)] {
		s.insertLate(outcome{cost: waited, takenAt: at})
	}
	if v, ok := censoredValue(s.sorted, s.censored, waited); ok {
		s.insertSample(sample{ttfb: v, logTTFB: logSeconds(v), takenAt: at, origin: origin, censored: true})
	}
	s.insertTry(at)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// RecordSuccess adds a successful attempt's outcome for (target, model)
// without a latency sample: one whose time to first byte says nothing of a
// cold prompt's (the provider read the prompt from its cache).
func (t *Tracker) RecordSuccess(target, model string, takenAt time.Time) {
	s, _, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	s.insertOutcome(outcome{takenAt: at})
	s.insertTry(at)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// RecordTry adds an attempt on (target, model) that ended with nothing the
// failure model or the latency sample learns (a 4xx handed to the client,
// a cancel), taken at takenAt: it counts only towards the attempts without
// a sample that end a target's claim to be unmeasured (stats.ColdTries).
func (t *Tracker) RecordTry(target, model string, takenAt time.Time) {
	s, _, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	s.insertTry(at)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// RecordPeerInflight notes that a peer instance had n attempts in flight
// at (target, model) at takenAt (its latest span said so): the modes add
// the peers' counts to this instance's own.
func (t *Tracker) RecordPeerInflight(target, model, instance string, n int, takenAt time.Time) {
	if instance == "" {
		return
	}
	s, _, at := t.open(target, model, takenAt)
	if s == nil {
		return
	}
	s.setPeer(instance, n, at)
	s.publish(t.maxAge)
	s.mu.Unlock()
}

// open returns the series of (target, model) locked, its expired data
// dropped as of now, with takenAt placed on the clock (at); nil when the
// observation has already expired or the series cannot be added. The
// caller publishes what it changed and unlocks.
func (t *Tracker) open(target, model string, takenAt time.Time) (s *series, now, at int64) {
	now, at, ok := t.sampleTime(takenAt)
	if !ok {
		return nil, 0, 0
	}
	if s = t.seriesFor(target, model); s == nil {
		return nil, 0, 0
	}
	s.mu.Lock()
	s.expire(now, t.maxAge)
	return s, now, at
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

// StatsAt is what the spans have taught about (target, model) as of now,
// which the caller read from the tracker's clock (Now): the router reads the
// clock once per request rather than once per candidate. The zero
// TargetStats means nothing is live. It allocates nothing and, unless
// something has just expired, locks nothing.
func (t *Tracker) StatsAt(target, model string, now time.Time) stats.Target {
	s := t.lookup(target, model)
	if s == nil {
		return stats.Target{}
	}
	return s.current(now.UnixNano(), t.maxAge).targetStats()
}

// Retain forgets every (target, model) for which keep is false: a reload
// that removed a target forgets its samples, and those of the targets that
// remain are kept.
func (t *Tracker) Retain(keep func(target, model string) bool) {
	t.completion.retain(keep)
	t.indexMu.Lock()
	defer t.indexMu.Unlock()
	next := maps.Clone(*t.index.Load())
	maps.DeleteFunc(next, func(k seriesKey, _ *series) bool { return !keep(k.target, k.model) })
	t.index.Store(&next)
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
