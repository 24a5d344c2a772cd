package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestFloorPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name        string
		live, floor uint64
		want        int
	}{
		{"no collection yet: the runtime's default", 0, 32 * mib, 100},
		{"tiny heap: capped", 1 << 10, 32 * mib, maxGCPercent},
		{"small heap: the goal is the floor", 4 * mib, 32 * mib, 700},
		{"half the floor: the goal is the floor", 16 * mib, 32 * mib, 100},
		{"just under the floor less a quarter", 25 * mib, 32 * mib, 28},
		{"a quarter more reaches the floor", 26 * mib, 32 * mib, heldGCPercent},
		{"streams held: a quarter over the live heap", 400 * mib, 32 * mib, heldGCPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := floorPercent(tc.live, tc.floor, heldGCPercent); got != tc.want {
				t.Errorf("floorPercent(%d, %d, %d) = %d, want %d", tc.live, tc.floor, heldGCPercent, got, tc.want)
			}
		})
	}
}

// The floor follows every collection, and a GOGC in the environment turns
// it off; stopping it puts GOGC back.
func TestHeapFloorTunesAfterEachCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if stop := startHeapFloor(func(k string) string { return map[string]string{"GOGC": "50"}[k] }); stop != nil {
		stop()
	}
	if got := gcPercent(); got != 100 {
		t.Fatalf("with GOGC set the floor changed GOGC to %d", got)
	}
	stop := startHeapFloor(func(string) string { return "" })
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
		if p := gcPercent(); p > 100 || time.Now().After(deadline) {
			if p <= 100 {
				t.Fatalf("after collections GOGC is %d, want above 100 for a test's small heap", p)
			}
			break
		}
	}
	stop()
	if got := gcPercent(); got != 100 {
		t.Errorf("after stop GOGC is %d, want 100", got)
	}
}

// gcPercent reads GOGC (setting it and putting it back).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
