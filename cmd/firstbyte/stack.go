package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/conn"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The tracker is what the router's modes rank on: checked here, where the
// two are wired, so a change to either side fails the build.
var _ mode.StatsSource = (*collector.Tracker)(nil)

var _ router.ResponseHomes = (*collector.Tracker)(nil)

// stack is one running gateway: the client API and admin servers, the
// gateway (replaced whole by a reload), the tracker it learns from (kept
// across reloads), the SDK feeding it, and the metrics.
type stack struct {
	// Immutable after startStack.
	Tracker    *collector.Tracker
	SDK        *telemetry.SDK
	Registry   *prometheus.Registry
	APIAddr    string
	AdminAddr  string
	configPath string // what a reload reads; "" for a stack built from text (the demo): no reload
	log        *slog.Logger
	level      *slog.LevelVar // nil: the level is not the stack's to change
	transport  http.RoundTripper
	trim       *memTrim // counts API requests for the idle trim; nil: none
	api, admin *http.Server
	apiLn      net.Listener                // what api serves (closed by the drain)
	adminLn    net.Listener                // what admin serves
	conns      *connTracker                // both servers' connections, for the drain
	serving    sync.WaitGroup              // the two Serve loops
	telemetry  func(context.Context) error // flushes and stops the SDK
	warns      []*rateLimitedWarn          // closed last, after everything that may note
	exportWarn *rateLimitedWarn
	// ingestWarn is for the ingest handler's rejections (the reason as
	// detail, the spans refused as amount), once the handler reports them.
	ingestWarn *rateLimitedWarn
	reloads    *prometheus.CounterVec
	panics     prometheus.Counter
	agg        *collector.Aggregator // learns what each config's targets are (teachAggregator)
	metrics    *collector.Metrics    // and counts cost by their rate cards
	stop       context.Context       // ends when the shutdown grace is over (router.Options.Stop)
	endStreams context.CancelFunc    // ends stop

	ready    atomic.Bool // serving, and not draining
	draining atomic.Bool // a SIGTERM came: responses carry Connection: close
	gw       atomic.Pointer[router.Gateway]
	cfg      atomic.Pointer[config.Config]

	reloadMu sync.Mutex // one reload at a time, and none once the drain began
}

type stackOptions struct {
	Logger     *slog.Logger
	Level      *slog.LevelVar    // the Logger's level, for reloads to move; nil: fixed
	Transport  http.RoundTripper // nil: upstream.NewTransports(nil)
	ConfigPath string            // the file reloads read; "": reload is refused
	Trim       *memTrim          // told of every API request (memtrim.go); nil: none
}

// startStack wires and starts everything a config describes. The order is
// the data flow: tracker <- aggregator <- span processor <- gateway.
func startStack(ctx context.Context, cfg *config.Config, o stackOptions) (*stack, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &stack{configPath: o.ConfigPath, log: o.Logger, level: o.Level, transport: o.Transport, trim: o.Trim}
	s.stop, s.endStreams = context.WithCancel(context.Background())
	s.exportWarn = newRateLimitedWarn(o.Logger, "telemetry export failed", "spans_dropped", warnInterval)
	otelWarn := newRateLimitedWarn(o.Logger, "telemetry error", "", warnInterval)
	serverWarn := newRateLimitedWarn(o.Logger, "http server error", "", warnInterval)
	s.ingestWarn = newRateLimitedWarn(o.Logger, "ingest rejected spans", "spans", warnInterval)
	s.warns = []*rateLimitedWarn{s.exportWarn, otelWarn, serverWarn, s.ingestWarn}
	// The SDK reports its own errors through the global OTel error handler:
	// into our log, rate-limited, instead of stderr.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { otelWarn.note(0, err.Error()) }))

	reg := collector.NewRegistry()
	metrics := collector.NewMetrics(reg)
	lc := collector.NewLifecycle(reg)
	s.reloads, s.panics = lc.Reloads, lc.Panics

	tracker := collector.NewTracker(collector.TrackerOptions{})
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{
		// Peers' and applications' spans; this process's own are counted
		// by metrics (Observers below), off the request path.
		OnSpan:   metrics.SpanConsumed,
		OnReject: s.ingestRejected(metrics),
	})
	s.agg, s.metrics = agg, metrics
	sdk, sdkShutdown, err := telemetry.Setup(ctx, telemetry.Options{
		ServiceName:    cfg.Telemetry.ServiceName,
		ServiceVersion: version,
		OTLPEndpoint:   cfg.Telemetry.OTLPEndpoint,
		Aggregator:     agg,
		Observers:      metrics,
		OnDrop:         metrics.SpansDropped,
		OnExportError: func(spans int, err error) {
			metrics.ExportFailed(spans)
			s.exportWarn.note(spans, err.Error())
		},
	})
	if err != nil {
		return nil, err
	}
	// The aggregator skips exactly the service.instance.id this process
	// exports under: the SDK's resource's, after OTEL_RESOURCE_ATTRIBUTES
	// (percent-decoded) had its say.
	agg.SetInstanceID(sdk.InstanceID)
	s.telemetry = sdkShutdown
	s.Tracker, s.SDK, s.Registry = tracker, sdk, reg

	gw, err := router.New(cfg, s.gatewayOptions(cfg, nil))
	if err != nil {
		_ = sdkShutdown(ctx)
		return nil, err
	}
	s.gw.Store(gw)
	s.cfg.Store(cfg)
	s.teachAggregator(cfg, gw)
	reg.MustRegister(collector.NewRoutingCollector(func() []collector.RoutingRow { return routingRows(s.current().Routing()) }))
	collector.RegisterBufferedBytes(reg, func() int64 { return s.current().BufferedBytes() })

	adminMux := s.adminMux(reg)
	if cfg.Telemetry.Ingest.Enabled {
		adminMux.Handle("POST /v1/traces", collector.NewIngestHandler(agg, collector.IngestOptions{
			Token: cfg.Telemetry.Ingest.Token, OnReject: s.ingestRejected(metrics),
		}))
	}

	apiLn, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = sdkShutdown(ctx)
		return nil, err
	}
	adminLn, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		apiLn.Close()
		_ = sdkShutdown(ctx)
		return nil, err
	}
	s.APIAddr, s.AdminAddr = apiLn.Addr().String(), adminLn.Addr().String()
	errLog := errorLog(serverWarn)
	s.api = newServer(s.apiHandler(), cfg.Limits, errLog)
	s.admin = newServer(closingWhileDraining(adminMux, s.draining.Load), cfg.Limits, errLog)
	s.apiLn = conn.ReasonPhrases(s.api, conn.GuardFraming(s.api, newLimitListener(apiLn, cfg.Limits.MaxConnections)))
	s.adminLn = newLimitListener(adminLn, cfg.Limits.MaxConnections)
	s.conns = newConnTracker()
	s.conns.track(s.api)
	s.conns.track(s.admin)
	s.serving.Add(2)
	go s.serve(s.api, s.apiLn, "api")
	go s.serve(s.admin, s.adminLn, "admin")
	s.ready.Store(true)
	return s, nil
}

// serve runs one server until the drain closes its listener (its
// connections are served on until they close).
func (s *stack) serve(srv *http.Server, ln net.Listener, name string) {
	defer s.serving.Done()
	err := srv.Serve(ln)
	if s.draining.Load() && errors.Is(err, net.ErrClosed) {
		return
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("listener failed", "listener", name, "err", err)
	}
}

// apiHandler is the client API. It reads the gateway afresh for every
// request: a reload swaps it, requests in flight finish on the one they
// started with. The idle trim (memtrim.go) is told of each request.
func (s *stack) apiHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.trim != nil {
			s.trim.begin()
			defer s.trim.end()
		}
		s.current().Handler().ServeHTTP(w, r)
	})
}

// current is the gateway serving new requests now.
func (s *stack) current() *router.Gateway { return s.gw.Load() }

// config is the config in force now.
func (s *stack) config() *config.Config { return s.cfg.Load() }

// gatewayOptions are the router's collaborators for a gateway built from
// cfg, replacing prev (nil at start).
func (s *stack) gatewayOptions(cfg *config.Config, prev *router.Gateway) router.Options {
	return router.Options{
		Stats:          s.Tracker,
		ResponseHomes:  s.Tracker, // stored responses' targets, as this instance's and peers' spans say
		TracerProvider: s.SDK.TracerProvider,
		Transport:      s.transportFor(),
		Logger:         s.log,
		LogRequests:    cfg.Log.LogRequests(),
		Draining:       s.draining.Load,
		Stop:           s.stop,
		OnPanic:        s.panics.Inc,
		OnLargeAnswerDone: func() {
			if s.trim != nil {
				s.trim.largeAnswerDone()
			}
		},
		Previous: prev,
		DebugExtra: func() map[string]any {
			return map[string]any{"foreign_services": s.agg.ForeignSources()}
		},
	}
}

// teachAggregator tells the aggregator what gw routes to: peers' and
// applications' spans may teach nothing else, and foreign spans follow the
// config's rules. Called at start and on every reload, which may change
// telemetry.ingest.foreign.
func (s *stack) teachAggregator(cfg *config.Config, gw *router.Gateway) {
	ts := aggregatorTargets(cfg, gw)
	s.agg.SetTargets(ts)
	s.metrics.SetPrices(ts)
	f := cfg.Telemetry.Ingest.Foreign
	s.agg.SetForeign(collector.ForeignOptions{Enabled: f.Enabled, Services: f.Services, UnaryServices: f.UnaryServices})
}

// ingestRejected counts what the ingest refused and warns about it,
// rate-limited.
func (s *stack) ingestRejected(metrics *collector.Metrics) func(reason string, spans int) {
	return func(reason string, spans int) {
		metrics.IngestRejected(reason, spans)
		s.ingestWarn.note(max(spans, 1), reason)
	}
}

// transportFor is the upstream transports: one set for the process, so
// a reload keeps the upstream connections it has.
func (s *stack) transportFor() http.RoundTripper {
	if _, ok := s.transport.(*upstream.Transports); !ok {
		s.transport = upstream.NewTransports(s.transport)
	}
	return s.transport
}

// aggregatorTargets is the gateway's (target, upstream model) pairs as the
// aggregator takes them: peers' spans may teach nothing else, and nothing
// longer than the provider's total timeout (a unary answer's sample is its
// whole answer, which timeout.total bounds).
func aggregatorTargets(cfg *config.Config, gw *router.Gateway) []collector.Target {
	var ts []collector.Target
	for _, c := range gw.Candidates() {
		kind, host, port := c.Provider()
		p := cfg.Providers[c.Target] // a candidate's provider is always configured
		t := collector.Target{Name: c.Target, Model: c.Model, Host: host, Port: port, Kind: kind, LongestSample: p.Timeout.Total}
		if p, ok := p.Pricing[c.Model]; ok {
			t.Price, t.Priced = collector.TokenPrice{Input: p.Input, Output: p.Output}, true
		}
		ts = append(ts, t)
	}
	return ts
}

// routingRows is the router's view of every model and target as the
// routing gauges export it.
func routingRows(models []routingview.Model) []collector.RoutingRow {
	var rows []collector.RoutingRow
	for _, m := range models {
		for _, t := range m.Targets {
			row := collector.RoutingRow{
				Model: m.Model, Target: t.Target, P50Seconds: t.P50Seconds, Samples: t.Samples,
				Leader: t.Leader, CircuitOpen: t.CircuitOpen, FaultRate: t.FaultRate, Outcomes: t.Outcomes,
				Disabled: t.Disabled, RateLimitedUntil: t.RateLimitedUntil,
			}
			if p := t.Completion; p != nil && p.Measured {
				row.PredictedCompletionSeconds, row.HasPrediction = p.Seconds, true
			}
			if r := t.OutputRate; r != nil {
				row.RateSamples, row.OutputRate = r.Samples, [4]float64{r.P50, r.P75, r.P90, r.P99}
			}
			rows = append(rows, row)
		}
	}
	return rows
}
