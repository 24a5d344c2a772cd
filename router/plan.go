package router

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The routing decision without HTTP: the order a request gets, the breaker's
// say on each attempt, and the attempt span's vocabulary. The pipeline runs
// on exactly these, and the routing study (firstbyte study) drives them on a
// virtual clock, so what it measures is the product's routing, not a copy.

// Plan returns the order a request for the client model would get now and
// why its first candidate leads (X-Firstbyte-Selection): the active mode's
// order over the targets whose circuit lets an attempt through, then the
// others. ok is false when no target serves the model.
func (g *Gateway) Plan(dst []*Candidate, model string) (order []*Candidate, selection string, ok bool) {
	eligible := g.routes[familyChat][model]
	if len(eligible) == 0 {
		return dst, "", false
	}
	order, selection = g.order(dst, model, eligible)
	return order, selection, true
}

// Admission is an attempt's permission from its provider's circuit breaker;
// Resolve must be called once on every Admission Admit hands out.
type Admission struct{ a admission }

// Admit asks the candidate's circuit breaker whether an attempt may go now;
// false is a skip (the circuit is open, or its half-open probe is out).
func (c *Candidate) Admit() (Admission, bool) {
	a, ok := c.upstream.breaker.admit()
	return Admission{a}, ok
}

// Resolve tells the breaker how the admitted attempt ended.
func (a Admission) Resolve(end AttemptEnd) { a.a.resolve(end.breakerResult()) }

// Circuit is the candidate's circuit state now.
func (c *Candidate) Circuit() CircuitState { return c.upstream.breaker.State() }

// AttemptAttributes are the attributes an attempt span starts with.
func (c *Candidate) AttemptAttributes(operation, requestedModel string, attempt int, selection string) []attribute.KeyValue {
	return c.attemptAttributes(operation, requestedModel, attempt, selection)
}

func (c *Candidate) attemptAttributes(operation, requestedModel string, attempt int, selection string) []attribute.KeyValue {
	u := c.upstream
	return []attribute.KeyValue{
		telemetry.KeyOperationName.String(operation),
		telemetry.KeyProviderName.String(u.kind),
		telemetry.KeyRequestModel.String(c.Model),
		telemetry.KeyServerAddress.String(u.host),
		telemetry.KeyServerPort.Int(u.port),
		telemetry.KeyTarget.String(c.Target),
		telemetry.KeyRequestedModel.String(requestedModel),
		telemetry.KeyAttempt.Int(attempt),
		telemetry.KeySelection.String(selection),
	}
}

// Candidates lists every (target, client model) candidate, in declaration
// order: what the aggregator may learn about, and nothing else.
func (g *Gateway) Candidates() []*Candidate { return append([]*Candidate(nil), g.targets...) }

// Provider says where the candidate's provider is and what it speaks: its
// wire format (openai or anthropic) and the host and port of its base_url
// (443 or 80 by scheme when the URL names none), as attempt spans carry
// them in server.address and server.port.
func (c *Candidate) Provider() (kind, host string, port int) {
	return c.upstream.kind, c.upstream.host, c.upstream.port
}

// SpanName is the attempt span's name for operation.
func (c *Candidate) SpanName(operation string) string { return c.spanName(operation) }

// AttemptEnd is how an attempt ended, as its span records it.
type AttemptEnd struct {
	Status    int    // upstream HTTP status; 0 for none
	ErrorType string // error.type: "" on success, a status code, or a fault.Error* reason
	Outcome   string // firstbyte.outcome
	TTFB      time.Duration
	HasTTFB   bool // the attempt reached its first byte
	// The tokens the upstream reported (gen_ai.usage.*), when HasUsage.
	InputTokens, OutputTokens int64
	HasUsage                  bool
}

// Fault is the failure model's verdict on the end.
func (e AttemptEnd) Fault() fault.Fault { return fault.Classify(e.Status, e.ErrorType) }

// breakerResult is what the end tells the breaker: a fault, neutral when
// nothing was learned of the provider (the client left, or the gateway had
// no room to hold its answer), else success (the provider answered).
func (e AttemptEnd) breakerResult() result {
	switch {
	case e.Outcome == telemetry.OutcomeCanceled, e.ErrorType == fault.ErrorResponseBufferFull:
		// Nothing learned of the provider: the client left, or the
		// gateway could not hold the answer to judge it.
		return resultNeutral
	case e.Fault() == fault.Full:
		return resultFault
	}
	return resultSuccess
}

// EndSpan puts the end on the attempt span (status, error.type, the time
// to first chunk on a success, outcome and the failure model's verdict) and
// ends it at ts.
func (e AttemptEnd) EndSpan(span trace.Span, ts time.Time) {
	e.endSpan(span, trace.WithTimestamp(ts))
}

func (e AttemptEnd) endSpan(span trace.Span, ts trace.SpanEventOption) {
	attrs := make([]attribute.KeyValue, 0, 7)
	if e.Status != 0 {
		attrs = append(attrs, telemetry.KeyHTTPStatus.Int(e.Status))
	}
	if e.ErrorType != "" {
		attrs = append(attrs, telemetry.KeyErrorType.String(e.ErrorType))
	}
	if e.HasTTFB && e.Outcome == telemetry.OutcomeSuccess {
		attrs = append(attrs, telemetry.KeyTimeToFirstByte.Float64(e.TTFB.Seconds()))
	}
	if e.HasUsage {
		attrs = append(attrs, telemetry.KeyInputTokens.Int64(e.InputTokens), telemetry.KeyOutputTokens.Int64(e.OutputTokens))
	}
	attrs = append(attrs, telemetry.KeyOutcome.String(e.Outcome), telemetry.KeyFault.String(e.Fault().String()))
	span.SetAttributes(attrs...)
	if e.Outcome != telemetry.OutcomeSuccess && e.Outcome != telemetry.OutcomeClientError {
		span.SetStatus(codes.Error, e.ErrorType)
	}
	span.End(ts)
}
