package routinge2e

import (
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
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

// NewClock returns a clock standing still.
func NewClock() *Clock { return &Clock{base: time.Unix(1_700_000_000, 0)} }

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
	servers  []*http.Server
	arrivals arrivals
}

// StartUpstreams serves s's targets on loopback, timed by clock; seed 0
// draws TTFBs and errors from a random seed, else from one derived from
// (seed, target index).
func StartUpstreams(s Scenario, clock *Clock, seed uint64) (*Upstreams, error) {
	u := &Upstreams{urls: map[string]string{}, arrivals: arrivals{byTrace: map[string]*arrival{}}}
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

// Close stops every provider and breaks its open connections.
func (u *Upstreams) Close() {
	for _, s := range u.servers {
		_ = s.Close()
	}
}

// Reached returns the provider that received the request with trace ID id
// first, and how many upstream requests carried it (the attempts that
// really went out); "" and 0 when none did.
func (u *Upstreams) Reached(traceID string) (first string, requests int) {
	return u.arrivals.get(traceID)
}

// arrivals keeps, per trace ID, the first provider a request reached and
// how many requests carried it. The gateway continues the client's
// traceparent and sends every attempt upstream with the same trace ID;
// attempts go one after the other, so the first to arrive is the first
// pick, whatever happened to it.
type arrivals struct {
	mu      sync.Mutex          // guards byTrace
	byTrace map[string]*arrival // trace ID (32 hex digits) -> what reached whom
}

type arrival struct {
	first    string
	requests int
}

func (a *arrivals) record(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := traceID(r.Header.Get("Traceparent")); ok {
			a.mu.Lock()
			if x := a.byTrace[id]; x != nil {
				x.requests++
			} else {
				a.byTrace[id] = &arrival{first: name, requests: 1}
			}
			a.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (a *arrivals) get(id string) (string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if x := a.byTrace[id]; x != nil {
		return x.first, x.requests
	}
	return "", 0
}

// traceID is the trace ID of a W3C traceparent "00-<32 hex>-<16 hex>-<2 hex>".
func traceID(tp string) (string, bool) {
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return "", false
	}
	return parts[1], true
}
