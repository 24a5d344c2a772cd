package router

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/internal/homes"
	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/preference"
	"github.com/firstbyte-dev/firstbyte/router/relay"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Options are the gateway's collaborators; zero values are usable.
type Options struct {
	// Stats is what the latency modes rank on (the collector's tracker).
	// Nil: only modes that do not rank on measurements can be used; a
	// latency mode refuses to start.
	Stats mode.StatsSource
	// ResponseHomes says which target stored a response this gateway did
	// not see stored (the collector's tracker, which learns it from peers'
	// spans), for a follow-up naming it (previous_response_id). Nil: only
	// the responses this gateway stored are known.
	ResponseHomes ResponseHomes
	// Rand drives the modes' shuffles and exploration. Nil: math/rand/v2's
	// goroutine-safe global source (package mode's default).
	Rand mode.Rand
	// TracerProvider makes the server and attempt spans. Nil: no spans (and
	// so nothing is learned).
	TracerProvider trace.TracerProvider
	// Transport carries upstream requests. Nil: upstream.NewTransports(nil).
	// An *upstream.Transports gives each provider the transport its http2
	// and tls settings ask for (pass the same one to every gateway of the
	// process, so a reload keeps the connections); any other RoundTripper
	// carries the requests of providers with the default settings, and a
	// transport of their own is made for the others.
	Transport http.RoundTripper
	// AWSCredentials, when set, is where bedrock providers that sign
	// (SigV4) get their credentials instead of the AWS default chain
	// (tests, benchmarks). It is read by the credential refresher only,
	// never on the request path. Nil: the default chain.
	AWSCredentials aws.CredentialsProvider
	// Now is the gateway's clock: span timestamps, the TTFB it measures and
	// circuit breakers all read it, so a test's fake clock makes latencies
	// exact. Nil: time.Now.
	Now func() time.Time
	// Logger receives operational events; never prompts or keys. Nil: discard.
	Logger *slog.Logger
	// DebugExtra adds members to /debug/routing's JSON (e.g. the foreign
	// services the aggregator learns from). Nil: none.
	DebugExtra func() map[string]any
	// LogRequests writes one line per client request to Logger, after its
	// answer has gone out (never a prompt, completion or key). Zero: none.
	LogRequests bool
	// Draining reports that the process is shutting down: every response
	// whose headers are written while it reports true carries
	// "Connection: close", so no client reuses a connection about to
	// close. Nil: never.
	Draining func() bool
	// Stop ends what is still open when the shutdown grace is over: a
	// stream gets an error event in its API's format instead of being cut,
	// a request still waiting for an upstream answer gets a 503. Nil:
	// never.
	Stop context.Context
	// OnPanic is told of every panic recovered while serving a request
	// (the request got a 500, or its stream an error event). Nil: none.
	OnPanic func()
	// StreamWriteTimeout bounds each write to a client: one that stops
	// reading for this long loses its connection, so it cannot hold a
	// handler and an upstream stream forever. Zero: DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// OnLargeAnswerDone is told when an answer that held at least
	// relay.LargeAnswerHeld bytes of the answer budget gives them back: what it
	// held is garbage now, which the process may want to return to the
	// operating system before the next one. It must not block. Nil: none.
	OnLargeAnswerDone func()
	// Previous is the gateway this one replaces on a reload: providers
	// whose config is unchanged keep their run-time state (circuit
	// breaker, concurrency slots) instead of starting afresh, and the
	// budget of bytes held for unary answers (limits.max_buffered) is the
	// same one, with the new limit. Nil: none.
	Previous *Gateway
}

// DefaultStreamWriteTimeout is Options.StreamWriteTimeout's zero value:
// far longer than any client that is still reading needs for one chunk.
const DefaultStreamWriteTimeout = 30 * time.Second

// Gateway is the request path: it authenticates, finds the eligible
// candidates, asks the strategy for their order and runs the attempt
// pipeline. Everything in it is immutable after New; a reload builds a new
// one.
type Gateway struct {
	awsCreds  aws.CredentialsProvider                 // Options.AWSCredentials
	routes    map[string]map[string][]*mode.Candidate // endpoint family -> client model -> candidates in declaration order
	models    []string                                // client-facing models, sorted
	upstreams map[string]*upstream.Provider
	targets   []*mode.Candidate // every candidate, declaration order (for the debug page)
	strategy  mode.Strategy
	// Routes and aliases (routes.go): the policy of each model a route
	// serves (absent: fallbackPolicy, the strategy's), aliases to their
	// models, and what /v1/models lists (models and aliases, sorted).
	policies       map[string]*policy
	fallbackPolicy *policy
	aliases        map[string]string
	listed         []string
	pref           *preference.Deps // what per-request preferences read
	stats          mode.StatsSource // nil in modes that need none
	mode           string
	tracer         trace.Tracer
	propagator     propagation.TextMapPropagator
	transport      http.RoundTripper
	now            func() time.Time
	fakeClock      bool // Options.Now was set: stamp spans with it
	log            *slog.Logger
	debugExtra     func() map[string]any
	maxBody        int64
	maxResponse    int64         // a unary answer larger than this is a provider fault
	budget         *relay.Budget // bytes held for unary answers (limits.max_buffered), shared across reloads
	keys           [][]byte
	providers      map[string]*config.Provider         // as configured, to hand state on to the next gateway
	pairs          map[pair]bool                       // every configured (target, upstream model)
	hedge          *mode.Hedging                       // strategy.hedge; nil: off
	affinity       *affinity.Table                     // who served which prompt prefix last
	homes          *homes.Map                          // who stored which response, as this gateway saw it (shared across reloads)
	sharedHomes    ResponseHomes                       // who stored which response, as the spans say; nil: none
	newTimer       func(time.Duration) hedgeTimer      // the race's timers: real ones, or a test's
	afterFunc      func(time.Duration, func()) timeout // an attempt's timeouts: real ones, or a test's

	handler      http.Handler // the client API: mux behind serveHTTP
	mux          *http.ServeMux
	logRequests  bool
	draining     func() bool
	stop         context.Context // nil: never
	onPanic      func()
	writeTimeout time.Duration
}

// pair is a (target, upstream model) the config routes to.
type pair struct{ target, model string }

// New builds a Gateway from a validated config.
func New(cfg *config.Config, o Options) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fakeClock := o.Now != nil
	o.setDefaults()
	strategy, err := mode.New(cfg.Strategy.Mode, mode.Deps{Stats: o.Stats, Rand: o.Rand, Now: o.Now})
	if err != nil {
		return nil, err
	}
	// One budget for the process: a reload's gateway takes the running
	// one's and sets its limit, so the answers still held by the old
	// gateway's requests count against the new limit.
	budget := relay.NewBudget(int64(cfg.Limits.MaxBuffered))
	if o.Previous != nil {
		budget = o.Previous.budget
		budget.SetLimit(int64(cfg.Limits.MaxBuffered))
	}
	budget.OnLarge(&o.OnLargeAnswerDone)
	g := &Gateway{
		routes:     map[string]map[string][]*mode.Candidate{},
		upstreams:  map[string]*upstream.Provider{},
		strategy:   strategy,
		stats:      o.Stats,
		mode:       cfg.Strategy.Mode,
		tracer:     o.TracerProvider.Tracer(telemetry.TracerName),
		propagator: propagation.TraceContext{},
		// Redirects are never followed: they would resend the body and
		// credential somewhere unplanned.
		transport:   o.Transport,
		now:         o.Now,
		fakeClock:   fakeClock,
		log:         o.Logger,
		debugExtra:  o.DebugExtra,
		maxBody:     int64(cfg.Limits.MaxBody),
		maxResponse: int64(cfg.Limits.MaxResponse),
		budget:      budget,
		providers:   cfg.Providers,
		pairs:       map[pair]bool{},

		logRequests:  o.LogRequests,
		draining:     o.Draining,
		stop:         o.Stop,
		onPanic:      o.OnPanic,
		writeTimeout: o.StreamWriteTimeout,
		awsCreds:     o.AWSCredentials,
	}
	for _, k := range cfg.Auth.Keys {
		g.keys = append(g.keys, []byte(k))
	}
	g.buildUpstreams(cfg, o.Previous)
	g.buildRoutes(cfg)
	g.hedge = mode.NewHedging(cfg.Strategy.Hedge, o.Stats, g.models)
	if err := g.buildPolicies(cfg, mode.Deps{Stats: o.Stats, Rand: o.Rand, Now: o.Now}); err != nil {
		return nil, err
	}
	if g.ranksOnLatency() {
		g.affinity = affinity.New(o.Stats) // the other modes keep their own order
	}
	g.homes, g.sharedHomes = homes.New(0, 0), o.ResponseHomes
	if o.Previous != nil {
		g.homes = o.Previous.homes // a reload forgets no stored response
	}
	g.newTimer, g.afterFunc = newRealTimer, realAfterFunc
	g.mux = g.newMux()
	g.handler = http.HandlerFunc(g.serveHTTP)
	return g, nil
}

// setDefaults fills the zero collaborators with their documented defaults.
func (o *Options) setDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TracerProvider == nil {
		o.TracerProvider = noop.NewTracerProvider()
	}
	if _, ok := o.Transport.(*upstream.Transports); !ok {
		o.Transport = upstream.NewTransports(o.Transport)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Draining == nil {
		o.Draining = func() bool { return false }
	}
	if o.OnPanic == nil {
		o.OnPanic = func() {}
	}
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
}

// buildUpstreams makes each provider's run-time state; a provider whose
// config is unchanged since prev (nil: none) keeps prev's (breaker,
// concurrency slots).
func (g *Gateway) buildUpstreams(cfg *config.Config, prev *Gateway) {
	o := upstream.Options{
		Transports:     g.transport.(*upstream.Transports),
		Now:            g.now,
		Suffixes:       upstreamSuffixes,
		AWSCredentials: g.awsCreds,
		Circuit: func(provider string, from, to upstream.CircuitState) {
			g.log.Warn("circuit "+to.String(), "provider", provider, "from", from.String(), "to", to.String())
		},
		Disabled: func(provider, model string, on bool, reason string) {
			what, args := "provider", []any{"provider", provider}
			if model != "" {
				what, args = "target", append(args, "model", model) // that upstream model only
			}
			if on {
				g.log.Error(what+" disabled: "+disabledWhy[reason]+"; one request probes it at a growing interval (30s doubling to 10m) until one succeeds, or a reload",
					append(args, "reason", reason)...)
				return
			}
			g.log.Info(what+" enabled again: its probe succeeded", append(args, "was", reason)...)
		},
	}
	for name, p := range cfg.Providers {
		if prev != nil && prev.upstreams[name] != nil && reflect.DeepEqual(prev.providers[name], p) {
			u := prev.upstreams[name]                 // same provider: same breaker, slots and cooldown
			u.ResetDisabled(func(model, was string) { // a reload gives a disabled target a fresh start
				g.log.Info("enabled again by the reload", "provider", name, "model", model, "was", was)
			})
			g.upstreams[name] = u
			continue
		}
		o.API, o.Stop, o.Logger = cfg.ProviderAPI(name), g.stop, g.log
		g.upstreams[name] = upstream.New(name, p, o)
	}
	if prev != nil {
		for name, u := range prev.upstreams {
			if g.upstreams[name] != u {
				u.Close() // dropped by the reload: its credential refresher ends
			}
		}
	}
}

// buildRoutes makes the candidates of every target and client model, and
// files each under the endpoint families its provider's kind serves.
func (g *Gateway) buildRoutes(cfg *config.Config) {
	seen := map[string]bool{}
	for i, t := range cfg.Targets {
		u := g.upstreams[t.VirtualKey]
		served := t.Routes(cfg.Providers[t.VirtualKey])
		for _, m := range slices.Sorted(maps.Keys(served)) {
			c := &mode.Candidate{Target: t.VirtualKey, Model: served[m], Index: i, Weight: t.EffectiveWeight(), Tries: 1 + t.Retry.Attempts, Upstream: u, SpanNames: map[string]string{}}
			c.Guard = u.Model(c.Model)
			if cfg.ResponseModel == config.ResponseModelRequested {
				c.AnswerModel = m
			}
			if p, ok := cfg.Providers[t.VirtualKey].Pricing[c.Model]; ok {
				c.Price, c.Priced = p.Input+p.Output, true
			}
			for _, ep := range endpoints {
				c.SpanNames[ep.operation] = ep.operation + " " + c.Model
			}
			for _, f := range families {
				if slices.Contains(f.kinds, u.Kind) && u.ServesFamily(f.name) {
					byModel := g.routes[f.name]
					if byModel == nil {
						byModel = map[string][]*mode.Candidate{}
						g.routes[f.name] = byModel
					}
					byModel[m] = append(byModel[m], c)
				}
			}
			g.targets = append(g.targets, c)
			g.pairs[pair{c.Target, c.Model}] = true
			if !seen[m] {
				seen[m] = true
				g.models = append(g.models, m)
			}
		}
	}
	sort.Strings(g.models)
}

// disabledWhy says what each disabling reason means, for the log.
var disabledWhy = map[string]string{
	fault.ErrorAuth:        "it refuses the gateway's credential (401, or a 403 coded so; for one model only, an AccessDeniedException or permission_error: the key may not use it): check its api_key and what it may use",
	fault.ErrorQuota:       "its account has no credit or quota left (402, insufficient_quota, a credit-balance error)",
	fault.ErrorModelAccess: "it refuses the key this upstream model (model_not_found): check the model name and the key's access to it",
}

// Serves reports whether the config routes to upstreamModel on target: a
// reload keeps the tracker's samples of exactly these pairs.
func (g *Gateway) Serves(target, upstreamModel string) bool {
	return g.pairs[pair{target, upstreamModel}]
}

// timestamp stamps a span with the gateway's clock when a test injected
// one; with the real clock it passes the zero time, which the SDK replaces
// with its own stamp, through one shared option that costs no allocation.
func (g *Gateway) timestamp() trace.SpanEventOption {
	if !g.fakeClock {
		return sdkTimestamp
	}
	return trace.WithTimestamp(g.now())
}

var sdkTimestamp = trace.WithTimestamp(time.Time{})

// since is time elapsed on the gateway's clock.
func (g *Gateway) since(t time.Time) time.Duration { return g.now().Sub(t) }

// Handler is the client API: the OpenAI and Anthropic endpoints and the
// model list, with every answer in the caller's API shape.
func (g *Gateway) Handler() http.Handler { return g.handler }

func (g *Gateway) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, ep := range endpoints {
		mux.Handle("POST "+ep.path, g.apiHandler(ep))
		mux.Handle(ep.path, methodNotAllowed(ep.shape, http.MethodPost))
	}
	mux.HandleFunc("GET /v1/models", g.listModels)
	mux.HandleFunc("GET /v1/models/{id...}", g.getModel)
	mux.Handle("/v1/models", methodNotAllowed(shapeOpenAI, http.MethodGet))
	// Anything else gets a 404 an SDK can parse, in the shape its path implies.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, shapeForPath(r.URL.Path), http.StatusNotFound, errTypeNotFound, "unknown_url", "no route for "+r.Method+" "+reqbody.Quote(r.URL.Path))
	})
	return mux
}

func methodNotAllowed(shape apiShape, allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, shape, http.StatusMethodNotAllowed, errTypeInvalidRequest, "method_not_allowed", r.Method+" is not allowed here; use "+allow)
	})
}

func shapeForPath(path string) apiShape {
	if strings.HasPrefix(path, "/v1/messages") {
		return shapeAnthropic
	}
	return shapeOpenAI
}

// authorized checks the client key when auth.keys is set, in constant time.
func (g *Gateway) authorized(r *http.Request) bool {
	if len(g.keys) == 0 {
		return true
	}
	key := r.Header.Get("x-api-key")
	if auth := r.Header.Get("Authorization"); key == "" && len(auth) > 7 && (auth[:7] == "Bearer " || auth[:7] == "bearer ") {
		key = auth[7:]
	}
	if key == "" {
		return false
	}
	ok := 0
	for _, k := range g.keys {
		ok |= subtle.ConstantTimeCompare([]byte(key), k)
	}
	return ok == 1
}

func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(r) {
		writeError(w, shapeOpenAI, http.StatusUnauthorized, errTypeAuth, "invalid_api_key", "missing or invalid API key")
		return
	}
	b := []byte(`{"object":"list","data":[`)
	for i, m := range g.listed {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonscan.AppendString(b, m)
		b = append(b, `,"object":"model","created":0,"owned_by":"firstbyte"}`...)
	}
	b = append(b, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// getModel answers GET /v1/models/{id}, which some frameworks call to check
// a model before using it.
func (g *Gateway) getModel(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(r) {
		writeError(w, shapeOpenAI, http.StatusUnauthorized, errTypeAuth, "invalid_api_key", "missing or invalid API key")
		return
	}
	id := r.PathValue("id")
	if _, ok := slices.BinarySearch(g.listed, id); !ok {
		writeError(w, shapeOpenAI, http.StatusNotFound, errTypeNotFound, "model_not_found", "model "+reqbody.Quote(id)+" is not served by this gateway")
		return
	}
	b := append([]byte(`{"id":`), jsonscan.AppendString(nil, id)...)
	b = append(b, `,"object":"model","created":0,"owned_by":"firstbyte"}`+"\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// Models lists the client-facing models, sorted.
func (g *Gateway) Models() []string { return append([]string(nil), g.models...) }

// Candidates lists every (target, client model) candidate, in declaration
// order: what the aggregator may learn about, and nothing else.
func (g *Gateway) Candidates() []*mode.Candidate { return append([]*mode.Candidate(nil), g.targets...) }

// BufferedBytes is how many bytes unary answers hold of the budget
// (limits.max_buffered) now: this gateway's and those of every gateway a
// reload replaced, whose requests may still be in flight.
func (g *Gateway) BufferedBytes() int64 { return g.budget.Held() }
