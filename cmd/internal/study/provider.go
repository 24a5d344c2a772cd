package study

import (
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// A simulated provider answers each attempt from its own random stream,
// derived from the seed and its index alone, and takes exactly three draws
// per attempt whatever the outcome: so one provider's traffic never shifts
// another's draws, and the k-th attempt on a provider draws the same
// numbers in every mode (the modes are compared on common random numbers).

// Stream numbers of the study's random sources: the router's, then one per
// provider (streamProvider + index).
const (
	streamRouter   = 0
	streamProvider = 1
)

// newSource returns the PCG source of stream for seed. The two PCG seeds
// are mixed from (seed, stream) so that neighbouring streams start far
// apart rather than one state increment away.
func newSource(seed, stream uint64) *rand.PCG {
	a := splitmix64(seed ^ splitmix64(stream))
	return rand.NewPCG(a, splitmix64(a))
}

// splitmix64 is the SplitMix64 finalizer: a bijective mix of x's bits.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// lockedRand is the router's randomness: a seeded source behind a mutex,
// because mode.Rand must be safe for concurrent use (a run drives it
// from one goroutine, so the lock is never contended).
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

var _ mode.Rand = (*lockedRand)(nil)

func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// provider is one simulated upstream.
type provider struct {
	rng *rand.Rand
	// window is the second (of measured time, floored) a rate limit
	// counts in, and taken the attempts it took in it.
	window time.Duration
	taken  int
	// slots serve its successes (queue.go).
	slots slots
	// seen is when it last answered each conversation: its prompt cache.
	seen map[int]time.Duration
}

// room reports whether a target limited to limit attempts a second takes
// one starting at t: its count starts afresh every whole second.
func (p *provider) room(limit int, t time.Duration) bool {
	if w := windowOf(t); w != p.window {
		p.window, p.taken = w, 0
	}
	return limit == 0 || p.taken < limit
}

// windowOf is the start of the rate limit's second that t falls in.
func windowOf(t time.Duration) time.Duration {
	w := t.Truncate(time.Second)
	if w > t { // negative times (the warm-up) truncate towards zero
		w -= time.Second
	}
	return w
}

func newProvider(seed uint64, index int, t Target) *provider {
	return &provider{rng: rand.New(newSource(seed, streamProvider+uint64(index))), slots: newSlots(t.Slots), seen: map[int]time.Duration{}}
}

// cached reports whether the provider answered conversation conv (-1:
// none) within CacheTTL before t.
func (p *provider) cached(conv int, t time.Duration) bool {
	at, ok := p.seen[conv]
	return conv >= 0 && ok && at <= t && t-at < CacheTTL
}

// saw notes that the provider answered conversation conv (-1: none) at t.
func (p *provider) saw(conv int, t time.Duration) {
	if conv >= 0 {
		p.seen[conv] = t
	}
}

// attempt is what an attempt brings to its provider.
type attempt struct {
	b            Behaviour
	firstByte, t time.Duration // the first-byte timeout; the start
	now          time.Time     // t on the clock
	conv         int           // its conversation; -1: none
}

// answer draws how attempt a ends and how long it takes, the first-byte
// timeout (a unary answer's whole time) cutting anything longer; a
// success's time is its wait for a slot and then its service, and h is
// the slot it holds.
func (p *provider) answer(a attempt) (res router.Result, took time.Duration, h hold) {
	b, firstByte, t, now := a.b, a.firstByte, a.t, a.now
	h = noHold
	switch {
	case b.Status != 0:
		return router.Result{Status: b.Status, ErrorType: fault.OfAnswer(b.Status, nil), Outcome: telemetry.OutcomeFailover}, QuickFault, h
	case b.Limit > 0 && !p.room(b.Limit, t):
		return router.Result{Status: 429, ErrorType: "429", Outcome: telemetry.OutcomeFailover, RetryAt: now.Add(b.RetryAfter)}, QuickFault, h
	}
	// Like a real provider, a rate-limited one says on each success what
	// remains of its limit and when the limit resets.
	var left router.Result
	if b.Limit > 0 {
		p.taken++
		left.Remaining, left.HasRemaining = int64(b.Limit-p.taken), true
		left.RemainingReset = now.Add(p.window + time.Second - t)
		if left.Remaining == 0 {
			left.RetryAt = left.RemainingReset
		}
	}
	u, n1, n2 := p.rng.Float64(), p.rng.Float64(), p.rng.Float64()
	timeout := router.Result{ErrorType: fault.ErrorTimeout, Outcome: telemetry.OutcomeFailover}
	switch {
	case b.Hang:
		return timeout, firstByte, h
	case u < b.FaultRate:
		if b.FaultAfter >= firstByte {
			return timeout, firstByte, h
		}
		return router.Result{Status: 503, ErrorType: strconv.Itoa(503), Outcome: telemetry.OutcomeFailover}, b.FaultAfter, h
	}
	d := lognormal(b.Median, b.sigma(), standardNormal(n1, n2))
	if b.SpikeRate > 0 && p.rng.Float64() < b.SpikeRate {
		d = time.Duration(float64(d) * b.SpikeFactor)
	}
	if left.CacheHit = p.cached(a.conv, t); left.CacheHit {
		d = time.Duration(math.Round(float64(d) * CacheSpeedup))
	}
	slot, wait := p.slots.wait(t)
	if d += wait; d >= firstByte {
		if wait < firstByte { // served until the timeout cuts it
			h = p.slots.take(slot, t+firstByte)
		}
		return timeout, firstByte, h
	}
	h = p.slots.take(slot, t+d)
	left.Status, left.Outcome, left.TTFB, left.HasTTFB = 200, telemetry.OutcomeSuccess, d, true
	return left, d, h
}

// lognormal is median·e^(sigma·z): a draw whose median is median.
func lognormal(median time.Duration, sigma, z float64) time.Duration {
	return time.Duration(math.Round(float64(median) * math.Exp(sigma*z)))
}

// sigma is the spread of b's latency.
func (b Behaviour) sigma() float64 {
	if b.Spread > 0 {
		return b.Spread
	}
	return Sigma
}

// standardNormal turns two uniform draws in [0, 1) into a standard normal
// one (Box–Muller), using 1−u1 so that u1 = 0 stays finite.
func standardNormal(u1, u2 float64) float64 {
	return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
}
