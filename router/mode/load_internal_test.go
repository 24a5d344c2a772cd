package mode

import (
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// queued is a target that answers in p50 when idle and whose load curve
// says it answers in 4x that with 4 attempts in flight; peers says how
// many peers' attempts are in flight there now.
func queued(p50 time.Duration, peers int) stats.Target {
	st := target(p50, 0.1, 100, 100, 0, 0)
	st.Load[0], st.Load[3] = 1, 4
	st.PeerInflight = peers
	return st
}

// TestLoadReordersEveryLatencyMode: each latency mode ranks a target that
// is fast when idle after a slower one once the load a new request would
// meet there (its curve at own + peers' + 1 in flight) makes it slower,
// and back in front once the queue drains.
func TestLoadReordersEveryLatencyMode(t *testing.T) {
	ms := time.Millisecond
	modes := map[string]func(StatsSource) Strategy{
		"least-latency": func(s StatsSource) Strategy { return newLeastLatency(s, fixedNow, &scriptedRand{}) },
		"ewma-latency": func(s StatsSource) Strategy {
			return &ewmaLatency{stats: s, now: fixedNow, rand: &scriptedRand{}, every: ewmaProbeEvery}
		},
		"reliable-latency": func(s StatsSource) Strategy { return newReliableLatency(s, fixedNow, defaultRand) },
	}
	for name, mk := range modes {
		t.Run(name, func(t *testing.T) {
			for _, tt := range []struct {
				peers int
				want  []string
			}{
				{0, []string{"fast", "steady"}}, // idle: 100 ms beats 200 ms
				{1, []string{"fast", "steady"}}, // 2 in flight: the curve has nothing above idle below 4, read from idle
				{3, []string{"steady", "fast"}}, // 4 in flight: 400 ms
				{9, []string{"steady", "fast"}}, // past the curve's last level: its last known level
			} {
				st := statsTable{"fast": queued(100*ms, tt.peers), "steady": target(200*ms, 0.1, 100, 100, 0, 0)}
				got, leader := mk(st).Rank(nil, "m", newCandidates("fast", "steady"))
				if !slices.Equal(rankedNames(got), tt.want) || leader != 0 {
					t.Errorf("%d peers' attempts in flight: Rank = %v leader %d, want %v leader 0", tt.peers, rankedNames(got), leader, tt.want)
				}
			}
		})
	}
}

// TestNearTiesSpreadUnderLoad: while the leader is building a queue, a
// runner-up within nearTieMargin of it (its peers share the queue) leads half the time (a coin from
// the injected source), so replicas reading the same samples do not all
// move at once; idle, or further apart, the order stands.
func TestNearTiesSpreadUnderLoad(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name  string
		fast  stats.Target
		other time.Duration
		coin  int
		want  []string
	}{
		{"queued, near-tied, heads", queued(100*ms, 1), 210 * ms, 0, []string{"steady", "fast"}}, // 100 x 2 = 200 against 210
		{"queued, near-tied, tails", queued(100*ms, 1), 210 * ms, 1, []string{"fast", "steady"}},
		{"queued, past the margin", queued(100*ms, 1), 350 * ms, 0, []string{"fast", "steady"}},
		{"idle, near-tied", queued(100*ms, 0), 110 * ms, 0, []string{"fast", "steady"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fast := tt.fast
			fast.Load[1] = 2 // two in flight: twice as slow
			st := statsTable{"fast": fast, "steady": target(tt.other, 0.01, 100, 100, 0, 0)}
			for mode, s := range map[string]Strategy{
				"least-latency": newLeastLatency(st, fixedNow, &scriptedRand{ints: []int{9, tt.coin}}),
				"ewma-latency":  &ewmaLatency{stats: st, now: fixedNow, rand: &scriptedRand{ints: []int{tt.coin}}, every: time.Hour},
			} {
				got, sel := s.Order(nil, "m", newCandidates("fast", "steady"))
				if !slices.Equal(names(got), tt.want) || sel != "leader" {
					t.Errorf("%s: Order = %v %s, want %v leader", mode, names(got), sel, tt.want)
				}
			}
		})
	}
}

// TestNearTiesSpreadForAHoldAfterTheQueue: once the leader held a queue
// its peers share, the coin stays in play for nearTieHold over
// nearTieMargin (the hysteresis that keeps a replica's leader from
// swinging as the queue comes and goes), and only then does the faster
// target lead alone again; a queue of this gateway's alone starts no hold.
func TestNearTiesSpreadForAHoldAfterTheQueue(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	loaded, idle := queued(100*ms, 1), queued(100*ms, 0)
	loaded.Load[1], idle.Load[1] = 2, 2
	st := statsTable{"fast": loaded}
	cs := newCandidates("fast", "steady")
	order := func(now time.Time, coin int) []string {
		out := slices.Clone(cs)
		spreadNearTie(out, []float64{100, 160}, st, now, &scriptedRand{ints: []int{coin}})
		return names(out)
	}
	// Alone (no peer in flight) and 1.6x apart: no coin, no hold.
	alone := loaded
	alone.PeerInflight, alone.Load[0], alone.Load[1] = 0, 1, 2 // own 0 + 1: k = 1, idle curve
	st["fast"] = alone
	if got := order(t0, 0); !slices.Equal(got, []string{"fast", "steady"}) {
		t.Fatalf("alone, 1.6x apart: %v, want the faster first", got)
	}
	st["fast"] = loaded
	if got := order(t0, 0); !slices.Equal(got, []string{"steady", "fast"}) {
		t.Fatalf("loaded, heads: %v, want the runner-up first", got)
	}
	st["fast"] = idle
	if got := order(t0.Add(nearTieHold-ms), 0); !slices.Equal(got, []string{"steady", "fast"}) {
		t.Fatalf("idle within the hold, heads: %v, want the runner-up first", got)
	}
	if got := order(t0.Add(nearTieHold-ms), 1); !slices.Equal(got, []string{"fast", "steady"}) {
		t.Fatalf("idle within the hold, tails: %v, want the leader first", got)
	}
	if got := order(t0.Add(nearTieHold), 0); !slices.Equal(got, []string{"fast", "steady"}) {
		t.Fatalf("idle for the hold: %v, want the faster first, no coin", got)
	}
	// Loaded again: the hold starts over.
	st["fast"] = loaded
	order(t0.Add(10*time.Second), 1)
	st["fast"] = idle
	if got := order(t0.Add(10*time.Second+nearTieHold-ms), 0); !slices.Equal(got, []string{"steady", "fast"}) {
		t.Fatalf("within a new hold: %v, want the runner-up first", got)
	}
}
