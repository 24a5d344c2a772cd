package study

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

const msec = time.Millisecond

// Two slots: the third attempt waits for the slot that frees first, the
// fourth for the next; first come, first served.
func TestStudySlotsServeFirstComeFirstServed(t *testing.T) {
	s := newSlots(2)
	type arrival struct {
		at, service time.Duration
		wantWait    time.Duration
	}
	arrivals := []arrival{
		{0, 30 * msec, 0},
		{1 * msec, 10 * msec, 0},
		{2 * msec, 10 * msec, 9 * msec},  // the second slot frees at 11 ms
		{3 * msec, 10 * msec, 18 * msec}, // then the second again, at 21 ms (the first frees at 30)
		{40 * msec, 5 * msec, 0},
	}
	for i, a := range arrivals {
		slot, wait := s.wait(a.at)
		if wait != a.wantWait {
			t.Fatalf("arrival %d at %s: wait %s, want %s", i, a.at, wait, a.wantWait)
		}
		s.take(slot, a.at+wait+a.service)
	}
	if _, wait := newSlotsOf(t, 0).wait(time.Hour); wait != 0 {
		t.Errorf("no limit: wait %s, want 0", wait)
	}
}

func newSlotsOf(t *testing.T, n int) *slots {
	t.Helper()
	s := newSlots(n)
	return &s
}

// A cancelled attempt gives its slot back at once when nobody waits
// behind it there, and not before the attempt ahead of it is done.
func TestStudySlotsRelease(t *testing.T) {
	s := newSlots(1)
	first := s.take(0, 20*msec) // served 0-20 ms
	_, wait := s.wait(5 * msec) // waits 15 ms
	second := s.take(0, 20*msec+10*msec)
	if wait != 15*msec {
		t.Fatalf("second waits %s, want 15ms", wait)
	}
	s.release(first, 8*msec) // someone waits behind it: it is worked off
	if _, w := s.wait(8 * msec); w != 22*msec {
		t.Errorf("after releasing the first under the second: wait %s, want 22ms", w)
	}
	s.release(second, 12*msec) // cancelled while it waited: the slot is free when the first is done
	if _, w := s.wait(12 * msec); w != 8*msec {
		t.Errorf("after releasing the waiting second: wait %s, want 8ms (the first ends at 20ms)", w)
	}
	if !s.room(20 * msec) {
		t.Errorf("no room at 20ms, when the first is done")
	}
}

// The provider's time to first byte is the wait for a slot, then its
// draw; a conversation it answered within CacheTTL takes CacheSpeedup of
// it and is a cache hit; the draws are the same either way.
func TestStudyProviderQueuesAndCaches(t *testing.T) {
	target := Target{Name: "t20", Median: 20 * msec, Slots: 1}
	b := Behaviour{Median: 20 * msec}
	plain, cached := newProvider(9, 2, target), newProvider(9, 2, target)
	cached.saw(7, 0)
	a := attempt{b: b, firstByte: DefaultFirstByte, conv: 7}
	cold, coldTook, _ := plain.answer(a)
	hot, hotTook, _ := cached.answer(a)
	if cold.CacheHit || !hot.CacheHit {
		t.Errorf("CacheHit cold %v, hot %v; want false, true", cold.CacheHit, hot.CacheHit)
	}
	if want := time.Duration(float64(coldTook) * CacheSpeedup); hotTook < want-1 || hotTook > want+1 {
		t.Errorf("cached answer took %s, want %s (half of %s)", hotTook, want, coldTook)
	}
	// The one slot is busy until the first answer: the next one waits.
	second, took, h := plain.answer(attempt{b: b, firstByte: DefaultFirstByte, t: msec, conv: -1})
	if h.before != coldTook || took <= coldTook-msec || second.TTFB != took {
		t.Errorf("second attempt: took %s (TTFB %s) holding a slot free at %s; want a wait of %s and then its draw",
			took, second.TTFB, h.before, coldTook-msec)
	}
	if cached.cached(7, CacheTTL) || !cached.cached(7, CacheTTL-1) || cached.cached(-1, 0) {
		t.Errorf("cache life: want the prefix cached for CacheTTL after it was seen, and no conversation never cached")
	}
}

func TestStudyLeaderChanges(t *testing.T) {
	tests := []struct {
		name  string
		picks [][]int
		want  int
	}{
		{"one leader", [][]int{{50, 10, 0}, {40, 20, 10}, {90, 0, 0}}, 0},
		{"a change and back", [][]int{{50, 10, 0}, {10, 50, 0}, {50, 10, 0}}, 2},
		{"a tie keeps the leader", [][]int{{10, 50, 0}, {30, 30, 0}, {0, 40, 40}}, 0},
		{"a lead within the margin keeps the leader", [][]int{{50, 40, 0}, {40, 50, 0}, {30, 50, 0}}, 0}, // 10, 20 <= 3 x sqrt(90), 3 x sqrt(80)
		{"a lead past the margin changes it", [][]int{{50, 40, 0}, {20, 50, 0}}, 1},                      // 30 > 3 x sqrt(70)
		{"a new leader among a tie: the first declared", [][]int{{0, 0, 50}, {30, 30, 0}}, 1},
		{"an empty window keeps the leader", [][]int{{50, 0, 0}, {0, 0, 0}, {50, 0, 0}}, 0},
		{"the first leader is no change", [][]int{{0, 0, 0}, {0, 2, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LeaderChanges(tt.picks); got != tt.want {
				t.Errorf("LeaderChanges(%v) = %d, want %d", tt.picks, got, tt.want)
			}
		})
	}
}

// The coarse grid covers every split in tenths; a move shifts one step
// between two targets and never below zero.
func TestStudySplits(t *testing.T) {
	grid := splits(3, splitUnits, splitCoarse)
	if len(grid) != 66 {
		t.Errorf("%d splits in tenths of three targets, want 66", len(grid))
	}
	for _, w := range grid {
		if w[0]+w[1]+w[2] != splitUnits {
			t.Fatalf("split %v does not add up to %d", w, splitUnits)
		}
	}
	got := moves([]int{0, 10, 10}, 1)
	want := [][]int{{1, 9, 10}, {0, 9, 11}, {1, 10, 9}, {0, 11, 9}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("moves({0, 10, 10}) = %v, want %v", got, want)
	}
}

// The split oracle sends each target its share; the best split of
// (capacity) uses every target, as neither fast one can take the load
// alone.
func TestStudySplitOracle(t *testing.T) {
	t.Parallel()
	s := capacityScenario()
	w := []int{8, 2, 10}
	r, err := runSplit(context.Background(), s, 4, 4*time.Second, w)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Targets {
		want := float64(w[i]) / splitUnits
		if got := r.PickShare(i); got < want-0.03 || got > want+0.03 {
			t.Errorf("%s: %.3f of the first picks, want %.2f", s.Targets[i].Name, got, want)
		}
	}
	best, err := searchSplit(context.Background(), s, 4, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(best.Split, 0) || best.Mean() > r.Mean() || best.SplitsTried < 66 {
		t.Errorf("best split %v (mean %s, %d tried); want every target used, no worse than %v's %s", best.Split, best.Mean(),
			best.SplitsTried, w, r.Mean())
	}
}

// Each replica's span goes to its own consumer as its own, then to every
// replica's (its own included) as a peer's, as the collector fans out.
func TestStudyFanOut(t *testing.T) {
	var got []string
	fleet := []PeerConsumer{&recorder{"0", &got}, &recorder{"1", &got}, &recorder{"2", &got}}
	if err := (fanOut{own: fleet[1], fleet: fleet}).ConsumeTraces(context.Background(), ptrace.NewTraces()); err != nil {
		t.Fatal(err)
	}
	want := []string{"own 1", "peer 0", "peer 1", "peer 2"}
	if !slices.Equal(got, want) {
		t.Errorf("fan-out of replica 1's span: %v, want %v", got, want)
	}
}

type recorder struct {
	name string
	log  *[]string
}

func (r *recorder) ConsumeTraces(context.Context, ptrace.Traces) error {
	*r.log = append(*r.log, "own "+r.name)
	return nil
}

func (r *recorder) ConsumePeerTraces(context.Context, ptrace.Traces) error {
	*r.log = append(*r.log, "peer "+r.name)
	return nil
}
