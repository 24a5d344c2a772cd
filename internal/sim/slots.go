package sim

import (
	"context"
	"sync"
)

// slots is a provider's capacity (Provider.MaxConcurrency): at most max
// requests are served at once; the others wait for a slot, first come first
// served, and a waiting request whose client goes away leaves the queue.
type slots struct {
	max int // immutable

	mu                       sync.Mutex      // guards the fields below
	serving                  int             // requests holding a slot
	waiting                  []chan struct{} // in arrival order; closed when handed a slot
	peakServing, peakWaiting int
	queued                   int64 // requests that had to wait
}

// SlotStats is what a provider with MaxConcurrency reports of its queue.
type SlotStats struct {
	// Max is MaxConcurrency (0: no limit; the rest are then 0).
	Max int
	// Serving and Waiting are the requests holding a slot and waiting for
	// one right now; PeakServing and PeakWaiting the most at any moment.
	Serving, Waiting         int
	PeakServing, PeakWaiting int
	// Queued counts the requests that had to wait for a slot.
	Queued int64
}

func newSlots(n int) *slots {
	if n <= 0 {
		return nil
	}
	return &slots{max: n}
}

// acquire waits for a slot, first come first served, or until ctx is done
// (then it holds none and returns ctx.Err()).
func (s *slots) acquire(ctx context.Context) error {
	s.mu.Lock()
	if s.serving < s.max && len(s.waiting) == 0 {
		if err := ctx.Err(); err != nil { // gone already: take no slot
			s.mu.Unlock()
			return err
		}
		s.serving++
		s.peakServing = max(s.peakServing, s.serving)
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiting = append(s.waiting, ch)
	s.queued++
	s.peakWaiting = max(s.peakWaiting, len(s.waiting))
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for i, w := range s.waiting {
		if w == ch {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			s.mu.Unlock()
			return ctx.Err()
		}
	}
	s.mu.Unlock()
	s.release() // handed a slot as the client went away: pass it on
	return ctx.Err()
}

// release gives a slot back: to the request that has waited longest, if
// any.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) > 0 {
		close(s.waiting[0])
		s.waiting = s.waiting[1:]
		return
	}
	s.serving--
}

func (s *slots) stats() SlotStats {
	if s == nil {
		return SlotStats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return SlotStats{Max: s.max, Serving: s.serving, Waiting: len(s.waiting),
		PeakServing: s.peakServing, PeakWaiting: s.peakWaiting, Queued: s.queued}
}
