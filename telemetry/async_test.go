package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
