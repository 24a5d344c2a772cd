package router

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Besides its provider's circuit breaker (breaker.go), a target can be
// away for two reasons the provider itself states:
//
//   - cooled: it refused for its rate limits and said when to come back
//     (Retry-After, retry-after-ms, a reset header), or a success said a
//     limit has nothing left. Providers limit each model apart, and every
//     header read here describes the limit of the model it answered for,
//     so the cooldown is the (provider, upstream model)'s: the provider's
//     other models keep serving. It is skipped (rate_limited) until then.
//   - disabled: the provider refused the gateway's credential (401, a 403
//     coded so) or its account cannot pay (402, insufficient_quota, a
//     credit-balance 400): the provider is disabled, every model of it;
//     or it refused the key this upstream model (model_access): that
//     (provider, upstream model) only. Retrying would fail the same way
//     for every request, so it is skipped (disabled), ordered after every
//     other target, and probed by one real request at a growing interval
//     until a probe succeeds or a reload starts afresh.

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

// awayFor is why an attempt at the candidate would be refused now: its
// provider or its (provider, upstream model) is disabled, its model is
// cooled by a rate limit, or its provider's circuit is open (or half-open
// with its probe out); "" when it would be admitted.
func (c *Candidate) awayFor(now time.Time) string {
	u, g := c.upstream, c.guard
	switch {
	case u.off.on.Load() || g.off.on.Load():
		return SkipDisabled
	case g.cool.cooled(now):
		return SkipRateLimited
	case u.breaker.blocked():
		return SkipCircuitOpen
	}
	return ""
}

// admit asks every guard of the candidate whether an attempt may go now: a
// disabled provider or model takes only its probe (probe true), a cooled
// model none, then the provider's breaker decides. A refusal is the skip
// reason.
func (c *Candidate) admit(now time.Time, probe bool) (admission, string) {
	u, g := c.upstream, c.guard
	if !probe {
		if u.off.on.Load() || g.off.on.Load() {
			return admission{}, SkipDisabled
		}
		if g.cool.cooled(now) {
			return admission{}, SkipRateLimited
		}
	}
	adm, ok := u.breaker.admit()
	if !ok {
		return admission{}, SkipCircuitOpen
	}
	n, ok := g.allow.take(now)
	if !ok && !probe {
		adm.resolve(resultNeutral)
		return admission{}, SkipRateLimited
	}
	adm.seq = n
	return adm, ""
}

// availableAt is when the candidate will take an attempt again as it
// stands now: the end of its model's cooldown, of its provider's circuit's
// cooldown, or the disabled probe's time, whichever is latest (now when it
// would take one now).
func (c *Candidate) availableAt(now time.Time) time.Time {
	at := now
	for _, t := range [...]time.Time{c.guard.cool.Until(now), c.upstream.breaker.openUntil()} {
		if t.After(at) {
			at = t
		}
	}
	if _, next := c.disabledState(); next.After(at) {
		at = next
	}
	return at
}

// settle tells the candidate's state how an attempt ended: a key-level
// credential or quota failure disables its provider, a model-access
// refusal only its (provider, upstream model); a probe's success enables
// both again; a rate-limit signal cools the model it came from, and what
// remains of its request limit paces the model's next attempts. probe
// says the attempt was a disabled probe (or a forced try of a disabled
// target); seq is its number among the model's admitted attempts.
func (c *Candidate) settle(res Result, probe bool, seq int64) {
	u, g := c.upstream, c.guard
	now := u.now()
	switch {
	case fault.ModelScoped(res.ErrorType):
		g.off.disable(now, res.ErrorType, probe)
	case fault.Disabling(res.ErrorType):
		u.off.disable(now, res.ErrorType, probe)
	case !probe:
	case res.Outcome == telemetry.OutcomeSuccess:
		u.off.enable()
		g.off.enable()
	default:
		c.disabledProbeDone()
	}
	if !res.RetryAt.IsZero() {
		g.cool.extend(now, res.RetryAt)
	}
	if res.HasRemaining {
		g.allow.set(seq, res.Remaining, res.RemainingReset)
	}
}

// claimDisabledProbe takes the disabled candidate's probe if one is due at now:
// its provider's when the provider is disabled, else its model's.
func (c *Candidate) claimDisabledProbe(now time.Time) bool {
	if c.upstream.off.on.Load() {
		return c.upstream.off.claimProbe(now)
	}
	return c.guard.off.claimProbe(now)
}

// disabledProbeDone ends a probe that taught nothing, whichever state claimed it
// (the provider may have been disabled since its model's probe went).
func (c *Candidate) disabledProbeDone() {
	c.upstream.off.probeDone()
	c.guard.off.probeDone()
}

// disabled reports whether the candidate's provider or model is disabled.
func (c *Candidate) disabled() bool { return c.upstream.off.on.Load() || c.guard.off.on.Load() }

// disabledState is why the candidate is disabled ("" when it is not; its
// provider's reason first) and when its next probe may go.
func (c *Candidate) disabledState() (reason string, next time.Time) {
	if reason, next = c.upstream.off.state(); reason != "" {
		return reason, next
	}
	return c.guard.off.state()
}

// cooledUntil is when the candidate's model's rate limits let it be tried
// again (zero: not cooled as of now).
func (c *Candidate) cooledUntil(now time.Time) time.Time { return c.guard.cool.Until(now) }
