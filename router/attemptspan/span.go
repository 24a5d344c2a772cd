package attemptspan

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Name names an attempt span of operation at c, built once per candidate
// (mode.Candidate.SpanNames).
func Name(c *mode.Candidate, operation string) string {
	if n, ok := c.SpanNames[operation]; ok {
		return n
	}
	return operation + " " + c.Model
}

// Attributes are the attributes an attempt span at c starts with.
func Attributes(c *mode.Candidate, operation, requestedModel string, attempt int, selection string, inflight int64) []attribute.KeyValue {
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

// End is an attempt span's end, held until its driver ends it: the Result,
// the time the attempt ended (the span's end time), and what was known
// only then. The zero End ends nothing.
type End struct {
	span trace.Span
	res  Result
	ts   trace.SpanEndOption
	// inflightAtEnd is what was still in flight at the provider as the
	// attempt ended (itself not counted): the load a peer reading the span
	// should count. maxTokens is the request's own output limit (0: none).
	inflightAtEnd int64
	maxTokens     int
}

// Hold keeps span's end with res, stamped ts, for End. span nil: a zero End.
func Hold(span trace.Span, res Result, ts trace.SpanEndOption, inflightAtEnd int64, maxTokens int) End {
	if span == nil {
		return End{}
	}
	return End{span: span, res: res, ts: ts, inflightAtEnd: inflightAtEnd, maxTokens: maxTokens}
}

// End puts the Result on the span (status, error.type, the time to first
// chunk on a success, usage, outcome and the failure model's verdict) and
// ends it at the time held: the tracker learns from it there. Once: a
// second call ends nothing.
func (e *End) End() {
	span := e.span
	if span == nil {
		return
	}
	e.span = nil
	e.setEnd(span)
	span.End(e.ts)
}

// setEnd sets End's attributes and status on span, in a frame of its own
// that is gone before span.End: the span's end runs the tracker's record on
// the request's goroutine, the deepest that goroutine goes, and a held
// stream's 8 kB stack must not grow to 16 kB as it ends (thousands of
// streams ending together would do it at once).
//
//go:noinline
func (e *End) setEnd(span trace.Span) {
	r := &e.res
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, telemetry.KeyInflightAtEnd.Int64(e.inflightAtEnd))
	if e.maxTokens > 0 {
		attrs = append(attrs, telemetry.KeyRequestMaxTokens.Int(e.maxTokens))
	}
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
