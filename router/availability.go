package router

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Besides its circuit breaker (breaker.go), a provider can be away for two
// reasons the provider itself states:
//
//   - cooled: it refused for its rate limits and said when to come back
//     (Retry-After, retry-after-ms, a reset header), or a success said a
//     limit has nothing left. It is skipped (rate_limited) until then.
//   - disabled: it refused the gateway's credential (401, 403) or its
//     account cannot pay (402, insufficient_quota, a credit-balance 400).
//     Retrying would fail the same way for every request, so it is skipped
//     (disabled), ordered after every other target, and probed by one real
//     request at a growing interval until a probe succeeds or a reload
//     starts afresh.

// Probe intervals of a disabled provider: the first after disableProbeFirst,
// each next one twice as long, at most disableProbeMax.
const (
	disableProbeFirst = 30 * time.Second
	disableProbeMax   = 10 * time.Minute
)

// cooldown is when a provider's rate limits let it be tried again.
type cooldown struct {
	max   time.Duration // immutable: rate_limit.max_cooldown
	until atomic.Int64  // unix ns; 0: never cooled
}

// extend cools the provider until to, capped at now+max; a later time
// extends the cooldown, an earlier one never shortens it. It reports
// whether the cooldown moved.
func (c *cooldown) extend(now, to time.Time) bool {
	if !to.After(now) {
		return false
	}
	if cp := now.Add(c.max); to.After(cp) {
		to = cp
	}
	t := to.UnixNano()
	for {
		cur := c.until.Load()
		if cur >= t {
			return false
		}
		if c.until.CompareAndSwap(cur, t) {
			return true
		}
	}
}

// cooled reports whether the provider is cooled at now.
func (c *cooldown) cooled(now time.Time) bool { return now.UnixNano() < c.until.Load() }

// Until is when the cooldown ends (zero: not cooled as of now).
func (c *cooldown) Until(now time.Time) time.Time {
	u := c.until.Load()
	if u <= now.UnixNano() {
		return time.Time{}
	}
	return time.Unix(0, u)
}

// allowance is what the provider last said remains of its request limit,
// and how many attempts the gateway has sent it since the attempt that
// said so: once they match, the provider is skipped (rate_limited) until
// the limit resets or a later answer says more remains, so the gateway
// stops before it is refused. Attempts are numbered as they are admitted;
// an answer counts from its own attempt's number, so the attempts already
// in flight when it was sent are counted against what it said.
type allowance struct {
	mu        sync.Mutex // guards the fields below
	admitted  int64      // attempts admitted, ever: the next one's number
	known     bool       // remaining holds, until until
	remaining int64      // what the answer of attempt number from said remains
	from      int64
	until     time.Time
}

// take numbers an attempt admitted at now, unless what remains is spent;
// ok false then.
func (a *allowance) take(now time.Time) (n int64, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known && !now.Before(a.until) {
		a.known = false
	}
	if a.known && a.admitted-a.from >= a.remaining {
		return 0, false
	}
	n = a.admitted
	a.admitted++
	return n, true
}

// set takes what the answer of attempt n said remains, until reset.
// Within the window in force, the answer that leaves less for now wins:
// attempts reach the provider in an order of their own, so an attempt
// sent later may have been counted earlier and say one more remains than
// the provider has; an answer from a later window replaces it.
func (a *allowance) set(n, remaining int64, reset time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known && (reset.Before(a.until.Add(-allowanceSlack)) || // a window before the one in force
		!reset.After(a.until.Add(allowanceSlack)) && remaining-(a.admitted-(n+1)) >= a.remaining-(a.admitted-a.from)) {
		return
	}
	// What the provider had counted when it answered includes attempt n
	// itself: the ones after it are the gateway's to count.
	a.known, a.remaining, a.from, a.until = true, remaining, n+1, reset
}

// allowanceSlack is how much later than the window in force an answer's
// reset may fall and still be the same window: a reset given as a
// duration is read from when its answer came, so answers of one window
// disagree by their latencies.
const allowanceSlack = 250 * time.Millisecond

// disabler is a provider's disabled state.
type disabler struct {
	on       atomic.Bool                  // the fast path: false for every healthy provider
	onChange func(on bool, reason string) // immutable; called outside mu; nil: none

	mu       sync.Mutex    // guards the fields below
	reason   string        // "auth" or "quota" while on
	interval time.Duration // before the next probe after this one
	next     time.Time     // when the next probe may go
	probing  bool          // a probe is out
}

// disable disables the provider for reason at now, after an attempt
// refused it (probe: the attempt was its probe). A failed probe makes the
// next wait twice as long; a refusal of an attempt that was already in
// flight when it was disabled (the concurrent requests of a cold start
// each try it once) changes nothing: its probe stays when it was due.
func (d *disabler) disable(now time.Time, reason string, probe bool) {
	d.mu.Lock()
	changed := !d.on.Load()
	switch {
	case changed:
		d.interval = disableProbeFirst
	case probe:
		d.interval = min(2*d.interval, disableProbeMax)
	default:
		d.mu.Unlock()
		return
	}
	d.reason, d.next, d.probing = reason, now.Add(d.interval), false
	d.on.Store(true)
	d.mu.Unlock()
	if changed && d.onChange != nil {
		d.onChange(true, reason)
	}
}

// enable ends the disabled state (a probe succeeded).
func (d *disabler) enable() {
	if !d.on.Load() {
		return
	}
	d.mu.Lock()
	changed := d.on.Load()
	reason := d.reason
	d.on.Store(false)
	d.reason, d.probing = "", false
	d.mu.Unlock()
	if changed && d.onChange != nil {
		d.onChange(false, reason)
	}
}

// reset enables the provider for a reload: the operator may have fixed
// what disabled it.
func (d *disabler) reset() {
	if !d.on.Load() {
		return
	}
	d.mu.Lock()
	d.on.Store(false)
	d.reason, d.probing = "", false
	d.mu.Unlock()
}

// claimProbe takes the probe if one is due at now: true for exactly one
// caller per interval. The probe must be resolved (probeDone, disable or
// enable).
func (d *disabler) claimProbe(now time.Time) bool {
	if !d.on.Load() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.on.Load() || d.probing || now.Before(d.next) {
		return false
	}
	d.probing = true
	return true
}

// probeDone ends a probe that taught nothing (it never went, or the
// client left): the next request may probe.
func (d *disabler) probeDone() {
	d.mu.Lock()
	d.probing = false
	d.mu.Unlock()
}

// state is the reason the provider is disabled ("" when it is not) and
// when its next probe may go.
func (d *disabler) state() (reason string, next time.Time) {
	if !d.on.Load() {
		return "", time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reason, d.next
}

// awayFor is why an attempt at the provider would be refused now: it is
// disabled, cooled by a rate limit, or its circuit is open (or half-open
// with its probe out); "" when it would be admitted.
func (u *upstream) awayFor(now time.Time) string {
	switch {
	case u.off.on.Load():
		return SkipDisabled
	case u.cool.cooled(now):
		return SkipRateLimited
	case u.breaker.blocked():
		return SkipCircuitOpen
	}
	return ""
}

// admit asks every guard of the provider whether an attempt may go now: a
// disabled provider takes only its probe (probe true), a cooled one none,
// then its breaker decides. A refusal is the skip reason.
func (u *upstream) admit(now time.Time, probe bool) (admission, string) {
	if !probe {
		if u.off.on.Load() {
			return admission{}, SkipDisabled
		}
		if u.cool.cooled(now) {
			return admission{}, SkipRateLimited
		}
	}
	adm, ok := u.breaker.admit()
	if !ok {
		return admission{}, SkipCircuitOpen
	}
	n, ok := u.allow.take(now)
	if !ok && !probe {
		adm.resolve(resultNeutral)
		return admission{}, SkipRateLimited
	}
	adm.seq = n
	return adm, ""
}

// availableAt is when the provider will take an attempt again as it stands
// now: the end of its cooldown, of its circuit's cooldown, or its disabled
// probe's time, whichever is latest (now when it would take one now).
func (u *upstream) availableAt(now time.Time) time.Time {
	at := now
	if t := u.cool.Until(now); t.After(at) {
		at = t
	}
	if t := u.breaker.openUntil(); t.After(at) {
		at = t
	}
	if _, next := u.off.state(); next.After(at) {
		at = next
	}
	return at
}

// settle tells the provider's own state how an attempt ended: a credential
// or quota failure disables it, a probe's success enables it again, a
// rate-limit signal cools it, and what remains of its request limit paces
// the next attempts. probe says the attempt was its disabled probe (or a
// forced try of a disabled provider); seq is its number among the
// provider's admitted attempts.
func (u *upstream) settle(res Result, probe bool, seq int64) {
	now := u.now()
	switch {
	case fault.Disabling(res.ErrorType):
		u.off.disable(now, res.ErrorType, probe)
	case !probe:
	case res.Outcome == telemetry.OutcomeSuccess:
		u.off.enable()
	default:
		u.off.probeDone()
	}
	if !res.RetryAt.IsZero() {
		u.cool.extend(now, res.RetryAt)
	}
	if res.HasRemaining {
		u.allow.set(seq, res.Remaining, res.RemainingReset)
	}
}
