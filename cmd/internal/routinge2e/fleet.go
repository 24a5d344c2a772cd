package routinge2e

import (
	"fmt"
	"strings"
)

// CollectorConfig is the config of the collector a fleet shares, as
// collector/otelcol/config/fleet.yaml has it for two gateways: OTLP in on
// grpc and http (host:port), a short batch, and one otlp_http exporter per
// gateway, to its admin listener's /v1/traces (admins: host:port), so that
// every gateway gets every span (each skips its own). No retries: a
// gateway that is gone is gone.
func CollectorConfig(grpc, http string, admins []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "receivers:\n  otlp:\n    protocols:\n      grpc: {endpoint: %q}\n      http: {endpoint: %q}\n", grpc, http)
	b.WriteString("processors:\n  batch: {timeout: 100ms, send_batch_size: 512}\nexporters:\n")
	var names []string
	for i, a := range admins {
		name := fmt.Sprintf("otlp_http/g%d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "  %s:\n    traces_endpoint: %q\n    encoding: proto\n    timeout: 5s\n    retry_on_failure: {enabled: false}\n",
			name, "http://"+a+"/v1/traces")
	}
	fmt.Fprintf(&b, "service:\n  pipelines:\n    traces: {receivers: [otlp], processors: [batch], exporters: [%s]}\n", strings.Join(names, ", "))
	b.WriteString("  telemetry:\n    logs: {level: warn}\n    metrics: {level: none}\n")
	return b.String()
}

// ExportEnv is the environment of a fleet's gateways: spans exported every
// 100 ms, so peers learn them while they are fresh.
var ExportEnv = []string{"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_EXPORTER_OTLP_TIMEOUT=1000"}
