package router

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTimeout is an attempt's timeout that runs when the test says.
type fakeTimeout struct {
	d       time.Duration
	f       func()
	stopped atomic.Bool
}

func (f *fakeTimeout) Stop() bool                 { return !f.stopped.Swap(true) }
func (f *fakeTimeout) Reset(d time.Duration) bool { f.d = d; return !f.stopped.Swap(false) }

// fire runs the timeout's function, as its time being up would.
func (f *fakeTimeout) fire() { f.f() }

// fakeTimeouts has g's attempts arm their timeouts on the test's clock:
// each one armed is sent on the channel.
func fakeTimeouts(g *Gateway) chan *fakeTimeout {
	armed := make(chan *fakeTimeout, 16)
	g.afterFunc = func(d time.Duration, f func()) timeout {
		ft := &fakeTimeout{d: d, f: f}
		armed <- ft
		return ft
	}
	return armed
}

// The first-byte timeout is the gateway's injected timer: fired by the
// test, it cuts the late attempt at once and the request fails over, with
// no wall-clock wait for timeout.first_byte.
func TestFirstByteTimeoutRunsOnTheInjectedClock(t *testing.T) {
	a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
	close(b.release)
	g, _ := hedgedGateway(t, 1, 1, a, b)
	armed := fakeTimeouts(g)
	done := serve(g)
	first := <-armed
	if want := g.upstreams["a"].FirstByte; first.d != want {
		t.Fatalf("first timeout armed for %v, want a's first_byte %v", first.d, want)
	}
	WaitFor(t, a.arrived, "the first attempt")
	first.fire()
	WaitFor(t, a.gone, "the late attempt's upstream to see its connection closed")
	rec := <-done
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from b") || rec.Header().Get(HeaderAttempts) != "2" {
		t.Fatalf("%d %s %v: want b's answer after a's timeout, 2 attempts", rec.Code, rec.Body.String(), rec.Header())
	}
}
