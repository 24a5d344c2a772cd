package upstream

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// t0 is when every test clock starts.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// manualClock is a settable clock for the breaker's cooldowns.
type manualClock struct{ ns atomic.Int64 }

func newManualClock() *manualClock {
	c := &manualClock{}
	c.ns.Store(t0.UnixNano())
	return c
}

func (c *manualClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *manualClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// transitions records a breaker's state changes.
type transitions struct {
	mu  sync.Mutex
	got []string
}

func (tr *transitions) add(from, to CircuitState) {
	tr.mu.Lock()
	tr.got = append(tr.got, from.String()+"->"+to.String())
	tr.mu.Unlock()
}

func (tr *transitions) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	g := tr.got
	tr.got = nil
	return g
}

func newTestBreaker(clock *manualClock, tr *transitions) *Breaker {
	return newBreaker(2, 10*time.Second, clock.Now, tr.add)
}

func mustAdmit(t *testing.T, b *Breaker) Admission {
	t.Helper()
	a, ok := b.Admit()
	if !ok {
		t.Fatalf("admit refused in state %v", b.State())
	}
	return a
}

// openBreaker faults it twice: open.
func openBreaker(t *testing.T, b *Breaker) {
	t.Helper()
	mustAdmit(t, b).Resolve(Fault)
	mustAdmit(t, b).Resolve(Fault)
	if b.State() != CircuitOpen {
		t.Fatalf("after 2 faults: %v, want open", b.State())
	}
}

func TestBreakerOpensOnConsecutiveFaults(t *testing.T) {
	t.Parallel()
	clock, tr := newManualClock(), &transitions{}
	b := newTestBreaker(clock, tr)
	mustAdmit(t, b).Resolve(Fault)
	mustAdmit(t, b).Resolve(Success) // a success resets the count
	mustAdmit(t, b).Resolve(Fault)
	mustAdmit(t, b).Resolve(Neutral) // neutral changes nothing
	if b.State() != CircuitClosed {
		t.Fatalf("fault, ok, fault, neutral: %v, want closed", b.State())
	}
	mustAdmit(t, b).Resolve(Fault)
	if b.State() != CircuitOpen || !b.Blocked() {
		t.Fatalf("second consecutive fault: %v blocked %v, want open and blocked", b.State(), b.Blocked())
	}
	if _, ok := b.Admit(); ok {
		t.Error("open circuit admitted an attempt within its cooldown")
	}
	if got := tr.take(); len(got) != 1 || got[0] != "closed->open" {
		t.Errorf("transitions %v, want [closed->open]", got)
	}
}

// TestBreakerProbeOutcomes: after the cooldown one probe goes through;
// every way it can end resolves it.
func TestBreakerProbeOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		Verdict   Verdict
		wantState CircuitState
		wantTrans []string
		nextProbe bool // another request may probe at once afterwards
	}{
		{"success closes", Success, CircuitClosed, []string{"open->half_open", "half_open->closed"}, false},
		{"fault opens again for a new cooldown", Fault, CircuitOpen, []string{"open->half_open", "half_open->open"}, false},
		{"neutral (client left, context overflow answer...) lets the next request probe", Neutral, CircuitHalfOpen, []string{"open->half_open"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock, tr := newManualClock(), &transitions{}
			b := newTestBreaker(clock, tr)
			openBreaker(t, b)
			tr.take()
			clock.Advance(10 * time.Second)
			if b.State() != CircuitHalfOpen || b.Blocked() {
				t.Fatalf("after the cooldown: %v blocked %v, want half-open, not blocked", b.State(), b.Blocked())
			}
			probe := mustAdmit(t, b)
			if !probe.probe {
				t.Fatal("the first Admission after the cooldown is not the probe")
			}
			if _, ok := b.Admit(); ok {
				t.Fatal("a second attempt was admitted while the probe is out")
			}
			if !b.Blocked() {
				t.Error("not blocked while the probe is out")
			}
			probe.Resolve(tc.Verdict)
			if b.State() != tc.wantState {
				t.Errorf("after the probe: %v, want %v", b.State(), tc.wantState)
			}
			if got := tr.take(); !equalStrings(got, tc.wantTrans) {
				t.Errorf("transitions %v, want %v", got, tc.wantTrans)
			}
			_, ok := b.Admit()
			if want := tc.nextProbe || tc.wantState == CircuitClosed; ok != want {
				t.Errorf("next admit = %v, want %v", ok, want)
			}
		})
	}
}

// TestBreakerLateAnswerNeverCloses: an attempt admitted before the circuit
// opened and answering after it did says nothing of the provider now.
func TestBreakerLateAnswerNeverCloses(t *testing.T) {
	t.Parallel()
	clock, tr := newManualClock(), &transitions{}
	b := newTestBreaker(clock, tr)
	late := mustAdmit(t, b) // in flight while two others fail
	openBreaker(t, b)
	late.Resolve(Success)
	if b.State() != CircuitOpen {
		t.Fatalf("a late success changed the state to %v", b.State())
	}
	clock.Advance(10 * time.Second)
	probe := mustAdmit(t, b)
	lateFault := late
	lateFault.Resolve(Fault) // and a late fault does not steal the probe's say
	if b.State() != CircuitHalfOpen {
		t.Fatalf("a late fault changed the half-open state to %v", b.State())
	}
	probe.Resolve(Success)
	if b.State() != CircuitClosed {
		t.Errorf("the probe's success left %v", b.State())
	}
	// A fault admitted in an earlier closed generation does not count
	// towards the next opening either.
	mustAdmit(t, b).Resolve(Fault)
	late.Resolve(Fault)
	if b.State() != CircuitClosed {
		t.Errorf("an old generation's fault tripped the breaker: %v", b.State())
	}
}

// TestBreakerConcurrentProbe: of many requests arriving together after the
// cooldown, exactly one probes (run with -race).
func TestBreakerConcurrentProbe(t *testing.T) {
	t.Parallel()
	clock, tr := newManualClock(), &transitions{}
	b := newTestBreaker(clock, tr)
	openBreaker(t, b)
	clock.Advance(10 * time.Second)
	var admitted atomic.Int32
	var probes []Admission
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if a, ok := b.Admit(); ok {
				admitted.Add(1)
				mu.Lock()
				probes = append(probes, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 1 {
		t.Fatalf("%d admitted after the cooldown, want exactly 1 probe", admitted.Load())
	}
	probes[0].Resolve(Success)
	// Closed again: everyone goes through, concurrently.
	for range 16 {
		wg.Go(func() {
			a, ok := b.Admit()
			if !ok {
				t.Error("closed breaker refused")
				return
			}
			a.Resolve(Success)
		})
	}
	wg.Wait()
}

// TestBreakerZeroAdmissionIsHarmless: a refused admit hands back the zero
// Admission (the skip path holds one), and resolving it, whatever the
// Verdict, changes nothing: not the state, not the count of faults, not the
// probe in flight, and no transition is reported. Admissions the breaker
// did hand out behave as before afterwards.
func TestBreakerZeroAdmissionIsHarmless(t *testing.T) {
	t.Parallel()
	if (Admission{}).b != nil {
		t.Fatal("the zero Admission names a breaker")
	}
	for _, r := range []Verdict{Neutral, Success, Fault} {
		name := map[Verdict]string{Neutral: "neutral", Success: "success", Fault: "fault"}[r]
		t.Run(fmt.Sprintf("closed, one fault counted, resolved %s", name), func(t *testing.T) {
			clock, tr := newManualClock(), &transitions{}
			b := newTestBreaker(clock, tr)
			mustAdmit(t, b).Resolve(Fault)
			Admission{}.Resolve(r)
			if b.State() != CircuitClosed || b.failures.Load() != 1 || len(tr.take()) != 0 {
				t.Fatalf("after resolving the zero Admission: %v with %d faults counted, want closed with 1 and no transition",
					b.State(), b.failures.Load())
			}
			mustAdmit(t, b).Resolve(Fault) // the second fault of two: open
			if b.State() != CircuitOpen {
				t.Errorf("the next real fault: %v, want open (the zero Admission neither counted nor reset)", b.State())
			}
		})
		t.Run(fmt.Sprintf("open, refused within the cooldown, resolved %s", name), func(t *testing.T) {
			clock, tr := newManualClock(), &transitions{}
			b := newTestBreaker(clock, tr)
			openBreaker(t, b)
			tr.take()
			refused, ok := b.Admit()
			if ok || refused != (Admission{}) {
				t.Fatalf("admit within the cooldown = %+v, %v; want the zero Admission, refused", refused, ok)
			}
			refused.Resolve(r)
			if b.State() != CircuitOpen || !b.Blocked() || len(tr.take()) != 0 {
				t.Fatalf("after resolving the refusal: %v blocked %v, want open and blocked, no transition", b.State(), b.Blocked())
			}
			clock.Advance(10 * time.Second)
			if probe := mustAdmit(t, b); !probe.probe {
				t.Error("the first Admission after the cooldown is not the probe")
			}
		})
		t.Run(fmt.Sprintf("half-open, probe out, resolved %s", name), func(t *testing.T) {
			clock, tr := newManualClock(), &transitions{}
			b := newTestBreaker(clock, tr)
			openBreaker(t, b)
			clock.Advance(10 * time.Second)
			probe := mustAdmit(t, b)
			tr.take()
			refused, ok := b.Admit()
			if ok || refused != (Admission{}) {
				t.Fatalf("admit while the probe is out = %+v, %v; want the zero Admission, refused", refused, ok)
			}
			refused.Resolve(r)
			if b.State() != CircuitHalfOpen || !b.Blocked() || len(tr.take()) != 0 {
				t.Fatalf("after resolving the refusal: %v blocked %v, want half-open and blocked (the probe still out), no transition", b.State(), b.Blocked())
			}
			if _, ok := b.Admit(); ok {
				t.Fatal("a second attempt was admitted: the refusal's resolve ended the probe")
			}
			probe.Resolve(Success)
			if got := tr.take(); b.State() != CircuitClosed || !equalStrings(got, []string{"half_open->closed"}) {
				t.Errorf("the probe's success: %v, transitions %v; want closed, [half_open->closed]", b.State(), got)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
