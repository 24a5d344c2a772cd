package mode

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// statsTable is a StatsSource from a table keyed by target (the model is
// always "m" here): the tracker's contract without its window maths, which
// the collector tests. Keyed by target alone so a lookup does not allocate.
type statsTable map[string]stats.Target

func (s statsTable) StatsAt(target, _ string, _ time.Time) stats.Target { return s[target] }

// p50s builds a table of targets with one sample each at the given p50.
func p50s(m map[string]time.Duration) statsTable {
	out := statsTable{}
	for k, d := range m {
		out[k] = stats.Target{Samples: 1, P50: d, EWMA: d, Outcomes: 1, LogMean: math.Log(d.Seconds()), LogWeight: 1}
	}
	return out
}

// scriptedRand answers IntN from a script (each value taken modulo n) and
// Float64 from another, so an order is exact.
type scriptedRand struct {
	ints   []int
	floats []float64
}

func (r *scriptedRand) IntN(n int) int {
	if len(r.ints) == 0 {
		return n - 1 // never 0: "do not explore"
	}
	v := r.ints[0]
	r.ints = r.ints[1:]
	return v % n
}

func (r *scriptedRand) Float64() float64 {
	if len(r.floats) == 0 {
		return 0
	}
	v := r.floats[0]
	r.floats = r.floats[1:]
	return v
}

func newCandidates(specs ...string) []*Candidate {
	cs := make([]*Candidate, len(specs))
	for i, s := range specs {
		cs[i] = &Candidate{Target: s, Model: "m", Index: i, Weight: 1, Tries: 1}
	}
	return cs
}

func names(cs []*Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Target
	}
	return out
}

func rankedNames(rs []Ranked) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Candidate.Target
	}
	return out
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

func TestLeastLatencyOrder(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	onlyFaults := stats.Target{Outcomes: 3, Faults: 3, FaultRate: 1}
	tests := []struct {
		name          string
		stats         statsTable
		rand          *scriptedRand
		want          []string
		wantSelection string
	}{
		{"all sampled, no exploration: ascending p50",
			p50s(map[string]time.Duration{"groq": 300 * ms, "openai": 600 * ms, "anthropic": 900 * ms}),
			&scriptedRand{ints: []int{9}}, []string{"groq", "openai", "anthropic"}, "leader"},
		{"unsampled first (anthropic just added)",
			p50s(map[string]time.Duration{"groq": 300 * ms, "openai": 600 * ms}),
			&scriptedRand{}, []string{"anthropic", "groq", "openai"}, "cold"},
		{"exploration: draw 0 of 10, then non-leader #2 (anthropic)",
			p50s(map[string]time.Duration{"groq": 300 * ms, "openai": 600 * ms, "anthropic": 900 * ms}),
			&scriptedRand{ints: []int{0, 1}}, []string{"anthropic", "groq", "openai"}, "explore"},
		{"exploration: draw 0 of 10, then non-leader #1 (openai)",
			p50s(map[string]time.Duration{"groq": 300 * ms, "openai": 600 * ms, "anthropic": 900 * ms}),
			&scriptedRand{ints: []int{0, 0}}, []string{"openai", "groq", "anthropic"}, "explore"},
		{"ties keep declaration order",
			p50s(map[string]time.Duration{"groq": 500 * ms, "openai": 500 * ms, "anthropic": 100 * ms}),
			&scriptedRand{ints: []int{9}}, []string{"anthropic", "groq", "openai"}, "leader"},
		{"nothing sampled: all cold, shuffled by the injected source",
			statsTable{},
			&scriptedRand{ints: []int{0, 0}}, []string{"openai", "anthropic", "groq"}, "cold"},
		{"a target that only faulted is not unmeasured: it ranks after every sampled one",
			func() statsTable {
				s := p50s(map[string]time.Duration{"openai": 600 * ms, "anthropic": 900 * ms})
				s["groq"] = onlyFaults
				return s
			}(),
			&scriptedRand{ints: []int{9}}, []string{"openai", "anthropic", "groq"}, "leader"},
		{"exploration may pick a target that only faulted: one unlucky attempt does not shut it out",
			func() statsTable {
				s := p50s(map[string]time.Duration{"openai": 600 * ms, "anthropic": 900 * ms})
				s["groq"] = onlyFaults
				return s
			}(),
			&scriptedRand{ints: []int{0, 1}}, []string{"groq", "openai", "anthropic"}, "explore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newLeastLatency(tt.stats, fixedNow, tt.rand)
			got, sel := s.Order(nil, "m", newCandidates("groq", "openai", "anthropic"))
			if !slices.Equal(names(got), tt.want) || sel != tt.wantSelection {
				t.Errorf("Order = %v %s, want %v %s", names(got), sel, tt.want, tt.wantSelection)
			}
		})
	}
}

func TestLeastLatencyRank(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	st := p50s(map[string]time.Duration{"openai": 600 * ms, "anthropic": 200 * ms})
	st["groq"] = stats.Target{Outcomes: 1, Faults: 1, FaultRate: 1}
	s := newLeastLatency(st, fixedNow, defaultRand)
	got, leader := s.Rank(nil, "m", newCandidates("groq", "openai", "anthropic", "new"))
	if want := []string{"new", "anthropic", "openai", "groq"}; !slices.Equal(rankedNames(got), want) || leader != 1 {
		t.Fatalf("Rank = %v leader %d, want %v leader 1", rankedNames(got), leader, want)
	}
	if got[0].Note != "cold" || !math.IsNaN(got[0].Score) || got[1].Score != 0.2 || got[3].Note != "only_faults" {
		t.Errorf("Rank scores = %+v", got)
	}
}

func TestLeastLatencySingleTargetNeverExplores(t *testing.T) {
	t.Parallel()
	s := newLeastLatency(p50s(map[string]time.Duration{"a": time.Second}), fixedNow, &scriptedRand{ints: []int{0, 0, 0}})
	got, sel := s.Order(nil, "m", newCandidates("a"))
	if !slices.Equal(names(got), []string{"a"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [a] leader", names(got), sel)
	}
}

// TestLeastLatencyExplorationShare: over 2,000 requests, exploration lies
// within 10 % +- 2 %, and explorations spread over both runners-up.
func TestLeastLatencyExplorationShare(t *testing.T) {
	t.Parallel()
	st := p50s(map[string]time.Duration{"groq": 300 * time.Millisecond, "openai": 600 * time.Millisecond, "anthropic": 900 * time.Millisecond})
	s := newLeastLatency(st, fixedNow, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("groq", "openai", "anthropic")
	counts := map[string]int{}
	leadBy := map[string]int{}
	const n = 2000
	for range n {
		got, sel := s.Order(nil, "m", cands)
		counts[sel]++
		leadBy[got[0].Target]++
	}
	share := float64(counts["explore"]) / n
	if share < 0.08 || share > 0.12 {
		t.Errorf("exploration share = %.3f, want 0.10 +- 0.02 (%v)", share, counts)
	}
	if leadBy["openai"] == 0 || leadBy["anthropic"] == 0 || leadBy["groq"] != counts["leader"] {
		t.Errorf("leads = %v with %v, want explorations over both runners-up", leadBy, counts)
	}
}

func TestLeastLatencyAppendsToDst(t *testing.T) {
	t.Parallel()
	s := newLeastLatency(p50s(map[string]time.Duration{"a": 2 * time.Second, "b": time.Second}), fixedNow, &scriptedRand{ints: []int{9}})
	dst := make([]*Candidate, 0, 4)
	got, _ := s.Order(dst, "m", newCandidates("a", "b"))
	if !slices.Equal(names(got), []string{"b", "a"}) || &got[0] != &dst[:1][0] {
		t.Errorf("Order did not fill dst in place: %v", names(got))
	}
}

func TestLeastLatencyOrderDoesNotAllocate(t *testing.T) {
	st := p50s(map[string]time.Duration{"a": 2 * time.Second, "b": time.Second, "c": 3 * time.Second})
	s := newLeastLatency(st, fixedNow, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("a", "b", "c")
	buf := make([]*Candidate, 0, 16)
	if allocs := testing.AllocsPerRun(100, func() { s.Order(buf[:0], "m", cands) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
}

func TestLeastLatencyManyTargets(t *testing.T) {
	t.Parallel()
	lat := map[string]time.Duration{}
	specs := make([]string, 20)
	for i := range specs {
		specs[i] = string(rune('a' + i))
		lat[specs[i]] = time.Duration(20-i) * time.Millisecond
	}
	got, sel := newLeastLatency(p50s(lat), fixedNow, &scriptedRand{ints: []int{9}}).Order(nil, "m", newCandidates(specs...))
	want := slices.Clone(specs)
	slices.Reverse(want)
	if !slices.Equal(names(got), want) || sel != "leader" {
		t.Errorf("Order = %v, want %v", names(got), want)
	}
}

func TestLatencyModesNeedStats(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"least-latency", "ewma-latency", "reliable-latency"} {
		if _, err := New(mode, Deps{}); err == nil {
			t.Errorf("New(%s) without a statistics source: no error", mode)
		}
	}
	for _, mode := range []string{"fallback", "round-robin", "loadbalance", "cost-optimized"} {
		if _, err := New(mode, Deps{}); err != nil {
			t.Errorf("New(%s) without a statistics source: %v", mode, err)
		}
	}
	if _, err := New("fastest", Deps{}); err == nil {
		t.Error("New(unknown): no error")
	}
}

func TestFallbackAndRoundRobin(t *testing.T) {
	t.Parallel()
	cands := newCandidates("a", "b", "c")
	if got, sel := (fallback{}).Order(nil, "m", cands); !slices.Equal(names(got), []string{"a", "b", "c"}) || sel != "order" {
		t.Errorf("fallback.Order = %v %s", names(got), sel)
	}
	if got, leader := (fallback{}).Rank(nil, "m", cands); !slices.Equal(rankedNames(got), []string{"a", "b", "c"}) || leader != 0 || got[2].Score != 2 {
		t.Errorf("fallback.Rank = %v leader %d", rankedNames(got), leader)
	}
	rr := &roundRobin{}
	var leads []string
	for range 4 {
		got, _ := rr.Order(nil, "m", cands)
		leads = append(leads, got[0].Target)
	}
	if !slices.Equal(leads, []string{"a", "b", "c", "a"}) {
		t.Errorf("roundRobin leads = %v", leads)
	}
	if _, leader := rr.Rank(nil, "m", cands); leader != -1 {
		t.Errorf("roundRobin.Rank leader = %d, want none: the lead rotates", leader)
	}
}

func TestLoadBalance(t *testing.T) {
	t.Parallel()
	cands := newCandidates("a", "b", "c")
	cands[0].Weight, cands[1].Weight, cands[2].Weight = 1, 3, 2 // total 6
	tests := []struct {
		u    float64
		want []string
	}{
		{0.0, []string{"a", "b", "c"}},  // [0,1/6) -> a, rest by weight
		{0.5, []string{"b", "c", "a"}},  // [1/6,4/6) -> b
		{0.99, []string{"c", "b", "a"}}, // [4/6,1) -> c
	}
	for _, tt := range tests {
		lb := &loadBalance{rand: &scriptedRand{floats: []float64{tt.u}}}
		got, _ := lb.Order(nil, "m", cands)
		if !slices.Equal(names(got), tt.want) {
			t.Errorf("loadBalance(u=%v).Order = %v, want %v", tt.u, names(got), tt.want)
		}
	}
	got, leader := (&loadBalance{}).Rank(nil, "m", cands)
	if !slices.Equal(rankedNames(got), []string{"b", "c", "a"}) || leader != -1 || got[0].Score != 3 {
		t.Errorf("loadBalance.Rank = %v leader %d, want [b c a] by weight, no leader", rankedNames(got), leader)
	}
}

func TestCostOptimized(t *testing.T) {
	cands := newCandidates("groq", "openai", "anthropic", "local", "free")
	price := func(c *Candidate, p float64) { c.Price, c.Priced = p, true }
	price(cands[0], 1.38) // 0.59 + 0.79
	price(cands[1], 0.75)
	price(cands[2], 18)
	// local: unpriced; free: unpriced with a higher weight
	cands[4].Weight = 5
	got, sel := (costOptimized{}).Order(nil, "m", cands)
	if want := []string{"openai", "groq", "anthropic", "free", "local"}; !slices.Equal(names(got), want) || sel != "order" {
		t.Errorf("Order = %v %s, want %v order (cheapest first, unpriced last by weight)", names(got), sel, want)
	}
	// Ties in price: descending weight, then declaration order.
	ties := newCandidates("a", "b", "c")
	for _, c := range ties {
		price(c, 1)
	}
	ties[2].Weight = 2
	if got, _ := (costOptimized{}).Order(nil, "m", ties); !slices.Equal(names(got), []string{"c", "a", "b"}) {
		t.Errorf("ties: Order = %v, want [c a b]", names(got))
	}
	ranked, leader := (costOptimized{}).Rank(nil, "m", cands)
	if leader != 0 || ranked[0].Score != 0.75 || ranked[4].Note != "unpriced" || !math.IsNaN(ranked[4].Score) {
		t.Errorf("Rank = %+v leader %d", ranked, leader)
	}
	buf := make([]*Candidate, 0, 8)
	if allocs := testing.AllocsPerRun(100, func() { (costOptimized{}).Order(buf[:0], "m", cands) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
}

// The config's schema names the modes strategy.mode accepts; every one of
// them must be a registered strategy, and every strategy one of them.
func TestStrategiesAreTheConfigModes(t *testing.T) {
	t.Parallel()
	if got := Names(); !slices.Equal(got, config.Modes) {
		t.Fatalf("Names() = %v, want config.Modes %v", got, config.Modes)
	}
}
