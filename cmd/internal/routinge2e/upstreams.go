package routinge2e

import (
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// Clock is a scenario's time. It stands still until Start and then runs
// with the real clock, so simulated providers built with it (Options.Now)
// time their phases from the moment the clients start, not from when they
// were built.
type Clock struct {
	base    time.Time
	started atomic.Pointer[time.Time]
}

// clockBase is what a Clock reads before Start: a whole second, so that a
// provider's rate limit windows (whole seconds of its clock) turn at whole
// seconds of the scenario's timeline.
var clockBase = time.Unix(1_700_000_000, 0)

// NewClock returns a clock standing still.
func NewClock() *Clock { return &Clock{base: clockBase} }

// NewClockAt returns a clock standing still at base. A provider that
// checks request signatures against its clock (a Bedrock sim verifying
// SigV4 dates) needs a base near the real time.
func NewClockAt(base time.Time) *Clock { return &Clock{base: base} }

// Start sets the timeline's zero to now; later calls change nothing.
func (c *Clock) Start() {
	now := time.Now()
	c.started.CompareAndSwap(nil, &now)
}

// Now is the sim providers' clock.
func (c *Clock) Now() time.Time { return c.base.Add(c.Elapsed()) }

// Elapsed is the time since Start (zero before).
func (c *Clock) Elapsed() time.Duration {
	if s := c.started.Load(); s != nil {
		return time.Since(*s)
	}
	return 0
}

// Upstreams are a scenario's simulated providers, each on its own loopback
// listener, behind a recorder of which provider each request reached first.
type Upstreams struct {
	urls     map[string]string
	sims     map[string]*sim.Server
	servers  []*http.Server
	arrivals arrivals
}

// StartUpstreams serves s's targets on loopback, timed by clock; seed 0
// draws TTFBs and errors from a random seed, else from one derived from
// (seed, target index).
func StartUpstreams(s Scenario, clock *Clock, seed uint64) (*Upstreams, error) {
	u := &Upstreams{urls: map[string]string{}, sims: map[string]*sim.Server{}, arrivals: arrivals{byTrace: map[string][]Hop{}}}
	for i, p := range s.Targets {
		if err := p.Validate(); err != nil {
			u.Close()
			return nil, fmt.Errorf("target %s: %w", p.Name, err)
		}
		r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		if seed != 0 {
			r = rand.New(rand.NewPCG(seed, uint64(i)))
		}
		h := sim.NewProvider(p, sim.Options{Now: clock.Now, Rand: r})
		u.sims[p.Name] = h
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			u.Close()
			return nil, err
		}
		srv := &http.Server{
			Handler:           u.arrivals.record(p.Name, h),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          log.New(io.Discard, "", 0), // cancelled hangs are the point, not news
		}
		u.servers = append(u.servers, srv)
		u.urls[p.Name] = "http://" + ln.Addr().String() + "/v1"
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Printf("upstream %s: %v", p.Name, err)
			}
		}()
	}
	return u, nil
}

// URLs are the providers' API bases ("http://127.0.0.1:PORT/v1") by name.
func (u *Upstreams) URLs() map[string]string { return u.urls }

// Sim is the simulated provider name, for its counters (its queue, its
// prompt cache).
func (u *Upstreams) Sim(name string) *sim.Server { return u.sims[name] }

// Close stops every provider and breaks its open connections.
func (u *Upstreams) Close() {
	for _, s := range u.servers {
		_ = s.Close()
	}
}

// Reached returns the upstream requests that carried trace ID id, in the
// order they arrived (the attempts that really went out; the first is the
// first pick), each with the status its provider answered.
func (u *Upstreams) Reached(traceID string) []Hop {
	return u.arrivals.get(traceID)
}

// Hop is one upstream request as its provider saw it: the provider, and the
// status it answered (0: none, e.g. the gateway gave up waiting first).
type Hop struct {
	Target string
	Status int
}

// arrivals keeps, per trace ID, the upstream requests that carried it. The
// gateway continues the client's traceparent and sends every attempt
// upstream with the same trace ID; attempts go one after the other, so the
// first to arrive is the first pick, whatever happened to it.
type arrivals struct {
	mu      sync.Mutex       // guards byTrace and the hops in it
	byTrace map[string][]Hop // trace ID (32 hex digits) -> what reached whom
}

func (a *arrivals) record(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := traceID(r.Header.Get("Traceparent"))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		a.mu.Lock()
		i := len(a.byTrace[id])
		a.byTrace[id] = append(a.byTrace[id], Hop{Target: name})
		a.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		a.mu.Lock()
		a.byTrace[id][i].Status = sw.status
		a.mu.Unlock()
	})
}

func (a *arrivals) get(id string) []Hop {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.byTrace[id])
}

// statusWriter notes the status a provider answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the providers
// flush every chunk of a stream).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// traceID is the trace ID of a W3C traceparent "00-<32 hex>-<16 hex>-<2 hex>".
func traceID(tp string) (string, bool) {
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return "", false
	}
	return parts[1], true
}
