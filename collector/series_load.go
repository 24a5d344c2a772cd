package collector

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// What a series keeps beside its samples and outcomes: the censored
// observations (attempts a hedge beat) and the value they count at among
// the samples, the load curve (time to first byte
// by the in-flight count a sample met) and the peers' in-flight counts.

// loadLevel is one level of the load curve: exponentially weighted means
// of its samples' time to first byte (abs, seconds) and of their relative
// time (rel), and when it last moved. A sample's relative time is its time
// over the abs of a level below measured at about the same time (within
// loadSkew), chained to that level's own rel; with none, 1.
//
// Relative, and only against what was measured alongside, because a
// target that got slower or faster at every load must not look queued or
// idle for it. During a slowdown a target is sent little, at low levels;
// read as absolute times against levels measured before it, those samples
// would say "10x slower under load", and after the recovery the target
// would look queued by the whole slowdown until they expire.
type loadLevel struct {
	abs, rel float64
	at       int64 // unix ns; 0: no sample
}

// loadAlpha is the weight of a new sample in its load level's mean, and
// loadFresh how long a level counts after its last sample: the curve says
// how the target fares under load now, not how it did a minute ago (a
// target that was slow for a while has its slow levels forgotten soon
// after it recovers). loadSkew is how long before a sample a lower level
// must have been measured to stand as its reference.
const (
	loadAlpha = 0.2
	loadFresh = 5 * time.Second
	loadSkew  = time.Second
)

// peerLoad is what a peer's latest span said of its attempts in flight.
type peerLoad struct {
	n  int
	at int64 // unix ns
}

// Bounds of the peers' in-flight counts: a report counts for peerLoadFor,
// and at most maxPeers instances are kept per key.
const (
	peerLoadFor     = 2 * time.Second
	maxPeers        = 64
	maxPeerInflight = 4096 // one peer's count is read as at most this
)

// censoredMinSamples is how many live samples (censored ones included) a
// target needs before a censored observation counts at its expected time
// rather than at its lower bound: the spread is read from the p50 and p95,
// as the hedge's quantiles are.
const censoredMinSamples = 10

// censoredValue is the time to first byte a censored observation counts at
// among a target's samples (sorted, the answers, and censored, the values
// of the censored observations already counted, both ascending): the
// expected time of an attempt that had waited waited without a first byte,
// E[T | T > waited] of the log-normal through the p50 and p95 of both
// together, at least waited. Both, because the answers alone are what the
// races left: a target's slow attempts are the ones hedges cancel, so its
// answers read narrower and faster than it is, and a fit of them alone
// would value its losers too low. With fewer than censoredMinSamples of
// them, or no spread between p50 and p95,
// there is no fit: waited itself, the lower bound, when it is at least the
// p50 (then it lies on the same side of the median as the unknown time
// does, so the p50 is what it would have been with the true time), and
// nothing below it (ok false: the observation says too little). With no
// answer at all, nothing.
//
// The expectation, not the bound: a loser's bound is the time its race
// lasted, which is often short for the hedge that started late, so counted
// at its bound a hedge target's losses would pull its mean down while its
// wins (the races it was fast in) already do; counted at E[T | T > waited]
// they give back the slow side the race cut off.
func censoredValue(sorted, censored []time.Duration, waited time.Duration) (time.Duration, bool) {
	if len(sorted) == 0 {
		return 0, false
	}
	n := len(sorted) + len(censored)
	p50, p95 := unionAt(sorted, censored, medianIndex(n)), unionAt(sorted, censored, quantileIndex(n, 0.95))
	if n < censoredMinSamples || p95 <= p50 || p50 <= 0 || waited <= 0 {
		return waited, waited >= p50
	}
	const z95 = 1.6448536269514722 // the standard normal's 0.95 quantile
	mu, sigma := math.Log(float64(p50)), math.Log(float64(p95)/float64(p50))/z95
	z := (math.Log(float64(waited)) - mu) / sigma
	tail := normalTail(z)
	if tail < 1e-12 {
		return waited, true // beyond anything the fit gives mass to: a hang, not bad luck
	}
	// E[T | T > x] = e^(mu + sigma²/2) · P(Z > z - sigma) / P(Z > z).
	e := math.Exp(mu+sigma*sigma/2) * normalTail(z-sigma) / tail
	if math.IsNaN(e) || e > float64(math.MaxInt64/2) {
		return waited, true
	}
	return max(time.Duration(e), waited), true
}

// unionAt is element i of the union of the ascending a and b, ascending
// (i < len(a)+len(b)).
func unionAt(a, b []time.Duration, i int) time.Duration {
	for {
		switch {
		case len(a) == 0:
			return b[i]
		case len(b) == 0:
			return a[i]
		case i == 0:
			return min(a[0], b[0])
		}
		// Drop the smaller half-steps of either: the k smallest of one
		// that are below the other's k-th cannot hold element i beyond them.
		k := max(1, min(i/2, len(a), len(b)))
		if a[k-1] <= b[k-1] {
			a = a[k:]
		} else {
			b = b[k:]
		}
		i -= k
	}
}

// normalTail is P(Z > z) for a standard normal Z.
func normalTail(z float64) float64 { return math.Erfc(z/math.Sqrt2) / 2 }

// insertLate adds a censored observation x (its cost: how long it had
// waited), evicting the oldest if the window is full (or dropping x, if it
// is older still). Called with mu held.
func (s *series) insertLate(x outcome) {
	evicted, didEvict, ok := s.lates.makeRoom(x)
	if didEvict {
		s.lateLeft(evicted)
	}
	if !ok {
		return
	}
	s.lates.insertByTime(x)
	s.lateSums.add(1, x.takenAt)
	s.lateCost.add(x.cost)
}

// lateLeft takes x, just evicted or expired from lates, out of their sums.
// Called with mu held.
func (s *series) lateLeft(x outcome) {
	s.lateSums.remove(1, x.takenAt)
	s.lateCost.sub(x.cost)
}

// loaded reports whether the series holds a load curve level or a peer's
// in-flight count. Called with mu held.
func (s *series) loaded() bool {
	for _, l := range s.load {
		if l.at != 0 {
			return true
		}
	}
	return len(s.peers) > 0
}

// addLoad moves the load curve's level k (attempts in flight when the
// sample started, all instances') towards ttfb, and its relative time
// towards ttfb over the lowest level below k measured within loadSkew
// before it (1 with none). A level that has gone stale starts afresh.
// Called with mu held; now is the series' clock.
func (s *series) addLoad(k int, ttfb time.Duration, at, now int64) {
	k = min(max(k, 1), stats.LoadLevels)
	v, rel := ttfb.Seconds(), 1.0
	for i := range k - 1 { // the base: the lowest level below k measured lately
		if b := s.load[i]; b.at != 0 && b.at+int64(loadSkew) >= at && b.abs > 0 {
			rel = v / b.abs * b.rel
			break
		}
	}
	l := &s.load[k-1]
	if l.at == 0 || l.at+int64(loadFresh) <= now {
		l.abs, l.rel = v, rel
	} else {
		l.abs += loadAlpha * (v - l.abs)
		l.rel += loadAlpha * (rel - l.rel)
	}
	l.at = max(l.at, at)
}

// setPeer records a peer's in-flight count at at, keeping at most maxPeers
// (the stalest goes). Called with mu held.
func (s *series) setPeer(instance string, n int, at int64) {
	if s.peers == nil {
		s.peers = map[string]peerLoad{}
	}
	if p, ok := s.peers[instance]; ok && p.at > at {
		return // a newer report is in
	}
	if _, ok := s.peers[instance]; !ok && len(s.peers) >= maxPeers {
		oldest, at0 := "", int64(math.MaxInt64)
		for id, p := range s.peers {
			if p.at < at0 {
				oldest, at0 = id, p.at
			}
		}
		delete(s.peers, oldest)
	}
	s.peers[instance] = peerLoad{n: min(max(n, 0), maxPeerInflight), at: at}
}

// expireLoad forgets the load curve's levels and the peers' reports that
// are no longer fresh by now, and reports whether there were any: the
// published stats must change then. Called with mu held.
func (s *series) expireLoad(now int64) bool {
	dropped := false
	for i := range s.load {
		if l := &s.load[i]; l.at != 0 && l.at+int64(loadFresh) <= now {
			*l = loadLevel{}
			dropped = true
		}
	}
	for id, p := range s.peers {
		if p.at+int64(peerLoadFor) <= now {
			delete(s.peers, id)
			dropped = true
		}
	}
	return dropped
}

// peersNow is the peers' in-flight count as of now. Called with mu held.
func (s *series) peersNow(now int64) int {
	n := 0
	for _, p := range s.peers {
		if p.at+int64(peerLoadFor) > now {
			n += p.n
		}
	}
	return n
}
