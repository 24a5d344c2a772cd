package collector

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// What a series keeps beside its samples and outcomes: the censored
// observations (attempts a hedge beat), the load curve (time to first byte
// by the in-flight count a sample met) and the peers' in-flight counts.

// loadLevel is one level of the load curve: an exponentially weighted mean
// of the samples' time to first byte (seconds) and when it last moved.
type loadLevel struct {
	mean float64
	at   int64 // unix ns; 0: no sample
}

// loadAlpha is the weight of a new sample in its load level's mean, and
// loadFresh how long a level counts after its last sample: the curve says
// how the target fares under load now, not how it did a minute ago (a
// target that was slow for a while has its slow levels forgotten soon
// after it recovers).
const (
	loadAlpha = 0.2
	loadFresh = 5 * time.Second
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
// sample started, all instances') towards ttfb. Called with mu held.
func (s *series) addLoad(k int, ttfb time.Duration, at int64) {
	k = min(max(k, 1), stats.LoadLevels)
	l := &s.load[k-1]
	v := ttfb.Seconds()
	if l.at == 0 {
		l.mean = v
	} else {
		l.mean += loadAlpha * (v - l.mean)
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
