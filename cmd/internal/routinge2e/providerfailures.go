package routinge2e

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// Providers as they really fail: (g) a revoked key, (h) a rate limit, (i) an
// outage of every target. Their settings are the routing study's (a test
// holds them equal); the figures that judge them are read from what the
// clients saw and what the providers answered.

// Settings of (g), (h) and (i).
const (
	// RefusalDelay is how long a revoked key's 401, a rate limit's 429 and
	// an outage's 503 take: a provider that refuses at once.
	RefusalDelay = QuickFaultDelay
	// RateLimit is how many requests a second fast takes in (h), counted
	// afresh each whole second; beyond, it answers 429 with RetryAfter.
	RateLimit  = 40
	RetryAfter = 2 * time.Second
	// ProbeEvery is the gateway's first probe interval of a disabled target:
	// (g) allows one attempt on the revoked key per interval.
	ProbeEvery = 30 * time.Second
	// OutageFrom and OutageLength place the outage of (i).
	OutageFrom   = 4 * time.Second
	OutageLength = 3 * time.Second
)

// OutageBreaker is the circuit breaker of (i): the product's default, so
// that only the gateway's blackout rule (every target away: try the one
// most likely to answer) stands between the outage's end and the next
// answer; the circuits would stay open for their 30 s cooldown.
var OutageBreaker = Breaker{Failures: 5, Cooldown: 30 * time.Second}

// RevokedKey is scenario (g): fast's key is revoked, every attempt on it
// gets 401 after RefusalDelay, throughout.
func RevokedKey(d time.Duration) Scenario {
	ts := targets()
	ts[0].Errors = sim.ErrorRate{Rate: 1, Status: http.StatusUnauthorized, After: RefusalDelay}
	return Scenario{
		Name: "g", Title: "fast's key is revoked: every attempt on it gets 401", Duration: d, Targets: ts, Revoked: Fast,
	}
}

// RateLimited is scenario (h): fast takes RateLimit requests a second
// (fixed windows: each whole second of the timeline); beyond, it answers
// 429 with Retry-After, after RefusalDelay. Like a real provider, every
// answer says what remains of the limit and when it resets.
func RateLimited(d time.Duration) Scenario {
	ts := targets()
	ts[0].RateLimit = &sim.RateLimit{Requests: RateLimit, Window: time.Second, RetryAfter: RetryAfter, After: RefusalDelay}
	return Scenario{
		Name: "h", Duration: d, Targets: ts,
		Title: fmt.Sprintf("fast takes %d requests a second; beyond, 429 with Retry-After: %g", RateLimit, RetryAfter.Seconds()),
	}
}

// Outage is scenario (i): every target answers 503 after RefusalDelay in
// [from, to), with the product's default circuit breaker (OutageBreaker).
func Outage(from, to, d time.Duration) Scenario {
	ts := targets()
	down, up := sim.ErrorRate{Rate: 1, Status: http.StatusServiceUnavailable, After: RefusalDelay}, sim.ErrorRate{}
	for i := range ts {
		ts[i].Phases = []sim.Phase{{After: from, Errors: &down}, {After: to, Errors: &up}}
	}
	return Scenario{
		Name: "i", Duration: d, Targets: ts, Breaker: OutageBreaker, Outage: Window{from, to},
		Title: fmt.Sprintf("every target answers 503 from %v to %v, breaker %d failures / %v",
			from, to, OutageBreaker.Failures, OutageBreaker.Cooldown),
	}
}

// Revocation is what a revoked key cost, as the clients and the providers
// saw it.
type Revocation struct {
	// Found is when the gateway had certainly learned that the key is
	// revoked: the end of the first request that reached the target (the
	// 401 ends that attempt, and disables the target, before the request
	// fails over and is answered). ok is false when no request reached it.
	Found time.Duration
	ok    bool
	// Cold counts the attempts on the target by requests sent before
	// Found: ordered before the gateway could know (the concurrent
	// requests of a cold start).
	Cold int
	// Later are the start times of the requests sent from Found on that
	// reached the target (once each, or more in Attempts): its probes.
	Later    []time.Duration
	Attempts int
}

// Revoked reads what the revoked key target cost from outs.
func Revoked(outs []Outcome, target string) Revocation {
	var r Revocation
	for _, o := range outs {
		if o.HopsTo(target) > 0 && (!r.ok || o.End() < r.Found) {
			r.Found, r.ok = o.End(), true
		}
	}
	for _, o := range outs {
		n := o.HopsTo(target)
		switch {
		case n == 0:
		case o.Start < r.Found:
			r.Cold += n
		default:
			r.Later = append(r.Later, o.Start)
			r.Attempts += n
		}
	}
	slices.Sort(r.Later)
	return r
}

// Reached reports whether any request reached the revoked target.
func (r Revocation) Reached() bool { return r.ok }

// MostPerInterval is the most attempts on the target by requests sent in
// one interval of length every, the intervals counted from Found.
func (r Revocation) MostPerInterval(outs []Outcome, target string, every time.Duration) int {
	per := map[int64]int{}
	most := 0
	for _, o := range outs {
		if n := o.HopsTo(target); n > 0 && o.Start >= r.Found {
			k := int64((o.Start - r.Found) / every)
			per[k] += n
			most = max(most, per[k])
		}
	}
	return most
}

// Recovery is how an outage of every target ended for the clients.
type Recovery struct {
	// After is how long after the outage's end the first request was
	// served: the end of the first served request that ended after it. ok
	// is false when none was.
	After time.Duration
	ok    bool
	// LateFailures counts the requests sent from the outage's end on that
	// were not served. Every provider answers them, so each is the
	// gateway's own refusal. (A request sent during the outage can end
	// after the first success on a busy machine: its failure is the
	// outage's, and is not counted.)
	LateFailures int
}

// Recovered reports whether a request was served after the outage.
func (r Recovery) Recovered() bool { return r.ok }

// RecoveryFrom reads how the outage ended from outs.
func RecoveryFrom(outs []Outcome, outage Window) Recovery {
	var r Recovery
	for _, o := range outs {
		if o.Served() && o.End() >= outage.To && (!r.ok || o.End()-outage.To < r.After) {
			r.After, r.ok = o.End()-outage.To, true
		}
		if !o.Served() && o.Start >= outage.To {
			r.LateFailures++
		}
	}
	return r
}
