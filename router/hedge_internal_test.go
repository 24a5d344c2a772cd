package router

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// The race's rules on an injected timer and upstreams the test releases by
// hand: who wins, what happens to the loser, the budget and max. No rule
// here depends on how fast anything runs.

// fakeTimer fires when the test says.
type fakeTimer struct {
	c       chan time.Time
	stopped atomic.Bool
}

func (f *fakeTimer) C() <-chan time.Time { return f.c }
func (f *fakeTimer) Stop() bool          { return !f.stopped.Swap(true) }

// heldUpstream answers a chat completion naming itself when the test
// releases it, and reports when its client went away.
type heldUpstream struct {
	*httptest.Server
	name     string
	arrived  chan struct{}
	release  chan struct{}
	gone     chan struct{} // closed when a request's context ended before release
	requests atomic.Int32
	status   int // what it answers on release; 0: 200 and a chat completion
}

func newHeldUpstream(t *testing.T, name string) *heldUpstream {
	u := &heldUpstream{name: name, arrived: make(chan struct{}, 8), release: make(chan struct{}), gone: make(chan struct{}, 8)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		u.requests.Add(1)
		u.arrived <- struct{}{}
		select {
		case <-u.release:
		case <-r.Context().Done():
			u.gone <- struct{}{}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if u.status != 0 {
			w.WriteHeader(u.status)
			_, _ = io.WriteString(w, `{"error":{"message":"refused by `+name+`","type":"invalid_request_error","code":null}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"from `+name+`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// hedgedGateway is a fallback gateway over ups with hedging after a fixed
// delay on timers the test fires.
func hedgedGateway(t *testing.T, budget float64, max int, ups ...*heldUpstream) (*Gateway, chan *fakeTimer) {
	t.Helper()
	return hedgedGatewayWith(t, Options{}, budget, max, ups...)
}

// hedgedGatewayWith is hedgedGateway with o.
func hedgedGatewayWith(t *testing.T, o Options, budget float64, max int, ups ...*heldUpstream) (*Gateway, chan *fakeTimer) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "strategy: {mode: fallback, hedge: {enabled: true, after: 100ms, budget: %g, max: %d}}\nproviders:\n", budget, max)
	for _, u := range ups {
		b.WriteString("  " + u.name + ": {base_url: \"" + u.URL + "/v1\", models: [m]}\n")
	}
	b.WriteString("targets:\n")
	for _, u := range ups {
		b.WriteString("  - {virtual_key: " + u.name + "}\n")
	}
	cfg, err := config.Parse([]byte(b.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	timers := make(chan *fakeTimer, 8)
	g.newTimer = func(time.Duration) hedgeTimer {
		ft := &fakeTimer{c: make(chan time.Time, 1)}
		timers <- ft
		return ft
	}
	return g, timers
}

// serve sends one chat request to g and returns its answer, asynchronously.
func serve(g *Gateway) chan *httptest.ResponseRecorder {
	out := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		g.Handler().ServeHTTP(rec, req)
		out <- rec
	}()
	return out
}

func TestHedgeWinsAndTheLoserIsCancelled(t *testing.T) {
	a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
	g, timers := hedgedGateway(t, 1, 1, a, b)
	done := serve(g)
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{} // a is late: the hedge starts
	WaitFor(t, b.arrived, "the hedge")
	close(b.release)
	rec := <-done
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from b") || strings.Contains(rec.Body.String(), "from a") {
		t.Fatalf("%d %s: want b's answer alone", rec.Code, rec.Body.String())
	}
	if h := rec.Header(); h.Get(HeaderHedged) != HedgeWon || h.Get(HeaderTarget) != "b" || h.Get(HeaderAttempts) != "2" {
		t.Fatalf("headers %v: want hedged won, target b, 2 attempts", h)
	}
	WaitFor(t, a.gone, "the loser's upstream to see its connection closed")
}

func TestFirstAttemptWinsTheRace(t *testing.T) {
	a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
	g, timers := hedgedGateway(t, 1, 1, a, b)
	done := serve(g)
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{}
	WaitFor(t, b.arrived, "the hedge")
	close(a.release)
	rec := <-done
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from a") || rec.Header().Get(HeaderHedged) != HedgeLost {
		t.Fatalf("%d %s %v: want a's answer, hedged lost", rec.Code, rec.Body.String(), rec.Header())
	}
	WaitFor(t, b.gone, "the hedge's upstream to see its connection closed")
}

func TestARacerThatFailsLeavesTheOtherRunning(t *testing.T) {
	a, b := newHeldUpstream(t, "a"), newHeldUpstream(t, "b")
	g, timers := hedgedGateway(t, 1, 1, a, b)
	done := serve(g)
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{}
	WaitFor(t, b.arrived, "the hedge")
	a.CloseClientConnections() // a fails: its connection is cut before an answer
	select {
	case rec := <-done:
		t.Fatalf("answered %d before b did: the failure of a ended the race", rec.Code)
	case <-time.After(50 * time.Millisecond):
	}
	close(b.release)
	rec := <-done
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from b") || rec.Header().Get(HeaderHedged) != HedgeWon {
		t.Fatalf("%d %s: want b's answer after a failed", rec.Code, rec.Body.String())
	}
}

func TestBudgetDeniesAndMaxBoundsHedges(t *testing.T) {
	a, b, c := newHeldUpstream(t, "a"), newHeldUpstream(t, "b"), newHeldUpstream(t, "c")
	g, timers := hedgedGateway(t, 0.05, 1, a, b, c)
	done := serve(g)
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{} // due, but 1 request x 5 % < 1 hedge
	close(a.release)
	rec := <-done
	if rec.Header().Get(HeaderHedged) != "" || rec.Header().Get(HeaderAttempts) != "1" || b.requests.Load() != 0 {
		t.Fatalf("a hedge past the budget: %v, b saw %d", rec.Header(), b.requests.Load())
	}

	// max bounds the hedges in flight beside the first attempt.
	for _, max := range []int{1, 2} {
		a, b, c := newHeldUpstream(t, "a"), newHeldUpstream(t, "b"), newHeldUpstream(t, "c")
		g, timers := hedgedGateway(t, 1, max, a, b, c)
		for range 9 { // the window's other requests: room for 2 hedges in this one
			g.hedge.Request("m", time.Now())
		}
		done := serve(g)
		WaitFor(t, a.arrived, "the first attempt")
		(<-timers).c <- time.Time{}
		WaitFor(t, b.arrived, "the first hedge")
		if max == 2 {
			(<-timers).c <- time.Time{}
			WaitFor(t, c.arrived, "the second hedge")
		} else {
			select {
			case <-timers:
				t.Fatal("max 1: a timer for a second hedge")
			default:
			}
		}
		close(b.release)
		rec := <-done
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from b") {
			t.Fatalf("max %d: %d %s", max, rec.Code, rec.Body.String())
		}
		if want := int32(max - 1); c.requests.Load() != want {
			t.Fatalf("max %d: c saw %d requests, want %d", max, c.requests.Load(), want)
		}
		if want := strconv.Itoa(1 + max); rec.Header().Get(HeaderAttempts) != want {
			t.Fatalf("max %d: %s attempts, want %s", max, rec.Header().Get(HeaderAttempts), want)
		}
	}
}

// TestAHedgeAfterARacerFailedGoesPastTheNewest: with a failed and gone
// from the race, the next hedge still starts past the newest racer (b),
// at c: not at b again.
func TestAHedgeAfterARacerFailedGoesPastTheNewest(t *testing.T) {
	a, b, c := newHeldUpstream(t, "a"), newHeldUpstream(t, "b"), newHeldUpstream(t, "c")
	g, timers := hedgedGateway(t, 1, 2, a, b, c)
	for range 9 { // room in the window for 2 hedges
		g.hedge.Request("m", time.Now())
	}
	done := serve(g)
	WaitFor(t, a.arrived, "the first attempt")
	(<-timers).c <- time.Time{}
	WaitFor(t, b.arrived, "the first hedge")
	next := <-timers
	a.CloseClientConnections() // a fails: it leaves the race
	WaitFor(t, a.gone, "a's failure")
	next.c <- time.Time{}
	WaitFor(t, c.arrived, "the second hedge, at c")
	close(c.release)
	rec := <-done
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from c") || b.requests.Load() != 1 {
		t.Fatalf("%d %s, b saw %d requests: want c's answer, b tried once", rec.Code, rec.Body.String(), b.requests.Load())
	}
}
