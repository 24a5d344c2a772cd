package router

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// spanName names an attempt span of operation at c, built once per
// candidate (mode.Candidate.SpanNames).
func spanName(c *mode.Candidate, operation string) string {
	if n, ok := c.SpanNames[operation]; ok {
		return n
	}
	return operation + " " + c.Model
}

// attemptAttributes are the attributes an attempt span at c starts with.
func attemptAttributes(c *mode.Candidate, operation, requestedModel string, attempt int, selection string, inflight int64) []attribute.KeyValue {
	u := c.Upstream
	return []attribute.KeyValue{
		telemetry.KeyOperationName.String(operation),
		telemetry.KeyProviderName.String(u.ProviderName),
		telemetry.KeyRequestModel.String(c.Model),
		telemetry.KeyServerAddress.String(u.Host),
		telemetry.KeyServerPort.Int(u.Port),
		telemetry.KeyTarget.String(c.Target),
		telemetry.KeyRequestedModel.String(requestedModel),
		telemetry.KeyAttempt.Int(attempt),
		telemetry.KeySelection.String(selection),
		telemetry.KeyInflight.Int64(inflight),
	}
}
