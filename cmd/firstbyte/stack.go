package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The tracker is what the router's modes rank on: checked here, where the
// two are wired, so a change to either side fails the build.
var _ router.StatsSource = (*collector.Tracker)(nil)

// stack is one running gateway: the client API and admin servers, the
// gateway, the tracker it learns from, the SDK feeding it, and the metrics.
type stack struct {
	Gateway   *router.Gateway
	Tracker   *collector.Tracker
	SDK       *telemetry.SDK
	Registry  *prometheus.Registry
	APIAddr   string
	AdminAddr string

	ready    atomic.Bool
	api      *http.Server
	admin    *http.Server
	shutdown []func(context.Context) error
}

type stackOptions struct {
	Logger    *slog.Logger
	Transport http.RoundTripper // nil: router.NewTransport()
}

// startStack wires and starts everything a config describes. The order is
// the data flow: tracker <- aggregator <- span processor <- gateway.
func startStack(ctx context.Context, cfg *router.Config, o stackOptions) (*stack, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &stack{}
	// The SDK reports export failures through the global OTel error handler;
	// send them to our log, once per failed batch, instead of stderr.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { o.Logger.Warn("telemetry export", "err", err) }))
	reg := telemetry.NewRegistry()
	metrics := collector.NewMetrics(reg)
	tracker := collector.NewTracker(collector.TrackerOptions{})
	// The aggregator must skip exactly the instance id this process exports
	// under, including one set through OTEL_RESOURCE_ATTRIBUTES.
	instanceID := telemetry.InstanceIDFromEnv(os.Getenv)
	agg := collector.NewAggregator(tracker, collector.AggregatorOptions{
		InstanceID: instanceID,
		OnSpan:     metrics.SpanConsumed,
		OnReject:   metrics.IngestRejected,
	})
	sdk, sdkShutdown, err := telemetry.Setup(ctx, telemetry.Options{
		ServiceName:    cfg.Telemetry.ServiceName,
		ServiceVersion: version,
		InstanceID:     instanceID,
		OTLPEndpoint:   cfg.Telemetry.OTLPEndpoint,
		Aggregator:     agg,
		Observers:      metrics,
		OnDrop:         metrics.SpansDropped,
		OnExportError:  metrics.ExportFailed,
	})
	if err != nil {
		return nil, err
	}
	s.shutdown = append(s.shutdown, sdkShutdown)

	gw, err := router.New(cfg, router.Options{
		Stats:          tracker,
		TracerProvider: sdk.TracerProvider,
		Transport:      o.Transport,
		Logger:         o.Logger,
		DebugExtra: func() map[string]any {
			return map[string]any{"foreign_services": agg.ForeignSources()}
		},
	})
	if err != nil {
		_ = sdkShutdown(ctx)
		return nil, err
	}
	agg.SetTargets(aggregatorTargets(gw))
	f := cfg.Telemetry.Ingest.Foreign
	agg.SetForeign(collector.ForeignOptions{Enabled: f.Enabled, Services: f.Services, UnaryServices: f.UnaryServices})
	reg.MustRegister(telemetry.NewRoutingCollector(gw.RoutingRows))
	s.Gateway, s.Tracker, s.SDK, s.Registry = gw, tracker, sdk, reg

	adminMux := http.NewServeMux()
	adminMux.Handle("GET /metrics", telemetry.MetricsHandler(reg))
	adminMux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	adminMux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	adminMux.Handle("GET /debug/routing", gw.RoutingHandler())
	if cfg.Telemetry.Ingest.Enabled {
		adminMux.Handle("POST /v1/traces", collector.NewIngestHandler(agg, collector.IngestOptions{
			Token: cfg.Telemetry.Ingest.Token, OnReject: metrics.IngestRejected,
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
	errLog := slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)
	s.api = &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, ErrorLog: errLog}
	s.admin = &http.Server{Handler: adminMux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	go func() { _ = s.api.Serve(apiLn) }()
	go func() { _ = s.admin.Serve(adminLn) }()
	s.ready.Store(true)
	return s, nil
}

// Shutdown drains: readiness off, the API server finishes in-flight
// requests, then the SDK flushes its spans and the admin server stops.
func (s *stack) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	errs := []error{s.api.Shutdown(ctx)}
	for _, f := range s.shutdown {
		errs = append(errs, f(ctx))
	}
	errs = append(errs, s.admin.Shutdown(ctx))
	return errors.Join(errs...)
}

// aggregatorTargets is the gateway's (target, upstream model) pairs as the
// aggregator takes them: peers' spans may teach nothing else.
func aggregatorTargets(gw *router.Gateway) []collector.Target {
	var ts []collector.Target
	for _, c := range gw.Candidates() {
		kind, host, port := c.Provider()
		ts = append(ts, collector.Target{Name: c.Target, Model: c.Model, Host: host, Port: port, Kind: kind})
	}
	return ts
}
