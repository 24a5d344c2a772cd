package router

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// upstream is a provider at run time: where it is, how it authenticates,
// and the guards (circuit breaker, concurrency limit) shared by every
// target that uses it.
type upstream struct {
	// immutable after newUpstream
	name      string
	kind      string
	baseURL   string // without trailing slash
	apiKey    string
	host      string // server.address
	port      int    // server.port
	firstByte time.Duration
	total     time.Duration
	breaker   *breaker
	limiter   *limiter            // nil: unlimited
	urls      map[string]*url.URL // endpoint suffix -> upstream URL, built once
}

// endpointURL is where ep's requests go on this provider.
func (u *upstream) endpointURL(ep *endpoint) *url.URL { return u.urls[ep.suffix] }

func newUpstream(name string, p *ProviderConfig, now func() time.Time) *upstream {
	u := &upstream{
		name:      name,
		kind:      p.Kind,
		baseURL:   strings.TrimRight(p.BaseURL, "/"),
		apiKey:    p.APIKey,
		firstByte: p.Timeout.FirstByte,
		total:     p.Timeout.Total,
		breaker:   &breaker{threshold: p.CircuitBreaker.Failures, cooldown: p.CircuitBreaker.Cooldown, now: now},
	}
	u.urls = map[string]*url.URL{}
	for _, ep := range endpoints {
		if parsed, err := url.Parse(u.baseURL + ep.suffix); err == nil {
			u.urls[ep.suffix] = parsed
		}
	}
	if parsed, err := url.Parse(u.baseURL); err == nil {
		u.host = parsed.Hostname()
		if port, err := strconv.Atoi(parsed.Port()); err == nil {
			u.port = port
		} else if parsed.Scheme == "https" {
			u.port = 443
		} else {
			u.port = 80
		}
	}
	if p.MaxConcurrency > 0 {
		u.limiter = &limiter{slots: make(chan struct{}, p.MaxConcurrency), queue: int64(p.Queue)}
	}
	return u
}

// setAuth puts the provider's credential on an upstream request, in the
// provider's own way. The client's credential is never forwarded.
func (u *upstream) setAuth(h http.Header) {
	if u.kind == KindAnthropic {
		// Anthropic refuses a request without a version; clients that
		// name none get the one its API documents as the baseline.
		if h.Get("Anthropic-Version") == "" {
			h["Anthropic-Version"] = defaultAnthropicVersion
		}
		if u.apiKey != "" {
			h["X-Api-Key"] = []string{u.apiKey}
		}
		return
	}
	if u.apiKey != "" {
		h["Authorization"] = []string{"Bearer " + u.apiKey}
	}
}

var defaultAnthropicVersion = []string{"2023-06-01"}

// breaker opens after threshold consecutive failover-safe failures and
// lets one probe through after cooldown (half-open); the probe's success
// closes it, its failure opens it again.
type breaker struct {
	threshold int              // immutable
	cooldown  time.Duration    // immutable
	now       func() time.Time // immutable

	openUntil atomic.Int64 // unix nanos; 0 closed. Read lock-free on every attempt.

	mu       sync.Mutex // guards failures and probing
	failures int
	probing  bool
}

// allow says whether an attempt may go to this provider now.
func (b *breaker) allow() bool {
	until := b.openUntil.Load()
	if until == 0 {
		return true
	}
	if b.now().UnixNano() < until {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing {
		return false
	}
	b.probing = true
	return true
}

// record notes an attempt's result: ok for anything but a failover-safe
// failure of the provider.
func (b *breaker) record(ok bool) {
	if ok && b.openUntil.Load() == 0 {
		b.mu.Lock()
		b.failures = 0
		b.mu.Unlock()
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if ok {
		b.failures = 0
		b.openUntil.Store(0)
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.openUntil.Store(b.now().Add(b.cooldown).UnixNano())
	}
}

// isOpen reports the state for metrics and the debug page.
func (b *breaker) isOpen() bool {
	until := b.openUntil.Load()
	return until != 0 && b.now().UnixNano() < until
}

// limiter caps in-flight requests with a bounded wait queue.
type limiter struct {
	slots   chan struct{}
	queue   int64
	waiting atomic.Int64
}

// acquire takes a slot, waiting in the queue if there is room there; false
// means the queue is full or ctx ended.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return false
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) release() { <-l.slots }

// NewTransport is the upstream HTTP transport: pooled keep-alive
// connections, HTTP/2 where offered, bodies passed as the provider sent
// them (no transparent gzip, so bytes are relayed unchanged).
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}
