package attemptspan

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// TestEndHeld: a held end puts the Result on the span when it is ended,
// at the time it was stamped with, once; the zero End ends nothing.
func TestEndHeld(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	start := time.Unix(1000, 0)
	_, span := tp.Tracer("t").Start(t.Context(), "chat m", trace.WithTimestamp(start))
	res := Result{Status: 200, Outcome: telemetry.OutcomeSuccess, TTFB: 250 * time.Millisecond, HasTTFB: true}
	end := Hold(span, res, trace.WithTimestamp(start.Add(time.Second)), 2, 64)
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans ended before End, want 0", n)
	}
	end.End()
	end.End()
	var zero End
	zero.End()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans ended, want 1", len(spans))
	}
	s := spans[0]
	if got := s.EndTime.Sub(start); got != time.Second {
		t.Errorf("span lasted %v, want the 1s it was stamped with", got)
	}
	attrs := map[string]any{}
	for _, kv := range s.Attributes {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	for k, want := range map[string]any{
		string(telemetry.KeyInflightAtEnd):    int64(2),
		string(telemetry.KeyRequestMaxTokens): int64(64),
		string(telemetry.KeyHTTPStatus):       int64(200),
		string(telemetry.KeyTimeToFirstByte):  0.25,
		string(telemetry.KeyOutcome):          telemetry.OutcomeSuccess,
	} {
		if attrs[k] != want {
			t.Errorf("%s = %v, want %v", k, attrs[k], want)
		}
	}
	if got := Hold(nil, res, nil, 0, 0); got != (End{}) {
		t.Errorf("Hold(nil span) = %+v, want the zero End", got)
	}
}
