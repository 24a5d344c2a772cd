package telemetry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// asyncStage runs the consumers nobody should wait for (metrics, export)
// on one goroutine of its own. It queues the SDK's ended spans themselves:
// a ReadOnlySpan is an immutable snapshot, so handing it over costs no copy,
// and the stage converts it to pdata with its own reusable buffers.
type asyncStage struct {
	// immutable after newAsyncStage
	next   TracesConsumer
	onDrop func(spans int)
	proc   *AggregatingProcessor // for its conversion buffers

	queue   chan asyncItem
	stopped atomic.Bool   // no more spans are queued once set
	stop    chan struct{} // closed by shutdown
	done    chan struct{} // closed when the goroutine has drained and left
	once    sync.Once
}

// asyncItem is a span to consume, or (span nil) a flush marker whose
// channel is closed once everything queued before it was consumed.
type asyncItem struct {
	span    sdktrace.ReadOnlySpan
	flushed chan struct{}
}

func newAsyncStage(next TracesConsumer, queue int, onDrop func(int), proc *AggregatingProcessor) *asyncStage {
	a := &asyncStage{next: next, onDrop: onDrop, proc: proc,
		queue: make(chan asyncItem, queue), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// enqueue queues s without ever blocking: a full queue drops it.
func (a *asyncStage) enqueue(s sdktrace.ReadOnlySpan) {
	if a.stopped.Load() {
		a.onDrop(1)
		return
	}
	select {
	case a.queue <- asyncItem{span: s}:
	default:
		a.onDrop(1)
	}
}

// asyncTick is how long the stage lets spans gather once one has arrived
// before it takes them all. Waking per span would cost a wake-up (and a
// context switch on a busy machine) per span on the request path's critical
// resource, the CPU; metrics and export are no worse for being a few
// milliseconds behind. An idle stage does not wake at all: it waits on the
// queue.
const asyncTick = 5 * time.Millisecond

func (a *asyncStage) run() {
	defer close(a.done)
	tick := time.NewTimer(asyncTick)
	defer tick.Stop()
	for {
		// Idle: sleep until a span (or a flush marker) arrives.
		select {
		case it := <-a.queue:
			a.handle(it)
		case <-a.stop:
			a.drain() // what was queued before the stop
			return
		}
		// Busy: let the next spans gather for a tick, without a wake-up
		// each, then take them all.
		tick.Reset(asyncTick)
		select {
		case <-tick.C:
			a.drain()
		case <-a.stop:
			a.drain()
			return
		}
	}
}

// drain consumes everything queued now.
func (a *asyncStage) drain() {
	for {
		select {
		case it := <-a.queue:
			a.handle(it)
		default:
			return
		}
	}
}

func (a *asyncStage) handle(it asyncItem) {
	if it.span == nil {
		close(it.flushed)
		return
	}
	a.proc.consume(a.next, it.span)
}

// flush waits until every span queued before it has been consumed.
func (a *asyncStage) flush(ctx context.Context) error {
	if a.stopped.Load() {
		return nil
	}
	marker := asyncItem{flushed: make(chan struct{})}
	select {
	case a.queue <- marker:
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-marker.flushed:
		return nil
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown stops queueing, drains the queue and waits for the goroutine.
func (a *asyncStage) shutdown(ctx context.Context) error {
	a.once.Do(func() {
		a.stopped.Store(true)
		close(a.stop)
	})
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("span hand-off: shut down before the queue drained"), ctx.Err())
	}
}
