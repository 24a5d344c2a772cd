package upstream

import (
	"sync"
	"sync/atomic"
	"time"
)

// CircuitState is a circuit breaker's state, as /debug/routing and the
// logs name it.
type CircuitState uint8

const (
	CircuitClosed   CircuitState = iota // attempts go through
	CircuitOpen                         // the provider is skipped until the cooldown ends
	CircuitHalfOpen                     // the cooldown ended: one probe from real traffic at a time
)

func (s CircuitState) String() string {
	switch s {
	case CircuitOpen:
		return "open"
	case CircuitHalfOpen:
		return "half_open"
	}
	return "closed"
}

// Verdict is what an admitted attempt tells its breaker at its end, read
// from the failure model (fault.Classify): the provider answered
// (success), the provider faulted (fault), or the attempt says nothing of
// the provider (neutral: the client left, or the attempt never went out).
type Verdict uint8

const (
	Neutral Verdict = iota
	Success
	Fault
)

// Breaker opens after threshold consecutive provider faults and skips the
// provider for cooldown; then it lets real traffic probe it, one attempt at
// a time. Only a probe's success closes it, never a late answer to an
// attempt admitted before it opened; a probe's fault opens it again; a
// neutral probe (the client left) lets the next request probe.
//
// Every Admission must be resolved (Admission.Resolve), whatever the
// attempt's end: that is how a half-open probe can never be forgotten.
type Breaker struct {
	// immutable after newBreaker
	threshold int
	cooldown  time.Duration
	now       func() time.Time
	onChange  func(from, to CircuitState) // called outside mu; nil: none

	// tripped is 1 while the state is not closed: admit's lock-free fast
	// path. failures mirrors the count so a success on a healthy provider
	// takes no lock either.
	tripped  atomic.Int32
	failures atomic.Int32

	mu      sync.Mutex   // guards the fields below
	state   CircuitState // as of the last transition; open past its cooldown reads as half-open
	until   int64        // unix ns the open state lasts until
	probing bool         // a half-open probe is in flight

	gen atomic.Uint64 // bumped (under mu) each time the circuit opens; read lock-free
}

func newBreaker(threshold int, cooldown time.Duration, now func() time.Time, onChange func(from, to CircuitState)) *Breaker {
	return &Breaker{threshold: threshold, cooldown: cooldown, now: now, onChange: onChange}
}

// Admission is an attempt's permission from its breaker. Resolve must be
// called exactly once on every Admission Admit handed out.
type Admission struct {
	b      *Breaker
	gen    uint64 // the breaker's generation when admitted
	probe  bool   // the half-open probe
	forced bool   // admitted whatever the state (Breaker.Force)
	seq    int64  // the attempt's number among its provider's (allowance)
}

// Seq is the attempt's number among its model's admitted ones (Model.Settle).
func (a Admission) Seq() int64 { return a.seq }

// Forced reports whether it was admitted whatever the state (Breaker.Force).
func (a Admission) Forced() bool { return a.forced }

// Admit says whether an attempt may go to the provider now and, if so,
// hands back the Admission its end must resolve.
func (b *Breaker) Admit() (Admission, bool) {
	if b.tripped.Load() == 0 {
		return Admission{b: b, gen: b.gen.Load()}, true
	}
	b.mu.Lock()
	var change [2]CircuitState
	changed := false
	defer func() {
		b.mu.Unlock()
		if changed && b.onChange != nil {
			b.onChange(change[0], change[1])
		}
	}()
	switch b.state {
	case CircuitClosed: // closed since the fast path read
		return Admission{b: b, gen: b.gen.Load()}, true
	case CircuitOpen:
		if b.now().UnixNano() < b.until {
			return Admission{}, false
		}
		change, changed = [2]CircuitState{CircuitOpen, CircuitHalfOpen}, true
		b.state = CircuitHalfOpen
	}
	if b.probing {
		return Admission{}, false
	}
	b.probing = true
	return Admission{b: b, gen: b.gen.Load(), probe: true}, true
}

// Resolve tells the breaker how the admitted attempt ended.
func (a Admission) Resolve(r Verdict) {
	b := a.b
	if b == nil {
		return
	}
	if !a.probe && !a.forced && r != Fault && (r == Neutral || b.failures.Load() == 0) {
		return // nothing to change: the common success path takes no lock
	}
	b.mu.Lock()
	from := b.state
	to := b.apply(a, r)
	b.mu.Unlock()
	if from != to && b.onChange != nil {
		b.onChange(from, to)
	}
}

// apply changes the state for a resolved Admission and returns the new
// state. Called with mu held.
func (b *Breaker) apply(a Admission, r Verdict) CircuitState {
	if a.forced && b.state != CircuitClosed {
		switch r {
		case Success:
			b.close()
		case Fault:
			b.open()
		}
		return b.state
	}
	if a.probe {
		b.probing = false
		switch r {
		case Success:
			b.close()
		case Fault:
			b.open()
		}
		return b.state
	}
	if a.gen != b.gen.Load() || b.state != CircuitClosed {
		// Admitted before the circuit opened: its answer is too late to say
		// anything about the provider now.
		return b.state
	}
	switch r {
	case Success:
		b.failures.Store(0)
	case Fault:
		if n := b.failures.Add(1); int(n) >= b.threshold {
			b.open()
		}
	}
	return b.state
}

// open starts a cooldown. Called with mu held.
func (b *Breaker) open() {
	b.state = CircuitOpen
	b.until = b.now().Add(b.cooldown).UnixNano()
	b.gen.Add(1)
	b.tripped.Store(1)
}

// close resets the breaker. Called with mu held.
func (b *Breaker) close() {
	b.state = CircuitClosed
	b.failures.Store(0)
	b.tripped.Store(0)
}

// State is the circuit's state now (open past its cooldown reads as
// half-open: the next request may probe it).
func (b *Breaker) State() CircuitState {
	if b.tripped.Load() == 0 {
		return CircuitClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == CircuitOpen && b.now().UnixNano() >= b.until {
		return CircuitHalfOpen
	}
	return b.state
}

// Blocked reports whether an attempt would be refused now: open within its
// cooldown, or half-open with its probe in flight. Such targets are ordered
// after the others.
func (b *Breaker) Blocked() bool {
	if b.tripped.Load() == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case CircuitOpen:
		return b.now().UnixNano() < b.until || b.probing
	case CircuitHalfOpen:
		return b.probing
	}
	return false
}

// openUntil is when an open circuit's cooldown ends (zero when it is not
// open).
func (b *Breaker) openUntil() time.Time {
	if b.tripped.Load() == 0 {
		return time.Time{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != CircuitOpen {
		return time.Time{}
	}
	return time.Unix(0, b.until)
}

// EndCooldown ends an open circuit's cooldown now: the next request may
// probe the provider (it reads as half-open).
func (b *Breaker) EndCooldown() {
	if b.tripped.Load() == 0 {
		return
	}
	b.mu.Lock()
	if now := b.now().UnixNano(); b.state == CircuitOpen && b.until > now {
		b.until = now
	}
	b.mu.Unlock()
}

// Force admits an attempt whatever the state: the blackout rule's try of
// the provider most likely to answer when every one is away. It resolves
// as a half-open probe does (a success closes the circuit, a fault opens
// it again), without taking the probe slot of real traffic.
func (b *Breaker) Force() Admission {
	return Admission{b: b, gen: b.gen.Load(), forced: true}
}
