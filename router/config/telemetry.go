package config

// Telemetry configures the OpenTelemetry side.
type Telemetry struct {
	// ServiceName is the resource's service.name (OTEL_SERVICE_NAME wins).
	// Zero: firstbyte.
	ServiceName string `yaml:"service_name" reload:"restart"`
	// OTLPEndpoint is the OTLP/HTTP base URL spans are exported to. Empty:
	// OTEL_EXPORTER_OTLP_ENDPOINT; neither: no export.
	OTLPEndpoint string `yaml:"otlp_endpoint" reload:"restart,hidden"`
	Ingest       Ingest `yaml:"ingest"`
}

// Ingest lets other instances' spans in on admin POST /v1/traces, so every
// instance of a fleet learns from every other's attempts.
type Ingest struct {
	// Enabled turns the endpoint on. Zero: off. Enabled with no Token is
	// refused unless admin.listen is a loopback address.
	Enabled bool `yaml:"enabled" reload:"restart"`
	// Token, when set, must come as "Authorization: Bearer TOKEN". Empty:
	// no token is asked for.
	Token string `yaml:"token" secret:"true" reload:"restart"`
	// Foreign lets spans from services that are not firstbyte instances
	// teach the tracker too.
	Foreign ForeignIngest `yaml:"foreign"`
}

// ForeignIngest takes CLIENT spans of applications that call providers
// directly (OpenTelemetry GenAI instrumentation) as samples of the target
// whose provider host and upstream model they name. They arrive on the
// ingest endpoint, so Ingest.Enabled must be on too.
type ForeignIngest struct {
	// Enabled turns it on. Zero: off.
	Enabled bool `yaml:"enabled"`
	// Services is an allow-list of service.name values. Empty: every
	// service that is not a firstbyte instance.
	Services []string `yaml:"services"`
	// UnaryServices are services that never stream: their spans'
	// durations count as samples even without gen_ai.request.stream.
	// Empty: none.
	UnaryServices []string `yaml:"unary_services"`
}
