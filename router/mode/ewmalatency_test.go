package mode

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// ewmaStats is one target seen by ewma-latency: its EWMA and when it last
// taught anything.
func ewmaStats(ewma time.Duration, seen time.Time) stats.Target {
	return stats.Target{Samples: 5, P50: ewma, EWMA: ewma, Newest: seen, Outcomes: 5}
}

func TestEWMALatencyOrder(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	fresh := t0.Add(-100 * ms)
	tests := []struct {
		name          string
		stats         statsTable
		want          []string
		wantSelection string
	}{
		{"ranks on the EWMA, not the p50",
			statsTable{
				"a": {Samples: 5, P50: 100 * ms, EWMA: 500 * ms, Newest: fresh}, // a just got slow
				"b": {Samples: 5, P50: 200 * ms, EWMA: 150 * ms, Newest: fresh},
				"c": {Samples: 5, P50: 300 * ms, EWMA: 400 * ms, Newest: fresh},
			}, []string{"b", "c", "a"}, "leader"},
		{"unmeasured first",
			statsTable{"a": ewmaStats(100*ms, fresh), "b": ewmaStats(50*ms, fresh)},
			[]string{"c", "b", "a"}, "cold"},
		{"a target that only timed out has an EWMA of what the timeouts cost",
			statsTable{
				"a": {EWMA: 200 * ms, Outcomes: 2, Faults: 2, LastOutcome: fresh},
				"b": ewmaStats(40*ms, fresh), "c": ewmaStats(80*ms, fresh),
			}, []string{"b", "c", "a"}, "leader"},
		{"a target that only faulted fast ranks last",
			statsTable{
				"a": {Outcomes: 2, Faults: 2, LastOutcome: fresh},
				"b": ewmaStats(90*ms, fresh), "c": ewmaStats(80*ms, fresh),
			}, []string{"c", "b", "a"}, "leader"},
		{"a stale runner-up is re-measured: the stalest leads one request",
			statsTable{
				"a": ewmaStats(20*ms, fresh),
				"b": ewmaStats(40*ms, t0.Add(-ewmaProbeEvery)),
				"c": ewmaStats(80*ms, t0.Add(-3*ewmaProbeEvery)),
			}, []string{"c", "a", "b"}, "explore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New("ewma-latency", Deps{Stats: tt.stats, Now: fixedNow, Rand: &scriptedRand{ints: []int{0, 0, 0}}})
			if err != nil {
				t.Fatal(err)
			}
			got, sel := s.Order(nil, "m", newCandidates("a", "b", "c"))
			if !slices.Equal(names(got), tt.want) || sel != tt.wantSelection {
				t.Errorf("Order = %v %s, want %v %s", names(got), sel, tt.want, tt.wantSelection)
			}
		})
	}
}

// TestEWMALatencyProbesAreBounded: however many requests arrive at once,
// a stale runner-up gets one probe per interval.
func TestEWMALatencyProbesAreBounded(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	var now atomic.Int64
	now.Store(t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	stats := statsTable{"a": ewmaStats(20*ms, t0), "b": ewmaStats(40*ms, t0.Add(-time.Minute))}
	s, _ := New("ewma-latency", Deps{Stats: stats, Now: clock})
	cands := newCandidates("a", "b")
	probes := func() int {
		var n atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if got, sel := s.Order(nil, "m", cands); sel == "explore" && got[0].Target == "b" {
						n.Add(1)
					}
				}
			})
		}
		wg.Wait()
		return int(n.Load())
	}
	if n := probes(); n != 1 {
		t.Errorf("400 requests in one instant: %d probes of b, want 1", n)
	}
	now.Add(int64(ewmaProbeEvery) - 1)
	if n := probes(); n != 0 {
		t.Errorf("within the interval: %d probes, want 0", n)
	}
	now.Add(1)
	if n := probes(); n != 1 {
		t.Errorf("after the interval: %d probes, want 1", n)
	}
}

func TestEWMALatencyRank(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	s, _ := New("ewma-latency", Deps{Stats: statsTable{"a": ewmaStats(300*ms, t0), "b": ewmaStats(150*ms, t0)}, Now: fixedNow})
	got, leader := s.Rank(nil, "m", newCandidates("a", "b"))
	if !slices.Equal(rankedNames(got), []string{"b", "a"}) || leader != 0 || got[0].Score != 0.15 {
		t.Errorf("Rank = %+v leader %d, want b (0.15 s) leading", got, leader)
	}
}

func TestEWMALatencyOrderDoesNotAllocate(t *testing.T) {
	ms := time.Millisecond
	stats := statsTable{"a": ewmaStats(20*ms, t0), "b": ewmaStats(40*ms, t0), "c": ewmaStats(80*ms, t0)}
	s, _ := New("ewma-latency", Deps{Stats: stats, Now: fixedNow})
	cands := newCandidates("a", "b", "c")
	buf := make([]*Candidate, 0, 16)
	if allocs := testing.AllocsPerRun(100, func() { s.Order(buf[:0], "m", cands) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
}
