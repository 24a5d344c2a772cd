package collector

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The tests and benchmarks here run the real path of the spans: an SDK
// span ends, telemetry's processor converts it to pdata, the aggregator
// records it in the tracker.

// attemptSpanAttributes are an attempt span's attributes at start (the ~12
// the router sets) and at end (status and TTFB, known only then).
func attemptSpanAttributes(target, model string, ttfb time.Duration) (start, end []attribute.KeyValue) {
	return []attribute.KeyValue{
			telemetry.KeyOperationName.String(telemetry.OperationChat),
			telemetry.KeyProviderName.String("openai"),
			telemetry.KeyRequestModel.String(model),
			telemetry.KeyServerAddress.String("api.groq.com"),
			telemetry.KeyServerPort.Int(443),
			telemetry.KeyTarget.String(target),
			telemetry.KeyRequestedModel.String("llama-3.3-70b"),
			telemetry.KeyAttempt.Int(1),
			telemetry.KeySelection.String(telemetry.SelectionLeader),
		}, []attribute.KeyValue{
			telemetry.KeyHTTPStatus.Int(200),
			telemetry.KeyOutcome.String(telemetry.OutcomeSuccess),
			telemetry.KeyTimeToFirstByte.Float64(ttfb.Seconds()),
		}
}

// newPipeline returns a tracer provider whose spans reach tr through the
// aggregating processor, sampled for export with the given sampler.
func newPipeline(tb testing.TB, tr *Tracker, sampler sdktrace.Sampler, extra ...sdktrace.SpanProcessor) *sdktrace.TracerProvider {
	tb.Helper()
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a"})
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sampler),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName("firstbyte"), semconv.ServiceInstanceID("inst-a"))),
		sdktrace.WithSpanProcessor(telemetry.NewAggregatingProcessor(agg)),
	}
	for _, p := range extra {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

func endAttempt(tp *sdktrace.TracerProvider, target, model string, ttfb time.Duration) {
	start, end := attemptSpanAttributes(target, model, ttfb)
	_, span := tp.Tracer(telemetry.TracerName).Start(context.Background(), "chat "+model,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(start...))
	span.SetAttributes(end...)
	span.End()
}

// An attempt is in the tracker when End returns, even when export sampling
// dropped it.
func TestEndedSpanReachesTrackerSynchronously(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"sampled", sdktrace.AlwaysSample()},
		{"not sampled for export (RecordOnly)", sdktrace.AlwaysRecord(sdktrace.NeverSample())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(TrackerOptions{})
			tp := newPipeline(t, tr, tc.sampler)

			endAttempt(tp, "groq", "llama-3.3-70b-versatile", 250*time.Millisecond)

			got, n, ok := tr.P50("groq", "llama-3.3-70b-versatile")
			if !ok || got != 250*time.Millisecond || n != 1 {
				t.Errorf("P50(%q,%q) right after End = %v, %d, %v; want 250ms, 1, true", "groq", "llama-3.3-70b-versatile", got, n, ok)
			}
		})
	}
}

// BenchmarkAggregatingProcessorOnEnd measures an attempt span's trip into
// the tracker. "onEnd" is firstbyte's share: processor, pdata conversion,
// aggregator and tracker, for an already ended span. "span" is the whole
// trip including the SDK starting, annotating and ending the span, and
// "sdk-only" that SDK cost alone.
func BenchmarkAggregatingProcessorOnEnd(b *testing.B) {
	b.Run("onEnd", func(b *testing.B) {
		rec := tracetest.NewSpanRecorder()
		tp := newPipeline(b, NewTracker(TrackerOptions{}), sdktrace.AlwaysSample(), rec)
		endAttempt(tp, "groq", "llama-3.3-70b-versatile", 250*time.Millisecond)
		ended := rec.Ended()[0]
		proc := telemetry.NewAggregatingProcessor(NewAggregator(NewTracker(TrackerOptions{}), AggregatorOptions{}))
		b.ReportAllocs()
		for b.Loop() {
			proc.OnEnd(ended)
		}
	})
	b.Run("span", func(b *testing.B) {
		tr := NewTracker(TrackerOptions{})
		tp := newPipeline(b, tr, sdktrace.AlwaysSample())
		b.ReportAllocs()
		for b.Loop() {
			endAttempt(tp, "groq", "llama-3.3-70b-versatile", 250*time.Millisecond)
		}
		if _, n, _ := tr.P50("groq", "llama-3.3-70b-versatile"); n == 0 {
			b.Fatal("no sample reached the tracker")
		}
	})
	// The baseline: the SDK alone, with a processor that does nothing (so
	// the SDK still snapshots the ended span, as it must for ours).
	b.Run("sdk-only", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardProcessor{}))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		b.ReportAllocs()
		for b.Loop() {
			endAttempt(tp, "groq", "llama-3.3-70b-versatile", 250*time.Millisecond)
		}
	})
}

type discardProcessor struct{}

func (discardProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardProcessor) Shutdown(context.Context) error                  { return nil }
func (discardProcessor) ForceFlush(context.Context) error                { return nil }
