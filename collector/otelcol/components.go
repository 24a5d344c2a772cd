package main

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.uber.org/zap/zapcore"

	"github.com/firstbyte-dev/firstbyte/collector/otelcol/keyratelimitprocessor"
)

// Go module of each component, shown by `firstbyte-otelcol components`.
// Every collector module is pinned to one release (see README.md).
const (
	coreRelease = "v0.165.0" // the 0.x collector modules
	otelcolPath = "go.opentelemetry.io/collector/"
	ownPath     = "github.com/firstbyte-dev/firstbyte/collector/otelcol/"
)

// components returns the factories this distribution is built with: the
// OTLP receiver, the batch and memory_limiter processors and our own
// firstbyte_ratelimit, and the OTLP (HTTP and gRPC) and debug exporters.
// No extensions and no connectors.
func components() (otelcol.Factories, error) {
	var err error
	factories := otelcol.Factories{Telemetry: quietTelemetry{otelconftelemetry.NewFactory()}}

	factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
	)
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ReceiverModules = map[component.Type]string{
		otlpreceiver.NewFactory().Type(): otelcolPath + "receiver/otlpreceiver " + coreRelease,
	}

	factories.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
		keyratelimitprocessor.NewFactory(),
	)
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ProcessorModules = map[component.Type]string{
		batchprocessor.NewFactory().Type():         otelcolPath + "processor/batchprocessor " + coreRelease,
		memorylimiterprocessor.NewFactory().Type(): otelcolPath + "processor/memorylimiterprocessor " + coreRelease,
		keyratelimitprocessor.Type:                 ownPath + "keyratelimitprocessor (this module)",
	}

	// MakeFactoryMap also registers the deprecated type names: otlp_http is
	// still accepted as "otlphttp", otlp_grpc as "otlp".
	factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		otlphttpexporter.NewFactory(),
		otlpexporter.NewFactory(),
		debugexporter.NewFactory(),
	)
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ExporterModules = map[component.Type]string{
		otlphttpexporter.NewFactory().Type(): otelcolPath + "exporter/otlphttpexporter " + coreRelease,
		otlpexporter.NewFactory().Type():     otelcolPath + "exporter/otlpexporter " + coreRelease,
		debugexporter.NewFactory().Type():    otelcolPath + "exporter/debugexporter " + coreRelease,
	}

	return factories, nil
}

// quietTelemetry is the upstream telemetry factory with quieter defaults for
// the collector's own telemetry, so that a config without a
// service::telemetry section neither serves a Prometheus endpoint (upstream
// binds localhost:8888, which also collides when several collectors run on
// one machine) nor logs every start-up step:
//
//   - metrics: level none, no readers. To turn them on, set
//     service::telemetry::metrics::level and a reader on 127.0.0.1.
//   - logs: level warn, without stack traces (a failed export is one line,
//     not twenty). Set service::telemetry::logs::level: info for the
//     start-up lines.
//
// Everything else, and every field a config sets, is upstream's.
// Embedding the interface is what lets this type satisfy telemetry.Factory,
// whose unexported method forbids implementing it from scratch.
type quietTelemetry struct {
	telemetry.Factory
}

var _ telemetry.Factory = quietTelemetry{}

// CreateDefaultConfig returns upstream's default with the changes above.
func (f quietTelemetry) CreateDefaultConfig() component.Config {
	cfg := f.Factory.CreateDefaultConfig()
	c, ok := cfg.(*otelconftelemetry.Config)
	if !ok {
		return cfg // an upstream change; keep its defaults rather than guess
	}
	c.Logs.Level = zapcore.WarnLevel
	c.Logs.DisableStacktrace = true
	c.Metrics.Level = configtelemetry.LevelNone
	c.Metrics.Readers = nil
	return c
}
