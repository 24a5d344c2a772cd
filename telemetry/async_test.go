package telemetry

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// gate is a consumer that blocks until released, and counts.
type gate struct {
	release chan struct{}
	n       atomic.Int32
}

func (g *gate) ConsumeTraces(context.Context, ptrace.Traces) error {
	<-g.release
	g.n.Add(1)
	return nil
}

type counter struct{ n atomic.Int32 }

func (c *counter) ConsumeTraces(context.Context, ptrace.Traces) error { c.n.Add(1); return nil }

// TestSplitProcessorNeverWaitsForTheAsyncSide: the synchronous consumer
// has every span when End returns, while the asynchronous one is stuck; a
// full queue drops (and says so) instead of blocking; ForceFlush and
// Shutdown wait for what was queued.
func TestSplitProcessorNeverWaitsForTheAsyncSide(t *testing.T) {
	t.Parallel()
	inline, slow := &counter{}, &gate{release: make(chan struct{})}
	var dropped atomic.Int32
	p := NewSplitProcessor(inline, slow, 4, func(n int) { dropped.Add(int32(n)) })
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tracer := tp.Tracer("test")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			_, span := tracer.Start(context.Background(), "s")
			span.End()
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ending spans blocked on the asynchronous consumer")
	}
	if n := inline.n.Load(); n != 10 {
		t.Errorf("synchronous consumer saw %d spans when End returned, want 10", n)
	}
	// 4 wait in the queue, at most one more is in the stuck consumer's
	// hands: the rest were dropped.
	if d := dropped.Load(); d != 5 && d != 6 {
		t.Errorf("dropped %d, want 5 or 6 (queue of 4, and maybe one in hand)", d)
	}
	close(slow.release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, d := slow.n.Load(), dropped.Load(); n+d != 10 {
		t.Errorf("asynchronous consumer saw %d spans after ForceFlush and %d were dropped, want 10 in all", n, d)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_, span := tracer.Start(context.Background(), "late")
	span.End() // after shutdown: neither blocks nor panics
}

// TestSplitProcessorShutdownDrains: spans queued before Shutdown reach the
// asynchronous consumer.
func TestSplitProcessorShutdownDrains(t *testing.T) {
	t.Parallel()
	async := &counter{}
	p := NewSplitProcessor(nil, async, 0, nil)
	var wg sync.WaitGroup
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, span := tp.Tracer("t").Start(context.Background(), "s")
				span.End()
			}
		})
	}
	wg.Wait()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := async.n.Load(); n != 400 {
		t.Errorf("asynchronous consumer saw %d spans by shutdown, want 400", n)
	}
}

// kinds is a consumer that notes the kind of every span it is handed.
type kinds struct {
	mu   sync.Mutex
	seen []ptrace.SpanKind
}

func (k *kinds) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for n := range spans.Len() {
				k.seen = append(k.seen, spans.At(n).Kind())
			}
		}
	}
	return nil
}

// TestSetupHandsTheAggregatorOnlyAttempts: the synchronous side, on the
// goroutine that ended the span, converts only CLIENT spans (the attempts
// the tracker learns from); the observers get every span.
func TestSetupHandsTheAggregatorOnlyAttempts(t *testing.T) {
	t.Parallel()
	agg, obs := &kinds{}, &kinds{}
	sdk, shutdown, err := Setup(context.Background(), Options{Aggregator: agg, Observers: obs, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	tracer := sdk.TracerProvider.Tracer(TracerName)
	for _, k := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindInternal} {
		_, span := tracer.Start(context.Background(), k.String(), trace.WithSpanKind(k))
		span.End()
	}
	agg.mu.Lock()
	if want := []ptrace.SpanKind{ptrace.SpanKindClient}; !slices.Equal(agg.seen, want) {
		t.Errorf("aggregator got %v when End returned, want %v", agg.seen, want)
	}
	agg.mu.Unlock()
	if err := sdk.TracerProvider.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if want := []ptrace.SpanKind{ptrace.SpanKindServer, ptrace.SpanKindClient, ptrace.SpanKindInternal}; !slices.Equal(obs.seen, want) {
		t.Errorf("observers got %v, want %v", obs.seen, want)
	}
}

// TestSplitProcessorDeliversWhenIdle: the asynchronous side, asleep on an
// empty queue, takes a span that arrives (no ForceFlush) within a few ticks,
// and again after it has gone idle once more.
func TestSplitProcessorDeliversWhenIdle(t *testing.T) {
	t.Parallel()
	async := &counter{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(NewSplitProcessor(nil, async, 0, nil)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	for want := int32(1); want <= 2; want++ {
		time.Sleep(5 * asyncTick) // idle
		_, span := tp.Tracer("t").Start(context.Background(), "s")
		span.End()
		deadline := time.Now().Add(5 * time.Second)
		for async.n.Load() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := async.n.Load(); n != want {
			t.Fatalf("asynchronous consumer saw %d spans, want %d, without a flush", n, want)
		}
	}
}
