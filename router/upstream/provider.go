package upstream

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// Provider is a provider at run time: where it is, how it authenticates,
// and the guards shared by every target that uses it: its circuit breaker,
// concurrency limit, rate-limit cooldown and disabled state.
type Provider struct {
	// immutable after New: read them, never write them
	Kind         string // the wire format sent: openai or anthropic (a cloud host's call's)
	ProviderName string // gen_ai.provider.name: the config kind's (GenAIProvider)
	// Cloud is a cloud host's adapter (azure, bedrock, vertex); nil for an
	// openai or anthropic provider.
	Cloud *Cloud
	// Headers are providers.X.headers (canonical names), put on every
	// request; nil: none. The query parameters are in every URL already.
	Headers   http.Header
	Responses bool // serves the Responses API itself (providers.X.responses)
	APIKey    string
	Host      string // server.address
	Port      int    // server.port
	FirstByte time.Duration
	Idle      time.Duration
	Total     time.Duration
	Now       func() time.Time
	Breaker   *Breaker
	Limiter   *Limiter // nil: unlimited
	// MaxConcurrency is its configured cap (0: none): a request beyond it
	// waits its turn, which the latency modes count.
	MaxConcurrency int
	// Transport carries its requests, as its http2 and tls settings ask.
	// Nil: the gateway's.
	Transport http.RoundTripper
	urls      map[string]*url.URL // endpoint suffix -> upstream URL, built once

	// inflight is its attempts in flight from this gateway, exactly: every
	// attempt the routes hand out counts until it is resolved.
	inflight atomic.Int64
	off      disabler // its credential or quota failed

	maxCooldown time.Duration                              // immutable: rate_limit.max_cooldown
	onDisabled  func(model string, on bool, reason string) // immutable; nil: none
	guardsMu    sync.Mutex                                 // guards guards
	guards      map[string]*Model                          // by upstream model
	// wrongURLs are the URLs of it that answered that they do not exist,
	// each warned of once (FirstWrongURL).
	wrongURLs sync.Map
}

// Model is the state of one (provider, upstream model) that the
// provider's answers for that model set: providers limit, and grant
// access to, each model apart. Every candidate of the provider that asks
// for the model shares it.
type Model struct {
	p     *Provider // immutable: the provider it belongs to
	cool  cooldown  // until when its rate limits keep it away
	allow allowance // what remains of its request limit
	off   disabler  // the provider refused the key this model
}

// Model is the state of (u, model), made on first use (when the routes
// are built) and kept while the provider is: a reload that keeps the
// provider keeps its models' cooldowns.
func (u *Provider) Model(model string) *Model {
	u.guardsMu.Lock()
	defer u.guardsMu.Unlock()
	if g := u.guards[model]; g != nil {
		return g
	}
	g := &Model{p: u, cool: cooldown{max: u.maxCooldown}}
	if on := u.onDisabled; on != nil {
		g.off.onChange = func(enabled bool, reason string) { on(model, enabled, reason) }
	}
	if u.guards == nil {
		u.guards = map[string]*Model{}
	}
	u.guards[model] = g
	return g
}

// ResetDisabled enables the provider and every model of it for a reload
// (the operator may have fixed what disabled them), telling enabled of
// each that was disabled (model "" for the provider itself).
func (u *Provider) ResetDisabled(enabled func(model, was string)) {
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

// URL is where requests to the endpoint suffix go on this provider (nil:
// not one of the suffixes it was built with).
func (u *Provider) URL(suffix string) *url.URL { return u.urls[suffix] }

// FirstWrongURL reports whether this is the first time where answered
// that it does not exist: each such URL is warned of once.
func (u *Provider) FirstWrongURL(where string) bool {
	_, seen := u.wrongURLs.LoadOrStore(where, true)
	return !seen
}

// Inflight is its attempts in flight from this gateway now.
func (u *Provider) Inflight() int64 { return u.inflight.Load() }

// Started counts an attempt out to it and returns how many are in flight
// with it now; Ended must follow on every path.
func (u *Provider) Started() int64 { return u.inflight.Add(1) }

// Ended counts an attempt that Started counted as over.
func (u *Provider) Ended() { u.inflight.Add(-1) }

// Options are what New needs beyond the provider's config; nil funcs:
// none.
type Options struct {
	Now func() time.Time
	// Suffixes are the endpoint suffixes its URLs are built for, once
	// (base_url + suffix).
	Suffixes []string
	// Circuit is told of each circuit state change.
	Circuit func(provider string, from, to CircuitState)
	// Disabled: the provider (model "") or one of its upstream models
	// was disabled (on) or enabled again.
	Disabled func(provider, model string, on bool, reason string)
	// Transports gives the provider the transport its http2 and tls
	// settings ask for. Nil: none of its own (Provider.Transport nil).
	Transports *Transports
	// API is the call a cloud provider's models go through
	// (config.Config.ProviderAPI); "" for openai and anthropic.
	API string
	// Stop ends a cloud provider's credential refresher (with Close); nil:
	// only Close does.
	Stop context.Context
	// Logger gets a credential's failures, one line per run of them.
	Logger *slog.Logger
	// AWSCredentials, when set, is where a signing bedrock provider gets
	// its credentials instead of the AWS default chain
	// (HostOptions.AWSCredentials).
	AWSCredentials aws.CredentialsProvider
}

// New builds a provider's run-time state.
func New(name string, p *config.Provider, o Options) *Provider {
	now := o.Now
	base := strings.TrimRight(p.BaseURL, "/")
	u := &Provider{
		Kind:      p.Kind,
		Responses: p.ServesResponses(),
		APIKey:    p.APIKey,
		FirstByte: p.Timeout.FirstByte,
		Idle:      p.Timeout.Idle,
		Total:     p.Timeout.Total,
		Now:       now,

		maxCooldown: p.RateLimit.MaxCooldown,
	}
	if o.Disabled != nil {
		u.off.onChange = func(on bool, reason string) { o.Disabled(name, "", on, reason) }
		u.onDisabled = func(model string, on bool, reason string) { o.Disabled(name, model, on, reason) }
	}
	onCircuit := o.Circuit
	var onChange func(from, to CircuitState)
	if onCircuit != nil {
		onChange = func(from, to CircuitState) { onCircuit(name, from, to) }
	}
	u.Breaker = newBreaker(p.CircuitBreaker.Failures, p.CircuitBreaker.Cooldown, now, onChange)
	if o.Transports != nil {
		u.Transport = o.Transports.For(p)
	}
	u.urls = map[string]*url.URL{}
	for _, suffix := range o.Suffixes {
		if parsed, err := url.Parse(base + suffix); err == nil {
			u.urls[suffix] = parsed
		}
	}
	if parsed, err := url.Parse(base); err == nil {
		u.Host = parsed.Hostname()
		if port, err := strconv.Atoi(parsed.Port()); err == nil {
			u.Port = port
		} else if parsed.Scheme == "https" {
			u.Port = 443
		} else {
			u.Port = 80
		}
	}
	if p.MaxConcurrency > 0 {
		u.MaxConcurrency = p.MaxConcurrency
		u.Limiter = newLimiter(p.MaxConcurrency, p.Queue)
	}
	u.ProviderName = p.Kind
	query := u.setExtras(p)
	if p.Kind != config.KindOpenAI && p.Kind != config.KindAnthropic {
		u.useCloud(name, p, query, o)
	}
	return u
}

// SetAuth puts the provider's credential on an upstream request, in the
// provider's own way. The client's credential is never forwarded.
func (u *Provider) SetAuth(h http.Header) {
	if u.Cloud != nil {
		return // the host's own credential (Cloud.Authorize)
	}
	if u.Kind == config.KindAnthropic {
		// Anthropic refuses a request without a version; clients that
		// name none get the one its API documents as the baseline.
		if h.Get("Anthropic-Version") == "" {
			h["Anthropic-Version"] = defaultAnthropicVersion
		}
		if u.APIKey != "" {
			h["X-Api-Key"] = []string{u.APIKey}
		}
		return
	}
	if u.APIKey != "" {
		h["Authorization"] = []string{"Bearer " + u.APIKey}
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
		HTTP2:                  &http.HTTP2Config{SendPingTimeout: h2PingAfter, PingTimeout: h2PingTimeout},
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		DisableCompression:     true,
	}
}
