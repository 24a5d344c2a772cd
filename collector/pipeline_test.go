package collector

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
		sdktrace.WithSpanProcessor(syncProcessor(agg)),
	}
	for _, p := range extra {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

// syncProcessor is the synchronous half of the processor telemetry.Setup
// builds: agg gets the attempt (CLIENT) spans on the goroutine that ends
// them. (The asynchronous half, metrics and export, is left out.)
func syncProcessor(agg *Aggregator) *telemetry.AggregatingProcessor {
	p := telemetry.NewSplitProcessor(agg, nil, 0, nil)
	p.ConsumerTakes = telemetry.AttemptSpan
	return p
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
	t.Parallel()
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
		proc := syncProcessor(NewAggregator(NewTracker(TrackerOptions{}), AggregatorOptions{}))
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

// observedSpan is what spanWitness saw of one span on the asynchronous side.
type observedSpan struct {
	name       string
	trackerHad bool // the tracker already held groq/llama's sample
}

// spanWitness stands before the metrics on the asynchronous side and notes
// each span, and whether the tracker had learned from it by then.
type spanWitness struct {
	mu   sync.Mutex
	tr   *Tracker
	seen []observedSpan
	next telemetry.TracesConsumer
}

func (w *spanWitness) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	w.mu.Lock()
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				_, n, _ := w.tr.P50("groq", "llama")
				w.seen = append(w.seen, observedSpan{spans.At(k).Name(), n == 1})
			}
		}
	}
	w.mu.Unlock()
	return w.next.ConsumeTraces(ctx, td)
}

// TestSpansConsumedAndObserved, wired as the binary wires it: every span
// that ends here is counted once as local and reaches the metrics after the
// tracker has learned from it; a peer's span teaches the tracker and is
// counted as peer, and never reaches the metrics (the peer counts its own);
// our own spans coming back from a peer are neither.
func TestSpansConsumedAndObserved(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	metrics := NewMetrics(reg)
	tr := NewTracker(TrackerOptions{})
	agg := NewAggregator(tr, AggregatorOptions{InstanceID: "inst-a", OnSpan: metrics.SpanConsumed})
	witness := &spanWitness{tr: tr, next: metrics}
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		InstanceID: "inst-a", Aggregator: agg, Observers: witness, OnDrop: metrics.SpansDropped,
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	tracer := sdk.TracerProvider.Tracer(telemetry.TracerName)
	ctx, server := tracer.Start(context.Background(), "POST /v1/chat/completions", trace.WithSpanKind(trace.SpanKindServer))
	start, end := attemptSpanAttributes("groq", "llama", 250*time.Millisecond)
	_, attempt := tracer.Start(ctx, "chat llama", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(start...))
	attempt.SetAttributes(end...)
	attempt.End()
	server.SetAttributes(telemetry.KeyHTTPStatus.Int(200))
	server.End()
	if err := sdk.TracerProvider.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	consumed := func(source string) float64 {
		return counterValue(t, reg, "firstbyte_spans_consumed_total", map[string]string{"source": source})
	}
	attempts := func() float64 {
		return counterValue(t, reg, "firstbyte_attempts_total", map[string]string{"target": "groq"})
	}
	if l, p := consumed(SourceLocal), consumed(SourcePeer); l != 2 || p != 0 {
		t.Errorf("consumed local %v, peer %v; want 2 (the attempt and the server span), 0", l, p)
	}
	witness.mu.Lock()
	want := []observedSpan{{"chat llama", true}, {"POST /v1/chat/completions", true}}
	if !slices.Equal(witness.seen, want) {
		t.Errorf("metrics saw %v, want %v", witness.seen, want)
	}
	witness.mu.Unlock()
	if a := attempts(); a != 1 {
		t.Errorf("firstbyte_attempts_total{target=groq} = %v after our attempt, want 1", a)
	}

	_ = agg.ConsumePeerTraces(context.Background(), buildTraces(t,
		attemptFixture("inst-a", "groq", "llama", time.Second, time.Now()), // our own: skipped
		attemptFixture("inst-b", "groq", "llama", time.Second, time.Now())))
	if l, p := consumed(SourceLocal), consumed(SourcePeer); l != 2 || p != 1 {
		t.Errorf("after a peer's trace: consumed local %v, peer %v; want 2, 1", l, p)
	}
	if _, n, _ := tr.P50("groq", "llama"); n != 2 {
		t.Errorf("tracker holds %d samples of groq/llama, want 2 (ours and the peer's)", n)
	}
	if a := attempts(); a != 1 {
		t.Errorf("firstbyte_attempts_total{target=groq} = %v after a peer's attempt, want still 1", a)
	}
}
