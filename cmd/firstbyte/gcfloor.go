package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The gateway's live heap is small (3-4 MiB under load: routing state,
// pools, the requests in flight) while it allocates about 15 KiB a
// request, most of it the OpenTelemetry SDK's spans. With GOGC=100 the
// collector then runs every 4 MiB or so of allocation: 133 collections in
// 21,000 requests at 32 clients, each waking both cores' workers and
// scanning every goroutine's stack, a fifth of the gateway's instructions.
// The heap floor lets the heap grow to gcHeapFloor before a collection
// while the live heap is small, and leaves the collector as GOGC=100 has
// it once the live heap is large (thousands of open streams, large answers
// held): it costs at most the floor in memory, which the idle trim
// (memtrim.go) gives back. Callgrind on the real binary, 32 clients,
// zero-delay upstream, instructions a request: no floor 306k, 8 MiB 287k,
// 16 MiB 254k, 32 MiB 246k, 64 MiB 241k (docs/benchmarks.md).
//
// A large live heap is mostly streams held open (thousands of slow chat
// streams, each a connection, its buffers and its goroutines' stacks),
// which allocate little while they wait: GOGC=100 would let the heap grow
// to twice their bytes before a collection, and the process's RSS follows
// the heap's peak. Above the floor the heap may grow by heldGCPercent of
// the live heap instead, so RSS stays near what the streams hold; the
// collections it adds are few, since held streams allocate slowly, and
// none at all while the live heap is under the floor (the throughput
// runs: 3-4 MiB live).
//
// A GOGC in the environment is the operator's choice: the floor is off.

// gcHeapFloor is the heap size the collector lets the heap reach before
// it runs, however small the live heap.
const gcHeapFloor = 32 << 20

// maxGCPercent bounds the percentage the floor sets when the live heap is
// tiny (the runtime's own minimum heap is 4 MiB).
const maxGCPercent = 2000

// heldGCPercent is the percentage once the live heap is large enough that
// it reaches the floor: the heap grows a quarter past the live heap, not
// twice it.
const heldGCPercent = 25

// heapFloor re-tunes GOGC after every collection: the percentage that
// makes the next heap goal the floor, or base when the live heap is large
// enough that base reaches it anyway.
type heapFloor struct {
	floor   uint64
	base    int // the GOGC above the floor (heldGCPercent)
	stopped atomic.Bool
	sample  []metrics.Sample
}

// startHeapFloor starts the floor unless GOGC is set; stop ends it and
// puts GOGC back.
func startHeapFloor(getenv func(string) string) (stop func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	f := &heapFloor{floor: gcHeapFloor, base: heldGCPercent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	f.tune()
	f.arm()
	return func() {
		f.stopped.Store(true)
		debug.SetGCPercent(100)
	}
}

// gcSentinel is garbage made to be collected: its finalizer runs once a
// collection has found it unreachable, that is after every cycle.
type gcSentinel struct {
	f *heapFloor
	_ [16]byte // a finalizer needs an object of its own, not a tiny-alloc neighbour
}

func (f *heapFloor) arm() {
	runtime.SetFinalizer(&gcSentinel{f: f}, func(s *gcSentinel) {
		if s.f.stopped.Load() {
			return
		}
		s.f.tune()
		s.f.arm()
	})
}

// tune sets GOGC for the live heap the last collection found.
func (f *heapFloor) tune() {
	metrics.Read(f.sample)
	live := uint64(0)
	if f.sample[0].Value.Kind() == metrics.KindUint64 {
		live = f.sample[0].Value.Uint64()
	}
	debug.SetGCPercent(floorPercent(live, f.floor, f.base))
}

// floorPercent is the GOGC that puts the next heap goal, live bytes plus
// that percentage of them, at floor; base when base already reaches it.
func floorPercent(live, floor uint64, base int) int {
	if live == 0 { // no collection yet: nothing to go on, the runtime's default
		return 100
	}
	if live+live*uint64(base)/100 >= floor {
		return base
	}
	return min(int((floor-live)*100/live), maxGCPercent)
}
