// Package telemetry sets up the OpenTelemetry SDK for firstbyte (resource,
// tracer provider, exporters, sampler), names the attributes every attempt
// span carries, and turns ended SDK spans into collector pdata for the
// embedded aggregator.
//
// It must not know how requests are routed (package router), what a fault
// is (package internal/fault), nor how samples are kept and counted
// (package collector, which also owns every Prometheus metric): it only
// describes and delivers spans.
package telemetry

import (
	"iter"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// TracerName is the instrumentation scope of every span firstbyte starts.
const TracerName = "github.com/firstbyte-dev/firstbyte"

// Attribute keys of the attempt span. The GenAI and HTTP keys
// come from the semantic conventions so spans from any GenAI-instrumented
// client that carry them teach the tracker too.
var (
	KeyOperationName   = semconv.GenAIOperationNameKey            // "chat", "embeddings", "count_tokens", ...
	KeyProviderName    = semconv.GenAIProviderNameKey             // "openai", "anthropic", ...
	KeyRequestModel    = semconv.GenAIRequestModelKey             // the upstream model sent to the provider
	KeyTimeToFirstByte = semconv.GenAIResponseTimeToFirstChunkKey // seconds (double), only on a 2xx attempt
	KeyServerAddress   = semconv.ServerAddressKey
	KeyServerPort      = semconv.ServerPortKey
	KeyHTTPStatus      = semconv.HTTPResponseStatusCodeKey
	KeyErrorType       = semconv.ErrorTypeKey
	KeyInputTokens     = semconv.GenAIUsageInputTokensKey  // when the upstream reports usage
	KeyOutputTokens    = semconv.GenAIUsageOutputTokensKey // when the upstream reports usage
	// KeyRequestMaxTokens is the request's own output limit (max_tokens,
	// max_completion_tokens or max_output_tokens), when it set one: the
	// answer lengths least-completion predicts from are grouped by it.
	KeyRequestMaxTokens = semconv.GenAIRequestMaxTokensKey
	// KeyResponseID is the id of the response an attempt left stored at its
	// provider (a Responses API answer, store not false): whoever reads the
	// span learns which target holds it (previous_response_id follow-ups).
	KeyResponseID = semconv.GenAIResponseIDKey
)

// The project's own attribute keys.
const (
	KeyTarget         = attribute.Key("firstbyte.target")                   // virtual key of the target tried
	KeyRequestedModel = attribute.Key("firstbyte.requested_model")          // client-facing model
	KeyAttempt        = attribute.Key("firstbyte.attempt")                  // 1-based attempt number within the request
	KeySelection      = attribute.Key("firstbyte.selection")                // cold|leader|explore|order|manual|failover
	KeyOutcome        = attribute.Key("firstbyte.outcome")                  // success|failover|client_error|broken|canceled
	KeyUpstreamWait   = attribute.Key("firstbyte.upstream_wait")            // server span: seconds spent waiting on upstreams
	KeyOutputRate     = attribute.Key("firstbyte.output_tokens_per_second") // a stream's output tokens per second after its first chunk
	KeyInflight       = attribute.Key("firstbyte.inflight")                 // the target's attempts in flight from this instance when the attempt started, itself included
	KeyInflightAtEnd  = attribute.Key("firstbyte.inflight_at_end")          // the target's other attempts from this instance still in flight when the attempt ended
	KeyCacheHit       = attribute.Key("firstbyte.cache_hit")                // the upstream reported cached prompt tokens: a sample not for cold prompts
	KeyAffinity       = attribute.Key("firstbyte.affinity")                 // server span: hit, broken, none (the prompt-cache affinity)
	KeyPreference     = attribute.Key("firstbyte.preference")               // server span: the request's provider preferences, summarised (target names, numbers; never prompt text)
	KeyHedge          = attribute.Key("firstbyte.hedge")                    // server span: won (a hedge served), lost (the first attempt did), denied (the budget refused one)
	KeySkipReason     = attribute.Key("firstbyte.skip_reason")              // skip event: circuit_open|queue_full|rate_limited|disabled|untranslatable
	// KeyFault carries the failure model's verdict on an attempt (package
	// fault): "none", "half" or "full".
	KeyFault = attribute.Key("firstbyte.fault")
)

// EventSkip is the server span's event for a target passed over without an
// attempt (its circuit open, its queue full); it carries KeyTarget and
// KeySkipReason. firstbyte_skips_total counts them.
const EventSkip = "firstbyte.skip"

// Operation names (gen_ai.operation.name). CountTokens is ours: the semantic
// conventions have none for it, and it never yields a latency sample.
const (
	OperationChat        = "chat"
	OperationEmbeddings  = "embeddings"
	OperationCountTokens = "count_tokens"
)

// Selection reasons (X-Firstbyte-Selection and firstbyte.selection).
const (
	SelectionCold     = "cold"
	SelectionLeader   = "leader"
	SelectionExplore  = "explore"
	SelectionOrder    = "order"
	SelectionManual   = "manual"
	SelectionFailover = "failover"
)

// Attempt outcomes (firstbyte.outcome and firstbyte_attempts_total{outcome}).
const (
	OutcomeSuccess     = "success"
	OutcomeFailover    = "failover"
	OutcomeClientError = "client_error"
	OutcomeBroken      = "broken"
	// OutcomeCanceled: the client went away before the attempt finished;
	// neither the provider's failure nor a failover.
	OutcomeCanceled = "canceled"
	// OutcomeHedgeLost: another attempt of the request answered first and
	// this one was cancelled; neither a fault nor a latency sample.
	OutcomeHedgeLost = "hedge_lost"
)

// SpanSlices yields the spans of every ScopeSpans of td, with their
// resource, in order: the walk every consumer of span data makes.
func SpanSlices(td ptrace.Traces) iter.Seq2[pcommon.Resource, ptrace.SpanSlice] {
	return func(yield func(pcommon.Resource, ptrace.SpanSlice) bool) {
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			rs := rss.At(i)
			sss := rs.ScopeSpans()
			for j := range sss.Len() {
				if !yield(rs.Resource(), sss.At(j).Spans()) {
					return
				}
			}
		}
	}
}
