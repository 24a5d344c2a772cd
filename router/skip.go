package router

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// What a route keeps of the candidates it passed over and of the attempts
// that failed over: the skips the client and the metrics are told of, and
// the failures the all-failed answer is made of.

// Skip reasons (X-Firstbyte-Skipped, firstbyte_skips_total{reason}).
const (
	SkipCircuitOpen = upstream.SkipCircuitOpen
	SkipQueueFull   = "queue_full"
	// SkipRateLimited: the provider's rate limits keep it away until the
	// time it gave (Retry-After or a reset header).
	SkipRateLimited = upstream.SkipRateLimited
	// SkipDisabled: the provider refused the gateway's credential, or its
	// account cannot pay; only its probe goes until one succeeds.
	SkipDisabled = upstream.SkipDisabled
	// SkipUntranslatable: the request uses a feature the target's wire
	// format cannot honour (e.g. n > 1 for an Anthropic provider).
	SkipUntranslatable = "untranslatable"
)

// Skip is a candidate passed over without an attempt.
type Skip = apierror.Skip

// Failure is a failover-safe failure, kept for the answer the client gets
// when every candidate failed.
type Failure = apierror.Failure

// skipEvent is the request span's event for a skip.
func skipEvent(s Skip) trace.EventOption {
	return trace.WithAttributes(
		attribute.String(string(telemetry.KeyTarget), s.Target),
		attribute.String(string(telemetry.KeySkipReason), s.Reason))
}
