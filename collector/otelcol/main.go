// Command firstbyte-otelcol is an OpenTelemetry Collector built from the
// upstream go.opentelemetry.io/collector modules with only what firstbyte
// needs: an OTLP receiver (gRPC and HTTP), the batch and memory_limiter
// processors, our own firstbyte_ratelimit (keyratelimitprocessor), and
// OTLP/HTTP, OTLP/gRPC and debug exporters.
//
// It receives the spans that firstbyte instances export and, with
// config/fanout.yaml, fans them out to every instance's admin
// POST /v1/traces. It lives in its own Go module so that the
// gateway binary does not link the collector.
//
// It must not listen on anything but loopback unless a config says so, and
// its own telemetry is quiet by default (see quietTelemetry).
package main

import (
	_ "embed"
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// version is the distribution's version, shown by --version; override with
// -ldflags "-X main.version=...". The default names the collector release
// it is built from.
var version = "0.165.0-firstbyte"

// defaultConfig is used when no --config flag is given: the single-collector
// setup that prints the spans it receives.
//
//go:embed config/single.yaml
var defaultConfig string

func main() {
	if err := otelcol.NewCommand(settings()).Execute(); err != nil {
		log.Fatal(err)
	}
}

// settings builds the collector settings shared by the binary and the tests:
// config from file:, env: and yaml: URIs ("--config file:config/fanout.yaml"),
// defaulting to the embedded config/single.yaml.
func settings() otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "firstbyte-otelcol",
			Description: "OpenTelemetry Collector for firstbyte (core components: OTLP receiver, batch, memory_limiter, OTLP and debug exporters; and firstbyte_ratelimit)",
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				URIs: []string{"yaml:" + defaultConfig},
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
				DefaultScheme: "env",
			},
		},
		ProviderModules: map[string]string{
			"file": "go.opentelemetry.io/collector/confmap/provider/fileprovider v1.71.0",
			"env":  "go.opentelemetry.io/collector/confmap/provider/envprovider v1.71.0",
			"yaml": "go.opentelemetry.io/collector/confmap/provider/yamlprovider v1.71.0",
		},
	}
}
