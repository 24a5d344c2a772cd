package router

import (
	"math"

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

// loadFactor is how much slower c answers a request now than when idle,
// by its load curve and its configured concurrency cap.
func loadFactor(c *Candidate, st *stats.Target) float64 {
	k, cap := st.PeerInflight+1, 0
	if u := c.upstream; u != nil { // nil: a candidate built bare, in a test
		k += int(u.inflight.Load())
		cap = u.maxConcurrency
	}
	f := st.LoadFactor(k)
	if cap > 0 {
		f = max(f, math.Ceil(float64(k)/float64(cap)))
	}
	return f
}
