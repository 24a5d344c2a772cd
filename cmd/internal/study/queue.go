package study

import "time"

// A provider with slots (Target.Slots) serves at most that many attempts
// at once; an attempt that finds every slot busy waits for the one that
// frees first. Attempts reach the provider in time order (the event
// queue's), so taking the slot that frees first serves them first come
// first served, and an attempt's slot, its wait and so its whole time are
// known the moment it arrives: the wait, then its service time (the
// provider's draw), is its time to first byte. Nothing in it is random.
//
// An attempt cut by the first-byte timeout leaves its slot at the timeout
// (or never takes one, when the timeout comes before its turn). One
// cancelled because another attempt of its request answered first (a
// hedge that lost) gives its slot back at once when no later attempt
// waits behind it on that slot; otherwise the provider works it off, as
// the attempts behind it were already given their times.

// slots are a provider's slots: when each is next free. A nil free means
// no limit.
type slots struct {
	free []time.Duration
}

// hold is an attempt's claim on a slot, kept to give it back.
type hold struct {
	slot   int           // -1: none
	before time.Duration // the slot's free time before the attempt took it
	until  time.Duration // when the attempt leaves it
}

// noHold is the claim of an attempt that holds no slot.
var noHold = hold{slot: -1}

// newSlots returns n slots, free from the start; n = 0: no limit.
func newSlots(n int) slots {
	if n <= 0 {
		return slots{}
	}
	free := make([]time.Duration, n)
	for i := range free {
		free[i] = -time.Hour // before the warm-up
	}
	return slots{free: free}
}

// wait is the slot an attempt arriving at t gets, and how long it waits
// for it (0 when one is free; slot -1 without a limit).
func (s *slots) wait(t time.Duration) (slot int, wait time.Duration) {
	if s.free == nil {
		return -1, 0
	}
	slot = 0
	for i, f := range s.free {
		if f < s.free[slot] {
			slot = i
		}
	}
	return slot, max(0, s.free[slot]-t)
}

// take gives slot to an attempt until until.
func (s *slots) take(slot int, until time.Duration) hold {
	if slot < 0 {
		return noHold
	}
	h := hold{slot: slot, before: s.free[slot], until: until}
	s.free[slot] = until
	return h
}

// release gives h's slot back at now, when its attempt is cancelled: at
// once if no later attempt waits behind it there, and never before the
// attempt ahead of it on the slot is done.
func (s *slots) release(h hold, now time.Duration) {
	if h.slot < 0 || s.free[h.slot] != h.until || now >= h.until {
		return
	}
	s.free[h.slot] = max(h.before, now)
}

// room reports whether an attempt arriving at t would be served at once.
func (s *slots) room(t time.Duration) bool {
	_, w := s.wait(t)
	return w == 0
}
