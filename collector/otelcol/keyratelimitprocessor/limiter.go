package keyratelimitprocessor

import (
	"sync"
	"time"
)

// key is what a span is limited by: the gateway's target and the upstream
// model, the pair a replica's tracker keeps samples for.
type key struct{ target, model string }

// bucket is a token bucket: tokens accrue at the limiter's rate up to its
// burst; a span passes when a whole token is there to spend.
type bucket struct {
	tokens float64
	last   time.Time // when tokens was last brought up to date
}

// take brings b up to now and spends a token if there is one.
func (b *bucket) take(now time.Time, rate, burst float64) bool {
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(burst, b.tokens+dt*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// full reports whether b would be full at now: such a bucket is the same
// as a new one, and can be forgotten.
func (b *bucket) full(now time.Time, rate, burst float64) bool {
	return b.tokens+now.Sub(b.last).Seconds()*rate >= burst
}

// limiter holds one token bucket per key, at most maxKeys of them, plus
// one that the keys beyond share.
type limiter struct {
	// Immutable after newLimiter.
	rate, burst float64
	maxKeys     int
	// refill is how long an idle bucket takes to fill: after it, it holds
	// nothing a new bucket would not.
	refill time.Duration

	mu        sync.Mutex
	buckets   map[key]*bucket // guarded by mu
	overflow  bucket          // guarded by mu: shared by keys beyond maxKeys
	lastSweep time.Time       // guarded by mu
}

func newLimiter(rate, burst float64, maxKeys int) *limiter {
	return &limiter{
		rate: rate, burst: burst, maxKeys: maxKeys,
		refill:  time.Duration(burst / rate * float64(time.Second)),
		buckets: map[key]*bucket{},
	}
}

// allowFunc answers for each span of one batch; the limiter is locked
// while a batch is judged, so a batch costs one lock, not one a span.
type allowFunc func(k key) bool

// batch calls judge with the limiter locked and a function that answers,
// at now, whether a span of key k passes.
func (l *limiter) batch(now time.Time, judge func(allow allowFunc)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	judge(func(k key) bool { return l.allowLocked(k, now) })
}

func (l *limiter) allowLocked(k key, now time.Time) bool {
	b, ok := l.buckets[k]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.sweepLocked(now)
		}
		if len(l.buckets) >= l.maxKeys {
			return l.overflow.take(now, l.rate, l.burst)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[k] = b
	}
	return b.take(now, l.rate, l.burst)
}

// sweepLocked forgets the buckets that are full again, at most once per
// refill time (a sweep reads every bucket).
func (l *limiter) sweepLocked(now time.Time) {
	if !l.lastSweep.IsZero() && now.Sub(l.lastSweep) < max(l.refill, time.Second) {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.full(now, l.rate, l.burst) {
			delete(l.buckets, k)
		}
	}
}

// keys is how many keys have a bucket of their own.
func (l *limiter) keys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
