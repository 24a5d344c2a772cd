package sim

import (
	"context"
	"testing"
)

// A client already gone when a slot is free takes none: before, it took the
// slot and, as its acquire failed, never gave it back, so a provider with
// MaxConcurrency 1 served nothing again.
func TestSlotsGoneClientTakesNoSlot(t *testing.T) {
	s := newSlots(1)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.acquire(gone); err == nil {
		t.Fatal("acquire with a cancelled context succeeded")
	}
	if st := s.stats(); st.Serving != 0 || st.Waiting != 0 {
		t.Fatalf("after a gone client: %+v, want no slot held and none waiting", st)
	}
	if err := s.acquire(context.Background()); err != nil {
		t.Fatalf("the next client: %v, want the free slot", err)
	}
	if st := s.stats(); st.Serving != 1 {
		t.Fatalf("after the next client: %+v, want 1 serving", st)
	}
	s.release()
	if st := s.stats(); st.Serving != 0 {
		t.Fatalf("after release: %+v, want 0 serving", st)
	}
}
