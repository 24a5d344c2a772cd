package router

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Result is what one attempt did: what its span records and what the
// pipeline decides on. An attempt returns it; nothing else reports how an
// attempt went.
type Result struct {
	Status    int    // upstream HTTP status; 0 for none
	ErrorType string // error.type: "" on success, a status code, or a fault.Error* reason
	// TargetOnly: a disabling ErrorType (auth) concerns only this
	// (provider, upstream model) target, not the provider's other models
	// (fault.OfAnswerScoped).
	TargetOnly bool
	Outcome    string // firstbyte.outcome
	TTFB       time.Duration
	HasTTFB    bool // the attempt reached its first byte
	// The tokens the upstream reported (gen_ai.usage.*), when HasUsage.
	InputTokens, OutputTokens int64
	HasUsage                  bool
	// OutputRate is a stream's output tokens per second after its first
	// chunk (firstbyte.output_tokens_per_second); 0 when unknown.
	OutputRate float64
	// CacheHit: the upstream read part of the prompt from its cache (it
	// reported cached tokens), so the time to first byte is not what a
	// cold prompt would get (firstbyte.cache_hit): not a latency sample.
	CacheHit bool
	// ResponseID is the id of the response the answer left stored at the
	// provider (gen_ai.response.id): a Responses answer relayed as it
	// came, store not false. "" : none.
	ResponseID string

	// Delivered: bytes of this attempt reached the client, so there is no
	// failover after it, whatever happens next.
	Delivered bool
	// Detail is what the client reads of a failure when the error.type
	// alone says too little ("transport (connection refused)"); "" : the
	// error.type.
	Detail string
	// Wait is how long the attempt waited on its upstream (the request
	// span's firstbyte.upstream_wait adds these up).
	Wait time.Duration
	// RetryAt is when the provider said it will take requests again (a
	// refusal's Retry-After or reset header, or a success that spent a
	// limit); zero when it said nothing. The provider is cooled until then.
	RetryAt time.Time
	// Remaining is what the provider said remains of its request limit
	// (when HasRemaining), until RemainingReset: the gateway stops sending
	// before it runs out, counting its own attempts since.
	Remaining      int64
	HasRemaining   bool
	RemainingReset time.Time
}

// Details of a timeout: which bound ran out.
const (
	detailFirstByteTimeout = "first-byte timeout"
	detailTotalTimeout     = "total timeout"
)

// Fault is the failure model's verdict on the end.
func (r Result) Fault() fault.Fault { return fault.Classify(r.Status, r.ErrorType) }

// verdict is what the end tells the breaker: neutral when nothing
// was learned of the provider (the client left, or the gateway had no room
// to hold its answer), a fault when the failure model says so, else
// success (the provider answered).
func (r Result) verdict() upstream.Verdict {
	switch {
	case r.Outcome == telemetry.OutcomeCanceled, r.Outcome == telemetry.OutcomeHedgeLost, r.ErrorType == fault.ErrorResponseBufferFull:
		return upstream.Neutral
	case r.Fault() == fault.Full:
		return upstream.Fault
	}
	return upstream.Success
}

// report is what the end tells its provider's and model's state
// (upstream.Model.Settle).
func (r Result) report() upstream.Report {
	return upstream.Report{
		ErrorType: r.ErrorType, TargetOnly: r.TargetOnly, Success: r.Outcome == telemetry.OutcomeSuccess, RetryAt: r.RetryAt,
		HasRemaining: r.HasRemaining, Remaining: r.Remaining, RemainingReset: r.RemainingReset,
	}
}

// endSpan puts the end on the attempt span (status, error.type, the time
// to first chunk on a success, usage, outcome and the failure model's
// verdict) and ends it. The span's end runs the tracker's record on this
// goroutine (telemetry.AggregatingProcessor), the deepest the request's
// goroutine goes: the attributes are built in a frame of their own
// (setEnd's), gone before the end, so that a stream's 8 kB stack need not
// grow to 16 kB as it ends, which thousands of streams ending together
// would do at once.
func (r *Result) endSpan(span trace.Span, ts trace.SpanEndOption) {
	r.setEnd(span)
	span.End(ts)
}

// setEnd sets endSpan's attributes and status on span.
//
//go:noinline
func (r *Result) setEnd(span trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 8)
	if r.Status != 0 {
		attrs = append(attrs, telemetry.KeyHTTPStatus.Int(r.Status))
	}
	if r.ErrorType != "" {
		attrs = append(attrs, telemetry.KeyErrorType.String(r.ErrorType))
	}
	if r.HasTTFB && r.Outcome == telemetry.OutcomeSuccess {
		attrs = append(attrs, telemetry.KeyTimeToFirstByte.Float64(r.TTFB.Seconds()))
	}
	if r.HasUsage {
		attrs = append(attrs, telemetry.KeyInputTokens.Int64(r.InputTokens), telemetry.KeyOutputTokens.Int64(r.OutputTokens))
	}
	if r.CacheHit {
		attrs = append(attrs, telemetry.KeyCacheHit.Bool(true))
	}
	if r.ResponseID != "" {
		attrs = append(attrs, telemetry.KeyResponseID.String(r.ResponseID))
	}
	if r.OutputRate > 0 {
		attrs = append(attrs, telemetry.KeyOutputRate.Float64(r.OutputRate))
	}
	attrs = append(attrs, telemetry.KeyOutcome.String(r.Outcome), telemetry.KeyFault.String(r.Fault().String()))
	span.SetAttributes(attrs...)
	if r.Outcome != telemetry.OutcomeSuccess && r.Outcome != telemetry.OutcomeClientError && r.Outcome != telemetry.OutcomeHedgeLost {
		span.SetStatus(codes.Error, r.ErrorType)
	}
}

// clientStatus is the status the client gets when this failover-safe
// failure is the last: the upstream's status, 504 for a timeout, 503 when
// the gateway could not hold the answer, 502 for a transport failure or an
// unusable answer.
func (res Result) clientStatus() int {
	switch {
	case res.ErrorType == fault.ErrorTimeout:
		return http.StatusGatewayTimeout
	case res.ErrorType == fault.ErrorResponseBufferFull:
		// The gateway's own answer buffers are full for now: unavailable,
		// worth a retry, and not the upstream's bad answer a 502 would say.
		return http.StatusServiceUnavailable
	case res.Status < 400:
		return http.StatusBadGateway // transport, or an unusable answer
	}
	return res.Status
}
