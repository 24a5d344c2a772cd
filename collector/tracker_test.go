package collector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func newTestTracker(clock *fakeClock) *Tracker {
	return NewTracker(TrackerOptions{Now: clock.Now})
}

func TestMedianIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, want int }{
		{1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {99, 49}, {100, 50},
	} {
		if got := medianIndex(tc.n); got != tc.want {
			t.Errorf("medianIndex(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestInsertSorted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []time.Duration
		v    time.Duration
		want []time.Duration
	}{
		{"empty", nil, 5, []time.Duration{5}},
		{"front", []time.Duration{2, 3}, 1, []time.Duration{1, 2, 3}},
		{"middle", []time.Duration{1, 3}, 2, []time.Duration{1, 2, 3}},
		{"end", []time.Duration{1, 2}, 3, []time.Duration{1, 2, 3}},
		{"duplicate", []time.Duration{1, 2, 2, 3}, 2, []time.Duration{1, 2, 2, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := insertSorted(slices.Clone(tc.in), tc.v)
			if !slices.Equal(got, tc.want) {
				t.Errorf("insertSorted(%v, %v) = %v, want %v", tc.in, tc.v, got, tc.want)
			}
		})
	}
}

func TestInsertSortedDoesNotAllocateWithinCapacity(t *testing.T) {
	buf := make([]time.Duration, 0, 200)
	allocs := testing.AllocsPerRun(100, func() {
		buf = insertSorted(buf[:0], 3)
		buf = insertSorted(buf, 1)
		buf = insertSorted(buf, 2)
	})
	if allocs != 0 {
		t.Errorf("insertSorted within capacity: %v allocs per run, want 0", allocs)
	}
}

func TestRemoveSorted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []time.Duration
		v    time.Duration
		want []time.Duration
	}{
		{"only", []time.Duration{5}, 5, []time.Duration{}},
		{"first", []time.Duration{1, 2, 3}, 1, []time.Duration{2, 3}},
		{"middle", []time.Duration{1, 2, 3}, 2, []time.Duration{1, 3}},
		{"last", []time.Duration{1, 2, 3}, 3, []time.Duration{1, 2}},
		{"one of duplicates", []time.Duration{1, 2, 2, 3}, 2, []time.Duration{1, 2, 3}},
		{"absent", []time.Duration{1, 3}, 2, []time.Duration{1, 3}},
		{"empty", nil, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := removeSorted(slices.Clone(tc.in), tc.v)
			if !slices.Equal(got, tc.want) {
				t.Errorf("removeSorted(%v, %v) = %v, want %v", tc.in, tc.v, got, tc.want)
			}
		})
	}
}

func TestSampleRingKeepsTakenAtOrder(t *testing.T) {
	t.Parallel()
	r := sampleRing{buf: make([]sample, 4)}
	// Wrap the head around first, so inserts shift across the end of buf.
	r.insertByTime(sample{takenAt: 1})
	r.insertByTime(sample{takenAt: 2})
	r.insertByTime(sample{takenAt: 3})
	r.popFront()
	r.popFront()
	for _, at := range []int64{6, 4, 5} { // 4 and 5 arrive late
		r.insertByTime(sample{takenAt: at})
	}
	var got []int64
	for r.n > 0 {
		got = append(got, r.popFront().takenAt)
	}
	if want := []int64{3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("ring pops %v, want %v", got, want)
	}
}

func TestTrackerDefaults(t *testing.T) {
	t.Parallel()
	tr := NewTracker(TrackerOptions{})
	if tr.window != 100 || tr.maxAge != int64(5*time.Minute) || tr.now == nil {
		t.Errorf("NewTracker(zero options): window %d, maxAge %v, now set %v; want 100, 5m0s, true",
			tr.window, time.Duration(tr.maxAge), tr.now != nil)
	}
}

func TestTrackerP50(t *testing.T) {
	t.Parallel()
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms(i + 1)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(hundred), func(i, j int) { hundred[i], hundred[j] = hundred[j], hundred[i] })

	for _, tc := range []struct {
		name    string
		samples []time.Duration // recorded in this order, 1 s apart
		want    time.Duration
	}{
		{"n=1 the only one", []time.Duration{ms(5)}, ms(5)},
		{"n=2 the larger", []time.Duration{ms(20), ms(10)}, ms(20)},
		{"n=3 the middle", []time.Duration{ms(30), ms(10), ms(20)}, ms(20)},
		{"n=4 the upper middle", []time.Duration{ms(4), ms(1), ms(3), ms(2)}, ms(3)},
		{"n=100 element 50", hundred, ms(51)},
		{"equal samples", []time.Duration{ms(7), ms(7), ms(7)}, ms(7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(t0)
			tr := newTestTracker(clock)
			for _, d := range tc.samples {
				tr.Record("groq", "llama", d, clock.Now())
				clock.Advance(time.Second)
			}
			got, n, ok := tr.P50("groq", "llama")
			if !ok || got != tc.want || n != len(tc.samples) {
				t.Errorf("P50(%q,%q) = %v, %d, %v; want %v, %d, true", "groq", "llama", got, n, ok, tc.want, len(tc.samples))
			}
		})
	}
}

func TestTrackerUnknownKey(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(newFakeClock(t0))
	tr.Record("groq", "llama", ms(100), t0)
	for _, k := range [][2]string{{"groq", "other"}, {"other", "llama"}, {"", ""}} {
		if p, n, ok := tr.P50(k[0], k[1]); ok || p != 0 || n != 0 {
			t.Errorf("P50(%q,%q) = %v, %d, %v; want 0, 0, false", k[0], k[1], p, n, ok)
		}
		if _, ok := tr.Stats(k[0], k[1]); ok {
			t.Errorf("Stats(%q,%q) ok = true, want false", k[0], k[1])
		}
	}
}

func TestTrackerWindowEvictsOldest(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	for i := 1; i <= 100; i++ { // sample i: i ms, taken i s after t0
		clock.Set(t0.Add(time.Duration(i) * time.Second))
		tr.Record("groq", "llama", ms(i), clock.Now())
	}
	if got, n, _ := tr.P50("groq", "llama"); got != ms(51) || n != 100 {
		t.Fatalf("P50 of 1..100 ms = %v over %d, want 51ms over 100", got, n)
	}

	clock.Set(t0.Add(101 * time.Second))
	tr.Record("groq", "llama", ms(101), clock.Now())

	// 1 ms is gone: 2..101 ms remain, whose element 50 is 52 ms.
	got, n, ok := tr.P50("groq", "llama")
	if !ok || got != ms(52) || n != 100 {
		t.Errorf("P50 after the 101st sample = %v, %d, %v; want 52ms, 100, true", got, n, ok)
	}
	st, _ := tr.Stats("groq", "llama")
	if want := 99 * time.Second; st.OldestAge != want { // sample 2, taken at t0+2s
		t.Errorf("OldestAge after the 101st sample = %v, want %v", st.OldestAge, want)
	}
}

func TestTrackerWindowDropsSampleOlderThanAllKept(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0.Add(time.Minute))
	tr := NewTracker(TrackerOptions{Window: 3, Now: clock.Now})
	for i := 1; i <= 3; i++ {
		tr.Record("groq", "llama", ms(100*i), t0.Add(time.Duration(i)*time.Second))
	}
	tr.Record("groq", "llama", ms(1), t0) // late, and older than the three kept

	st, ok := tr.Stats("groq", "llama")
	if want := (KeyStats{Target: "groq", Model: "llama", P50: ms(200), Samples: 3, OldestAge: time.Minute - time.Second}); !ok || st != want {
		t.Errorf("Stats = %+v, %v; want %+v, true", st, ok, want)
	}
}

func TestTrackerExpiresAtExactlyMaxAge(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.Record("groq", "llama", ms(100), t0)

	clock.Set(t0.Add(5*time.Minute - time.Nanosecond))
	if got, n, ok := tr.P50("groq", "llama"); !ok || got != ms(100) || n != 1 {
		t.Errorf("P50 at 5m-1ns = %v, %d, %v; want 100ms, 1, true", got, n, ok)
	}
	clock.Set(t0.Add(5 * time.Minute))
	if got, n, ok := tr.P50("groq", "llama"); ok || n != 0 {
		t.Errorf("P50 at exactly 5m = %v, %d, %v; want 0, 0, false", got, n, ok)
	}
	if all := tr.All(); len(all) != 0 {
		t.Errorf("All() at 5m = %v, want none", all)
	}
}

func TestTrackerMixedExpiry(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	record := func(ttfb time.Duration, at time.Duration) {
		clock.Set(t0.Add(at))
		tr.Record("groq", "llama", ttfb, clock.Now())
	}
	record(ms(100), 0)
	record(ms(300), time.Minute)
	record(ms(200), 2*time.Minute)

	for _, tc := range []struct {
		at      time.Duration // after t0; nothing is recorded in between
		want    time.Duration
		samples int
	}{
		{4 * time.Minute, ms(200), 3},
		{5 * time.Minute, ms(300), 2}, // 100 ms expired: [200 300]
		{6 * time.Minute, ms(200), 1}, // 300 ms expired: [200]
		{7 * time.Minute, 0, 0},
	} {
		clock.Set(t0.Add(tc.at))
		got, n, ok := tr.P50("groq", "llama")
		if got != tc.want || n != tc.samples || ok != (tc.samples > 0) {
			t.Errorf("P50 at t0+%v = %v, %d, %v; want %v, %d, %v", tc.at, got, n, ok, tc.want, tc.samples, tc.samples > 0)
		}
	}
}

// A peer's sample can arrive after a later one; it must still expire on time.
func TestTrackerLateSampleExpiresOnTime(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0.Add(3 * time.Minute))
	tr := newTestTracker(clock)
	tr.Record("groq", "llama", ms(100), t0.Add(2*time.Minute))
	tr.Record("groq", "llama", ms(900), t0.Add(time.Minute)) // arrives late

	clock.Set(t0.Add(6 * time.Minute))
	if got, n, ok := tr.P50("groq", "llama"); !ok || got != ms(100) || n != 1 {
		t.Errorf("P50 at t0+6m = %v, %d, %v; want 100ms, 1, true (the late 900ms sample expired at t0+6m)", got, n, ok)
	}
}

func TestTrackerRecordTimes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		takenAt time.Time // the clock reads t0
		ttfb    time.Duration
		live    bool          // counted right away
		liveAt  time.Duration // checked again this long after t0
		stillIn bool          // and then still counted
	}{
		{"now", t0, ms(1), true, 5*time.Minute - 1, true},
		{"zero means now", time.Time{}, ms(1), true, 5*time.Minute - 1, true},
		{"future clamped to now", t0.Add(time.Hour), ms(1), true, 5 * time.Minute, false},
		{"just live", t0.Add(-5*time.Minute + 1), ms(1), true, 0, true},
		{"already expired", t0.Add(-5 * time.Minute), ms(1), false, 0, false},
		{"far past", time.Date(2, 1, 1, 0, 0, 0, 0, time.UTC), ms(1), false, 0, false},
		{"negative ttfb", t0, -ms(1), false, 0, false},
		{"zero ttfb", t0, 0, true, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(t0)
			tr := newTestTracker(clock)
			tr.Record("groq", "llama", tc.ttfb, tc.takenAt)
			if _, _, ok := tr.P50("groq", "llama"); ok != tc.live {
				t.Errorf("P50 ok right after Record(takenAt %v) = %v, want %v", tc.takenAt, ok, tc.live)
			}
			clock.Set(t0.Add(tc.liveAt))
			if _, _, ok := tr.P50("groq", "llama"); ok != tc.stillIn {
				t.Errorf("P50 ok at t0+%v = %v, want %v", tc.liveAt, ok, tc.stillIn)
			}
		})
	}
}

func TestTrackerStatsAndAll(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	record := func(target, model string, ttfb time.Duration, at time.Duration) {
		clock.Set(t0.Add(at))
		tr.Record(target, model, ttfb, clock.Now())
	}
	record("together", "llama", ms(300), 0)
	record("groq", "mixtral", ms(200), time.Minute)
	record("groq", "llama", ms(100), 2*time.Minute)
	record("groq", "llama", ms(150), 3*time.Minute)
	clock.Set(t0.Add(4 * time.Minute))

	st, ok := tr.Stats("groq", "llama")
	want := KeyStats{Target: "groq", Model: "llama", P50: ms(150), Samples: 2, OldestAge: 2 * time.Minute}
	if !ok || st != want {
		t.Errorf("Stats(%q,%q) = %+v, %v; want %+v, true", "groq", "llama", st, ok, want)
	}
	if oldest := tr.StatsAt("groq", "llama", clock.Now()).Oldest; !oldest.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("StatsAt(%q,%q).Oldest = %v, want %v", "groq", "llama", oldest, t0.Add(2*time.Minute))
	}

	clock.Set(t0.Add(5 * time.Minute)) // together's only sample expires
	got := tr.All()
	wantAll := []KeyStats{
		{Target: "groq", Model: "llama", P50: ms(150), Samples: 2, OldestAge: 3 * time.Minute},
		{Target: "groq", Model: "mixtral", P50: ms(200), Samples: 1, OldestAge: 4 * time.Minute},
	}
	if !slices.Equal(got, wantAll) {
		t.Errorf("All() = %+v, want %+v", got, wantAll)
	}
}

func TestTrackerP50DoesNotAllocate(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	for i := range 100 {
		tr.Record("groq", "llama", ms(i), t0)
	}
	target, model := "groq", "llama"
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, ok := tr.P50(target, model); !ok {
			t.Fatal("P50 lost the samples")
		}
	})
	if allocs != 0 {
		t.Errorf("P50: %v allocs per call, want 0", allocs)
	}
}

func TestTrackerConcurrentRecordAndRead(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := NewTracker(TrackerOptions{Window: 20, MaxAge: time.Second, Now: clock.Now})
	targets := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				target := targets[(w+i)%len(targets)]
				tr.Record(target, "m", ms(10+i%50), clock.Now())
				if i%100 == 0 {
					clock.Advance(100 * time.Millisecond) // expiry races reads too
				}
			}
		})
	}
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, target := range targets {
					if p, n, ok := tr.P50(target, "m"); ok && (p < ms(10) || p >= ms(60) || n > 20) {
						t.Errorf("P50(%q,%q) = %v over %d; want within [10ms,60ms) over at most 20", target, "m", p, n)
						return
					}
				}
				for _, ks := range tr.All() {
					if ks.Samples < 1 || ks.Samples > 20 || ks.OldestAge < 0 || ks.OldestAge >= time.Second {
						t.Errorf("All() row %+v out of bounds", ks)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	for _, target := range targets {
		s := tr.lookup(target, "m")
		s.mu.Lock()
		if !slices.IsSorted(s.sorted) || len(s.sorted) != s.ring.n {
			t.Errorf("series %q: sorted %v (len %d) does not mirror a ring of %d", target, s.sorted, len(s.sorted), s.ring.n)
		}
		s.mu.Unlock()
	}
}

func BenchmarkTrackerRecord(b *testing.B) {
	tr := NewTracker(TrackerOptions{})
	ttfbs := make([]time.Duration, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ttfbs {
		ttfbs[i] = time.Duration(r.Int64N(int64(2 * time.Second)))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tr.Record("groq", "llama-3.3-70b-versatile", ttfbs[i%len(ttfbs)], time.Time{})
		i++
	}
}

func BenchmarkTrackerP50(b *testing.B) {
	tr := NewTracker(TrackerOptions{})
	for i := range 100 {
		for _, target := range []string{"groq", "together", "fireworks"} {
			tr.Record(target, "llama-3.3-70b-versatile", ms(100+i), time.Time{})
		}
	}
	b.Run("one", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := tr.P50("groq", "llama-3.3-70b-versatile"); !ok {
				b.Fatal("no p50")
			}
		}
	})
	// What the router does per request: one read per eligible target.
	b.Run("three-targets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, target := range []string{"groq", "together", "fireworks"} {
				if _, _, ok := tr.P50(target, "llama-3.3-70b-versatile"); !ok {
					b.Fatal("no p50")
				}
			}
		}
	})
	// The tracker's own cost: the same read with a clock that costs nothing
	// (time.Now is a large share of P50 on a VM).
	b.Run("one-fixed-clock", func(b *testing.B) {
		now := time.Now()
		fixed := NewTracker(TrackerOptions{Now: func() time.Time { return now }})
		fixed.Record("groq", "llama-3.3-70b-versatile", ms(100), now)
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := fixed.P50("groq", "llama-3.3-70b-versatile"); !ok {
				b.Fatal("no p50")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, ok := tr.P50("groq", "llama-3.3-70b-versatile"); !ok {
					b.Error("no p50")
					return
				}
			}
		})
	})
}

func ExampleTracker() {
	clock := newFakeClock(t0)
	tr := NewTracker(TrackerOptions{Now: clock.Now})
	tr.Record("groq", "llama", 200*time.Millisecond, clock.Now())
	tr.Record("groq", "llama", 400*time.Millisecond, clock.Now())
	p50, n, ok := tr.P50("groq", "llama")
	fmt.Println(p50, n, ok)
	// Output: 400ms 2 true
}

// TestTrackerBoundsKeys: spans naming ever new targets cannot grow the
// tracker past MaxKeys, and absurd names are refused.
func TestTrackerBoundsKeys(t *testing.T) {
	t.Parallel()
	tr := NewTracker(TrackerOptions{MaxKeys: 3})
	for i := range 10 {
		tr.Record(fmt.Sprintf("t%d", i), "m", time.Millisecond, time.Time{})
	}
	if n := len(tr.All()); n != 3 {
		t.Errorf("keys = %d, want MaxKeys = 3", n)
	}
	if _, _, ok := tr.P50("t0", "m"); !ok {
		t.Errorf("an existing key stopped learning")
	}
	tr.Record("t0", "m", 3*time.Millisecond, time.Time{})
	if _, n, _ := tr.P50("t0", "m"); n != 2 {
		t.Errorf("existing key samples = %d, want 2", n)
	}
	long := NewTracker(TrackerOptions{})
	long.Record(strings.Repeat("x", 1000), "m", time.Millisecond, time.Time{})
	if n := len(long.All()); n != 0 {
		t.Errorf("a 1000-byte target name was kept")
	}
}

func TestTrackerEWMA(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	tr := NewTracker(TrackerOptions{Now: func() time.Time { return now }})
	ms := time.Millisecond
	for i, d := range []time.Duration{100 * ms, 200 * ms, 400 * ms} {
		tr.Record("a", "m", d, now.Add(time.Duration(i)*time.Second-time.Minute))
	}
	// 100 -> 0.3*200+0.7*100 = 130 -> 0.3*400+0.7*130 = 211
	if st := tr.StatsAt("a", "m", now); st.Samples != 3 || st.EWMA != 211*ms {
		t.Errorf("EWMA = %v over %d, want 211ms over 3 samples", st.EWMA, st.Samples)
	}
	// Once the first sample expires the average starts from the second.
	later := now.Add(5*time.Minute - time.Minute + time.Millisecond)
	if st := tr.StatsAt("a", "m", later); st.Samples != 2 || st.EWMA != 260*ms {
		t.Errorf("after expiry EWMA = %v over %d, want 260ms over 2", st.EWMA, st.Samples)
	}
	if st := tr.StatsAt("b", "m", now); st != (stats.Target{}) {
		t.Errorf("StatsAt of an unknown key = %+v, want zero", st)
	}
}

// TestTrackerEWMACountsTimeouts: a timed-out attempt is a sample of what
// it cost in the EWMA (and only there); a quick fault is not.
//
//	20ms ok, 20ms ok, 503 after 5ms, timeout after 200ms  -> EWMA 20 -> 20 -> 74
func TestTrackerEWMACountsTimeouts(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.Record("a", "m", ms(20), t0.Add(-4*time.Second))
	tr.Record("a", "m", ms(20), t0.Add(-3*time.Second))
	tr.RecordFault("a", "m", fault.Full, ms(5), false, t0.Add(-2*time.Second))
	if st := tr.StatsAt("a", "m", t0); st.EWMA != ms(20) {
		t.Errorf("EWMA after a quick 503 = %v, want 20ms (faults that are not timeouts are no sample)", st.EWMA)
	}
	tr.RecordFault("a", "m", fault.Full, ms(200), true, t0.Add(-time.Second))
	st := tr.StatsAt("a", "m", t0)
	if st.EWMA != ms(74) || st.Samples != 2 || st.P50 != ms(20) {
		t.Errorf("after a timeout: EWMA %v, samples %d, p50 %v; want 74ms, 2, 20ms (the p50 counts samples only)", st.EWMA, st.Samples, st.P50)
	}
	// Only timeouts: an EWMA, no sample.
	tr.RecordFault("b", "m", fault.Full, ms(300), true, t0)
	if st := tr.StatsAt("b", "m", t0); st.EWMA != ms(300) || st.Samples != 0 || !st.OnlyFaults() {
		t.Errorf("only a timeout: %+v, want EWMA 300ms, no sample, only faults", st)
	}
}

func TestWeightedMoments(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		xs, ws    []float64
		mean, std float64
	}{
		{"none", nil, nil, 0, 0},
		{"one: no spread", []float64{-1.5}, []float64{1}, -1.5, 0},
		{"two", []float64{1, 3}, []float64{1, 1}, 2, math.Sqrt2},
		{"equal values", []float64{0.25, 0.25, 0.25}, []float64{1, 1, 1}, 0.25, 0},
		{"sample std (n-1)", []float64{2, 4, 4, 4, 5, 5, 7, 9}, []float64{1, 1, 1, 1, 1, 1, 1, 1}, 5, math.Sqrt(32.0 / 7)},
		{"far from zero, tiny spread", []float64{1e6 + 1, 1e6 + 2, 1e6 + 3}, []float64{1, 1, 1}, 1e6 + 2, 1},
		// weights 1 and 3: mean (1*0 + 3*4)/4 = 3; variance with reliability
		// weights: (1*9 + 3*1) / (4 - 10/4) = 12/1.5 = 8
		{"weighted", []float64{0, 4}, []float64{1, 3}, 3, math.Sqrt(8)},
	} {
		var m weightedMoments
		for i, x := range tt.xs {
			m.add(x, tt.ws[i])
		}
		if math.Abs(m.mean()-tt.mean) > 1e-9 || math.Abs(m.std()-tt.std) > 1e-9 {
			t.Errorf("%s: mean, std of %v = %v, %v; want %v, %v", tt.name, tt.xs, m.mean(), m.std(), tt.mean, tt.std)
		}
	}
}

func TestRecencyWeight(t *testing.T) {
	t.Parallel()
	h := int64(stats.RecencyHalfLife)
	for _, tt := range []struct {
		age  int64
		want float64
	}{{-5, 1}, {0, 1}, {h, 0.5}, {2 * h, 0.25}, {10 * h, 1.0 / 1024}} {
		if got := recencyWeight(tt.age); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("recencyWeight(%d) = %v, want %v", tt.age, got, tt.want)
		}
	}
}

func TestLogSeconds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ttfb time.Duration
		want float64
	}{
		{time.Second, 0},
		{ms(100), math.Log(0.1)},
		{time.Microsecond, math.Log(1e-6)},
		{0, math.Log(1e-6)}, // floored: ln 0 would be -Inf
		{time.Nanosecond, math.Log(1e-6)},
	} {
		if got := logSeconds(tt.ttfb); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("logSeconds(%v) = %v, want %v", tt.ttfb, got, tt.want)
		}
	}
}

func TestFaultRate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sum  float64
		n    int
		want float64
	}{
		{0, 0, 0}, {3, 0, 0}, {0, 4, 0}, {1, 4, 0.25}, {1.5, 3, 0.5}, {4, 4, 1}, {5, 4, 1}, {-1, 4, 0},
	} {
		if got := faultRate(tt.sum, tt.n); got != tt.want {
			t.Errorf("faultRate(%v, %d) = %v, want %v", tt.sum, tt.n, got, tt.want)
		}
	}
}

func TestTimeRingSegments(t *testing.T) {
	t.Parallel()
	r := outcomeRing{buf: make([]outcome, 4)}
	insert := func(x outcome) (kept bool) {
		if _, _, ok := r.makeRoom(x); !ok {
			return false
		}
		r.insertByTime(x)
		return true
	}
	for _, at := range []int64{1, 2, 3} {
		insert(outcome{takenAt: at})
	}
	a, b := r.segments()
	if len(a) != 3 || len(b) != 0 {
		t.Fatalf("segments = %v, %v; want 3 entries in one run", a, b)
	}
	for _, at := range []int64{4, 5, 6} { // evicts 1 and 2, wraps around
		insert(outcome{takenAt: at})
	}
	if insert(outcome{takenAt: 0}) { // older than all kept: dropped
		t.Error("an entry older than every one kept was kept")
	}
	a, b = r.segments()
	var got []int64
	for _, x := range slices.Concat(a, b) {
		got = append(got, x.takenAt)
	}
	if want := []int64{3, 4, 5, 6}; !slices.Equal(got, want) || len(b) == 0 {
		t.Errorf("segments hold %v (second run %d long), want %v across the wrap", got, len(b), want)
	}
	if r.back().takenAt != 6 {
		t.Errorf("back = %d, want 6", r.back().takenAt)
	}
}

func TestTrackerFaults(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)

	// Only faults: a fault rate and its cost, but no latency.
	tr.RecordFault("groq", "llama", fault.Full, ms(300), false, t0)
	st := tr.StatsAt("groq", "llama", clock.Now())
	if st.Samples != 0 || st.Outcomes != 1 || st.FaultRate != 1 || !st.OnlyFaults() || st.FaultSeconds != 0.3 || !st.LastOutcome.Equal(t0) {
		t.Errorf("after one fault: %+v; want no sample, 1 outcome, rate 1, only faults, 0.3 s a fault", st)
	}

	// Samples of 100ms and 400ms and a 400 (half): rate (1 + 0.5) / 4; the
	// fault cost is the mean over the faults only.
	tr.Record("groq", "llama", ms(100), t0)
	tr.Record("groq", "llama", ms(400), t0)
	tr.RecordFault("groq", "llama", fault.Half, ms(100), false, t0)
	st = tr.StatsAt("groq", "llama", clock.Now())
	wantStd := math.Log(4) / math.Sqrt2
	if st.Samples != 2 || math.Abs(st.LogMean-math.Log(0.2)) > 1e-12 || math.Abs(st.LogStd-wantStd) > 1e-12 ||
		st.Faults != 1.5 || st.FaultRate != 1.5/4 || math.Abs(st.FaultSeconds-0.2) > 1e-12 || st.OnlyFaults() {
		t.Errorf("mixed: %+v; want 2 samples, ln 0.2, std %v, faults 1.5 of 4, 0.2 s a fault", st, wantStd)
	}

	// FaultNone is not an outcome.
	tr.RecordFault("groq", "llama", fault.None, ms(1), false, t0)
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.Outcomes != 4 {
		t.Errorf("outcomes after a FaultNone = %d, want 4", st.Outcomes)
	}
}

// TestTrackerRecencyWeights: the log moments and the weighted outcome
// counts weigh each entry 2^(-age/half-life) from the newest.
//
//	400ms two half-lives before 100ms: weights 0.25 and 1
func TestTrackerRecencyWeights(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	h := stats.RecencyHalfLife
	tr.Record("a", "m", ms(400), t0.Add(-2*h))
	tr.RecordFault("a", "m", fault.Full, ms(10), false, t0.Add(-2*h))
	tr.Record("a", "m", ms(100), t0)
	st := tr.StatsAt("a", "m", t0)
	wantMean := (0.25*math.Log(0.4) + math.Log(0.1)) / 1.25
	if math.Abs(st.LogMean-wantMean) > 1e-12 || math.Abs(st.LogWeight-1.25) > 1e-12 {
		t.Errorf("LogMean, LogWeight = %v, %v; want %v, 1.25", st.LogMean, st.LogWeight, wantMean)
	}
	// outcomes: success 0.25, fault 0.25, success 1
	if math.Abs(st.WeightedOutcomes-1.5) > 1e-12 || math.Abs(st.WeightedFaults-0.25) > 1e-12 {
		t.Errorf("WeightedOutcomes, WeightedFaults = %v, %v; want 1.5, 0.25", st.WeightedOutcomes, st.WeightedFaults)
	}
	if !st.Newest.Equal(t0) || !st.Oldest.Equal(t0.Add(-2*h)) || !st.LastSeen().Equal(t0) {
		t.Errorf("Newest %v Oldest %v LastSeen %v", st.Newest, st.Oldest, st.LastSeen())
	}
}

func TestTrackerOrigins(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.RecordSample("a", "m", ms(10), t0, OriginSelf)
	tr.RecordSample("a", "m", ms(10), t0, OriginPeer)
	tr.RecordSample("a", "m", ms(10), t0, OriginPeer)
	tr.RecordSample("a", "m", ms(10), t0, OriginForeign)
	tr.RecordSample("a", "m", ms(10), t0, Origin(9)) // no such origin: dropped
	st := tr.StatsAt("a", "m", t0)
	if st.SelfSamples != 1 || st.PeerSamples != 2 || st.ForeignSamples != 1 || st.Samples != 4 {
		t.Errorf("origins self %d peers %d foreign %d of %d; want 1 2 1 of 4", st.SelfSamples, st.PeerSamples, st.ForeignSamples, st.Samples)
	}
}

func TestTrackerRetain(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.Record("keep", "m", ms(10), t0)
	tr.Record("drop", "m", ms(10), t0)
	tr.Retain(func(target, _ string) bool { return target == "keep" })
	if tr.Keys() != 1 || tr.StatsAt("keep", "m", t0).Samples != 1 || tr.StatsAt("drop", "m", t0).Samples != 0 {
		t.Errorf("after Retain: %d keys, keep %d samples, drop %d", tr.Keys(), tr.StatsAt("keep", "m", t0).Samples, tr.StatsAt("drop", "m", t0).Samples)
	}
}

func TestTrackerOutcomesExpireAndSlide(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := NewTracker(TrackerOptions{Now: clock.Now, Window: 4})
	tr.Record("groq", "llama", ms(100), t0)
	tr.RecordFault("groq", "llama", fault.Full, 0, false, t0.Add(time.Minute))
	clock.Advance(2 * time.Minute)

	// Window 4: the first fault and the success slide out.
	for range 3 {
		tr.RecordFault("groq", "llama", fault.Full, 0, false, time.Time{})
	}
	tr.Record("groq", "llama", ms(100), time.Time{})
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.FaultRate != 0.75 {
		t.Errorf("fault rate over the last 4 = %v, want 0.75", st.FaultRate)
	}

	// 5 minutes after the faults and the second success, everything has
	// expired, and P50 agrees.
	clock.Advance(DefaultMaxAge)
	if st := tr.StatsAt("groq", "llama", clock.Now()); st != (stats.Target{}) {
		t.Errorf("after expiry: %+v, want nothing live", st)
	}
	if _, _, ok := tr.P50("groq", "llama"); ok {
		t.Error("P50 after expiry: ok")
	}
}

// TestTrackerOutcomeExpiryRepublishes: an outcome older than every sample
// makes the stats go stale when it expires, not when the samples do.
func TestTrackerOutcomeExpiryRepublishes(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.RecordFault("groq", "llama", fault.Full, 0, false, t0)
	clock.Advance(time.Minute)
	tr.Record("groq", "llama", ms(100), time.Time{})
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.FaultRate != 0.5 {
		t.Fatalf("fault rate = %v, want 0.5", st.FaultRate)
	}
	clock.Set(t0.Add(DefaultMaxAge))
	if st := tr.StatsAt("groq", "llama", clock.Now()); st.Samples != 1 || st.FaultRate != 0 || st.Outcomes != 1 {
		t.Errorf("once the fault expired: %+v; want 1 sample, rate 0 over 1 outcome", st)
	}
}

func TestTrackerStatsAtDoesNotAllocate(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	for i := range 100 {
		tr.Record("groq", "llama", ms(i), t0)
		tr.RecordFault("groq", "llama", fault.Half, ms(3), false, t0)
	}
	now := clock.Now()
	allocs := testing.AllocsPerRun(1000, func() {
		if st := tr.StatsAt("groq", "llama", now); st.Samples == 0 {
			t.Fatal("StatsAt lost the samples")
		}
	})
	if allocs != 0 {
		t.Errorf("StatsAt: %v allocs per call, want 0", allocs)
	}
}

// TestDecayingSumsMatchARecount: after thousands of samples through a small
// window (adds, evictions, expiries, late arrivals), the incremental sums
// equal a recount from the live samples.
func TestDecayingSumsMatchARecount(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	tr := NewTracker(TrackerOptions{Now: clock.Now, Window: 20, MaxAge: 3 * time.Second})
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		clock.Advance(time.Duration(r.IntN(20)) * time.Millisecond)
		at := clock.Now().Add(-time.Duration(r.IntN(50)) * time.Millisecond) // some arrive late
		if i%7 == 0 {
			tr.RecordFault("a", "m", fault.Full, ms(5), false, at)
			continue
		}
		tr.Record("a", "m", time.Duration(10+r.IntN(90))*time.Millisecond, at)
	}
	s := tr.lookup("a", "m")
	s.mu.Lock()
	defer s.mu.Unlock()
	var m weightedMoments
	newest := s.ring.back().takenAt
	a, b := s.ring.segments()
	for _, seg := range [2][]sample{a, b} {
		for _, x := range seg {
			m.add(x.logTTFB, recencyWeight(newest-x.takenAt))
		}
	}
	if d := s.logSums; math.Abs(d.mean()-m.mean()) > 1e-9 || math.Abs(d.std()-m.std()) > 1e-9 || math.Abs(d.weight()-m.v1) > 1e-9 {
		t.Errorf("incremental mean %v std %v weight %v; recount %v %v %v", d.mean(), d.std(), d.weight(), m.mean(), m.std(), m.v1)
	}
}

// TestAttemptsWithoutASampleEndTheColdClaim: every attempt that gives no
// sample counts, whatever it was (a fault, a late hedge, an answer that
// was the client's own); at stats.ColdTries of them, live, the target
// ranks last; a sample, or their expiry, ends that.
func TestAttemptsWithoutASampleEndTheColdClaim(t *testing.T) {
	clock := newFakeClock(t0)
	tr := newTestTracker(clock)
	tr.RecordTry("a", "m", time.Time{})
	tr.RecordLate("a", "m", time.Second, time.Time{}, OriginSelf)
	if st := tr.StatsAt("a", "m", clock.Now()); st.Unsampled != 2 || st.RanksLast() {
		t.Fatalf("after 2 tries: Unsampled %d, RanksLast %v; want 2, false", st.Unsampled, st.RanksLast())
	}
	clock.Advance(time.Second)
	tr.RecordTry("a", "m", time.Time{})
	if st := tr.StatsAt("a", "m", clock.Now()); st.Unsampled != 3 || !st.RanksLast() {
		t.Fatalf("after 3 tries: Unsampled %d, RanksLast %v; want 3, true", st.Unsampled, st.RanksLast())
	}
	for range 5 {
		tr.RecordTry("a", "m", time.Time{})
	}
	if st := tr.StatsAt("a", "m", clock.Now()); st.Unsampled != 3 {
		t.Fatalf("after 8 tries: Unsampled %d, want 3 (the last ColdTries)", st.Unsampled)
	}
	clock.Advance(DefaultMaxAge)
	if st := tr.StatsAt("a", "m", clock.Now()); st.Unsampled != 0 || st.RanksLast() {
		t.Fatalf("expired: Unsampled %d, RanksLast %v; want 0, false", st.Unsampled, st.RanksLast())
	}
	for range 3 {
		tr.RecordTry("b", "m", time.Time{})
	}
	tr.RecordSample("b", "m", 50*time.Millisecond, time.Time{}, OriginSelf)
	if st := tr.StatsAt("b", "m", clock.Now()); st.RanksLast() {
		t.Fatal("a sampled target ranks last")
	}
}
