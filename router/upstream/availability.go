package upstream

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
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

// Why a candidate is refused an attempt (X-Firstbyte-Skipped,
// firstbyte_skips_total{reason}).
const (
	SkipCircuitOpen = "circuit_open"
	// SkipRateLimited: the provider's rate limits keep it away until the
	// time it gave (Retry-After or a reset header).
	SkipRateLimited = "rate_limited"
	// SkipDisabled: the provider refused the gateway's credential, or its
	// account cannot pay; only its probe goes until one succeeds.
	SkipDisabled = "disabled"
)

// Provider is the provider m belongs to.
func (m *Model) Provider() *Provider { return m.p }

// AwayFor is why an attempt at the model would be refused now: its
// provider or the (provider, upstream model) is disabled, the model is
// cooled by a rate limit, or its provider's circuit is open (or half-open
// with its probe out); "" when it would be admitted.
func (m *Model) AwayFor(now time.Time) string {
	switch {
	case m.p.off.on.Load() || m.off.on.Load():
		return SkipDisabled
	case m.cool.cooled(now):
		return SkipRateLimited
	case m.p.Breaker.Blocked():
		return SkipCircuitOpen
	}
	return ""
}

// Admit asks every guard of the model whether an attempt may go now: a
// disabled provider or model takes only its probe (probe true), a cooled
// model none, then the provider's breaker decides. A refusal is the skip
// reason.
func (m *Model) Admit(now time.Time, probe bool) (Admission, string) {
	if !probe {
		if m.p.off.on.Load() || m.off.on.Load() {
			return Admission{}, SkipDisabled
		}
		if m.cool.cooled(now) {
			return Admission{}, SkipRateLimited
		}
	}
	adm, ok := m.p.Breaker.Admit()
	if !ok {
		return Admission{}, SkipCircuitOpen
	}
	n, ok := m.allow.take(now)
	if !ok && !probe {
		adm.Resolve(Neutral)
		return Admission{}, SkipRateLimited
	}
	adm.seq = n
	return adm, ""
}

// AvailableAt is when the model will take an attempt again as it stands
// now: the end of its cooldown, of its provider's circuit's cooldown, or
// the disabled probe's time, whichever is latest (now when it would take
// one now).
func (m *Model) AvailableAt(now time.Time) time.Time {
	at := now
	for _, t := range [...]time.Time{m.cool.Until(now), m.p.Breaker.openUntil()} {
		if t.After(at) {
			at = t
		}
	}
	if _, next := m.DisabledState(); next.After(at) {
		at = next
	}
	return at
}

// Report is what an attempt's end tells its provider's and model's state.
type Report struct {
	ErrorType string // the attempt's error.type ("" on success)
	// TargetOnly: a disabling ErrorType concerns only this (provider,
	// upstream model), as a model-access refusal always does.
	TargetOnly bool
	Success    bool // the attempt served the request
	// RetryAt is when its answer said to come back (zero: it said nothing).
	RetryAt time.Time
	// Remaining is what its answer said remains of the request limit,
	// until RemainingReset; HasRemaining is false when it said nothing.
	HasRemaining   bool
	Remaining      int64
	RemainingReset time.Time
}

// Settle tells the model's state how an attempt ended: a key-level
// credential or quota failure disables its provider, a model-access
// refusal only this (provider, upstream model); a probe's success enables
// both again; a rate-limit signal cools the model it came from, and what
// remains of its request limit paces the model's next attempts. probe
// says the attempt was a disabled probe (or a forced try of a disabled
// target); seq is its number among the model's admitted attempts
// (Admission.Seq).
func (m *Model) Settle(r Report, probe bool, seq int64) {
	now := m.p.Now()
	switch {
	case fault.ModelScoped(r.ErrorType), r.TargetOnly && fault.Disabling(r.ErrorType):
		m.off.disable(now, r.ErrorType, probe)
	case fault.Disabling(r.ErrorType):
		m.p.off.disable(now, r.ErrorType, probe)
	case !probe:
	case r.Success:
		m.p.off.enable()
		m.off.enable()
	default:
		m.DisabledProbeDone()
	}
	if !r.RetryAt.IsZero() {
		m.cool.extend(now, r.RetryAt)
	}
	if r.HasRemaining {
		m.allow.set(seq, r.Remaining, r.RemainingReset)
	}
}

// ClaimDisabledProbe takes the disabled model's probe if one is due at
// now: its provider's when the provider is disabled, else its own.
func (m *Model) ClaimDisabledProbe(now time.Time) bool {
	if m.p.off.on.Load() {
		return m.p.off.claimProbe(now)
	}
	return m.off.claimProbe(now)
}

// DisabledProbeDone ends a probe that taught nothing, whichever state
// claimed it (the provider may have been disabled since its model's probe
// went).
func (m *Model) DisabledProbeDone() {
	m.p.off.probeDone()
	m.off.probeDone()
}

// Disabled reports whether the provider or the model is disabled.
func (m *Model) Disabled() bool { return m.p.off.on.Load() || m.off.on.Load() }

// DisabledState is why the model is disabled ("" when it is not; its
// provider's reason first) and when its next probe may go.
func (m *Model) DisabledState() (reason string, next time.Time) {
	if reason, next = m.p.off.state(); reason != "" {
		return reason, next
	}
	return m.off.state()
}

// CooledUntil is when the model's rate limits let it be tried again
// (zero: not cooled as of now).
func (m *Model) CooledUntil(now time.Time) time.Time { return m.cool.Until(now) }
