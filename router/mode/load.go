package mode

import (
	"math"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// Load: a provider that queues answers later the more requests it holds,
// so every latency mode scales its estimate of a target (p50, EWMA, the
// drawn expected time) by the load a new request would meet there:
//
//	estimate × max(loadCurve(k), ⌈k / max_concurrency⌉)
//
// where k is the attempts in flight at the target (this gateway's own,
// exactly, plus what peers' spans last said of theirs) plus the new one.
// loadCurve is the target's own measured relation of time to first byte
// to in-flight count (stats.Target.LoadFactor: the mean at k over the mean
// when idle, 1 until a queue shows); ⌈k/max_concurrency⌉ is how many
// rounds of max_concurrency the request waits behind, when the provider
// has a configured cap. A target that is fast when idle but holds a queue
// ranks after one a little slower with room, so load spreads before the
// fast one is swamped, and moves back as the queue drains: no new config.

// LoadFactor is how much slower c answers a request now than when idle,
// by its load curve and its configured concurrency cap.
func LoadFactor(c *Candidate, st *stats.Target) float64 {
	k, cap := st.PeerInflight+1, 0
	if u := c.Upstream; u != nil { // nil: a candidate built bare, in a test
		k += int(u.Inflight())
		cap = u.MaxConcurrency
	}
	f := st.LoadFactor(k)
	if cap > 0 {
		f = max(f, math.Ceil(float64(k)/float64(cap)))
	}
	return f
}

// Near ties under load. Replicas that share their samples through a
// collector rank on the same figures, so when the leader's queue grows
// they would all move to the runner-up at once, and back: waves of load
// that no single replica sees. So when the leader is building a queue (its
// load factor is above 1) and the runner-up's estimate is within
// nearTieLoaded of the leader's, either leads, at random: replicas spread
// their picks over near-tied targets rather than herd, and a gateway alone
// spreads its own load too. Idle, nothing changes: the faster target
// leads, however close the other.
//
// In a fleet that is not enough: "loaded" flips with every request in
// flight, so a replica whose leader drains to one request sends it every
// first pick again, its queue grows, the coin is back, and each replica's
// share of first picks swung between the two fast targets 3 to 18 times a
// minute in the study's (fleet) (goal: at most 6). So there is hysteresis
// where peers share the queue: once the leader's load factor reached
// nearTieQueue with peers' requests in flight there (a queue the fleet
// builds, not one request's noise), the coin stays in play for
// nearTieHold, loaded or not, over the wider nearTieMargin (within which a
// shared queue's estimate moves as requests come and go). With it the
// (fleet) replicas' leaders changed 0 to 6 times a minute on seeds 1-3,
// the fleet's mean within 1.02x the best static split's. A gateway alone
// (no peer in flight) keeps the rule above exactly, so (b)'s slowdown and
// recovery, (c) and (d) move the leader as fast as before.
const (
	nearTieLoaded = 1.2
	nearTieMargin = 1.7
	nearTieQueue  = 1.3
	nearTieHold   = 3 * time.Second
)

// spreadNearTie swaps out[0] and out[1] at random when the leader is
// loaded and they are near-tied; sorted holds their estimates, ascending
// (out's order).
func spreadNearTie(out []*Candidate, sorted []float64, src StatsSource, now time.Time, r Rand) {
	if len(out) < 2 || len(sorted) < 2 || !(sorted[1] <= nearTieMargin*sorted[0]) || sorted[0] <= 0 {
		return
	}
	st := src.StatsAt(out[0].Target, out[0].Model, now)
	f := LoadFactor(out[0], &st)
	if f >= nearTieQueue && st.PeerInflight > 0 {
		out[0].lastLoaded.Store(now.UnixNano()) // a queue the fleet shares
	}
	at := out[0].lastLoaded.Load()
	held := at != 0 && now.UnixNano()-at < int64(nearTieHold)
	if !held && !(f > 1 && sorted[1] <= nearTieLoaded*sorted[0]) {
		return
	}
	if r.IntN(2) == 0 {
		out[0], out[1] = out[1], out[0]
	}
}
