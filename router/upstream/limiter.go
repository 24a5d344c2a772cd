package upstream

import (
	"context"
	"sync/atomic"
)

// Limiter caps a provider's in-flight attempts with a bounded wait queue
// (max_concurrency, queue).
type Limiter struct {
	slots   chan struct{} // immutable; a token per attempt in flight
	queue   int64         // immutable; how many may wait for a slot
	waiting atomic.Int64
}

func newLimiter(maxConcurrency, queue int) *Limiter {
	return &Limiter{slots: make(chan struct{}, maxConcurrency), queue: int64(queue)}
}

// Acquire takes a slot, waiting in the queue if there is room there; false
// means the queue is full or ctx ended.
func (l *Limiter) Acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return false
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// TryAcquire takes a slot only if one is free now, never waiting in the
// queue (a hedge does not wait its turn).
func (l *Limiter) TryAcquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives back a slot Acquire or TryAcquire took.
func (l *Limiter) Release() { <-l.slots }
