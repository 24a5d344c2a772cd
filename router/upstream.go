package router

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// upstream is a provider at run time: where it is, how it authenticates,
// and the guards shared by every target that uses it: its circuit breaker,
// concurrency limit, rate-limit cooldown and disabled state.
type upstream struct {
	// immutable after newUpstream (and useHost)
	kind         string      // the wire format sent: openai or anthropic
	providerName string      // gen_ai.provider.name
	cloud        *cloudHost  // nil: an openai or anthropic provider
	headers      http.Header // providers.X.headers, canonical; nil: none
	query        string      // providers.X.query, encoded; "": none
	responses    bool        // serves the Responses API itself (providers.X.responses)
	apiKey       string
	host         string // server.address
	port         int    // server.port
	firstByte    time.Duration
	idle         time.Duration
	total        time.Duration
	now          func() time.Time
	breaker      *breaker
	limiter      *limiter // nil: unlimited
	// maxConcurrency is its configured cap (0: none): a request beyond it
	// waits its turn, which the latency modes count.
	maxConcurrency int
	urls           map[string]*url.URL // endpoint suffix -> upstream URL, built once

	// inflight is its attempts in flight from this gateway, exactly: every
	// Turn the routes hand out counts until it is resolved.
	inflight atomic.Int64
	off      disabler // its credential or quota failed

	maxCooldown time.Duration                              // immutable: rate_limit.max_cooldown
	onDisabled  func(model string, on bool, reason string) // immutable; nil: none
	guardsMu    sync.Mutex                                 // guards guards
	guards      map[string]*modelGuard                     // by upstream model
	// wrongURLs are the URLs of it that answered that they do not exist,
	// each warned of once (warnWrongEndpoint).
	wrongURLs sync.Map
}

// modelGuard is the state of one (provider, upstream model) that the
// provider's answers for that model set: providers limit, and grant
// access to, each model apart. Every candidate of the provider that asks
// for the model shares it.
type modelGuard struct {
	cool  cooldown  // until when its rate limits keep it away
	allow allowance // what remains of its request limit
	off   disabler  // the provider refused the key this model
}

// guard is the state of (u, model), made on first use (when the routes
// are built) and kept while the provider is: a reload that keeps the
// provider keeps its models' cooldowns.
func (u *upstream) guard(model string) *modelGuard {
	u.guardsMu.Lock()
	defer u.guardsMu.Unlock()
	if g := u.guards[model]; g != nil {
		return g
	}
	g := &modelGuard{cool: cooldown{max: u.maxCooldown}}
	if on := u.onDisabled; on != nil {
		g.off.onChange = func(enabled bool, reason string) { on(model, enabled, reason) }
	}
	if u.guards == nil {
		u.guards = map[string]*modelGuard{}
	}
	u.guards[model] = g
	return g
}

// resetDisabled enables the provider and every model of it for a reload
// (the operator may have fixed what disabled them), telling enabled of
// each that was disabled (model "" for the provider itself).
func (u *upstream) resetDisabled(enabled func(model, was string)) {
	if reason, _ := u.off.state(); reason != "" {
		u.off.reset()
		enabled("", reason)
	}
	u.guardsMu.Lock()
	defer u.guardsMu.Unlock()
	for m, g := range u.guards {
		if reason, _ := g.off.state(); reason != "" {
			g.off.reset()
			enabled(m, reason)
		}
	}
}

// endpointURL is where ep's requests go on this provider.
func (u *upstream) endpointURL(ep *endpoint) *url.URL { return u.urls[ep.upstreamSuffix(u.kind)] }

// upstreamEvents are told of a provider's state changes; nil members:
// none.
type upstreamEvents struct {
	circuit func(provider string, from, to CircuitState)
	// disabled: the provider (model "") or one of its upstream models
	// was disabled (on) or enabled again.
	disabled func(provider, model string, on bool, reason string)
}

// newUpstream builds a provider's run-time state.
func newUpstream(name string, p *config.Provider, now func() time.Time, ev upstreamEvents) *upstream {
	base := strings.TrimRight(p.BaseURL, "/")
	u := &upstream{
		kind:         p.Kind,
		providerName: p.Kind,
		responses:    p.ServesResponses(),
		apiKey:       p.APIKey,
		firstByte:    p.Timeout.FirstByte,
		idle:         p.Timeout.Idle,
		total:        p.Timeout.Total,
		now:          now,

		maxCooldown: p.RateLimit.MaxCooldown,
	}
	if ev.disabled != nil {
		u.off.onChange = func(on bool, reason string) { ev.disabled(name, "", on, reason) }
		u.onDisabled = func(model string, on bool, reason string) { ev.disabled(name, model, on, reason) }
	}
	onCircuit := ev.circuit
	var onChange func(from, to CircuitState)
	if onCircuit != nil {
		onChange = func(from, to CircuitState) { onCircuit(name, from, to) }
	}
	u.breaker = newBreaker(p.CircuitBreaker.Failures, p.CircuitBreaker.Cooldown, now, onChange)
	u.urls = map[string]*url.URL{}
	for _, suffix := range upstreamSuffixes {
		if parsed, err := url.Parse(base + suffix); err == nil {
			u.urls[suffix] = parsed
		}
	}
	if parsed, err := url.Parse(base); err == nil {
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
		u.maxConcurrency = p.MaxConcurrency
		u.limiter = newLimiter(p.MaxConcurrency, p.Queue)
	}
	return u
}

// setAuth puts the provider's credential on an upstream request, in the
// provider's own way. The client's credential is never forwarded.
func (u *upstream) setAuth(h http.Header) {
	if u.cloud != nil {
		return // the host's own credential (cloudHost.Authorize)
	}
	if u.kind == config.KindAnthropic {
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

// maxUpstreamHeaderBytes bounds an upstream response's header block (the
// status line and every header, HTTP/1 and HTTP/2 alike). Beyond it the
// round trip fails, which the attempt classifies as a transport fault: the
// request fails over and the client never sees the header. Providers send
// a few KiB; Go's own default, 10 MiB, would let one answer hold that much
// per attempt before any limit of the gateway applies.
const maxUpstreamHeaderBytes = 1 << 20

// NewTransport is the upstream HTTP transport: pooled keep-alive
// connections, HTTP/2 where offered, bodies passed as the provider sent
// them (no transparent gzip, so bytes are relayed unchanged), response
// headers bounded by maxUpstreamHeaderBytes.
func NewTransport() *http.Transport {
	return &http.Transport{
		MaxResponseHeaderBytes: maxUpstreamHeaderBytes,
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		DisableCompression:     true,
	}
}
