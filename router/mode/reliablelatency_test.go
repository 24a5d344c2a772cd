package mode

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/internal/stats"

	"github.com/firstbyte-dev/firstbyte/collector"
)

// target builds the statistics of a target seen just now: a typical latency
// with the given log spread over n recent samples, and outcomes of which
// faults (weighted) failed after faultCost each.
func target(p50 time.Duration, logStd float64, n int, outcomes int, faults float64, faultCost time.Duration) stats.Target {
	st := stats.Target{
		Samples: n, P50: p50, EWMA: p50, LogMean: math.Log(p50.Seconds()), LogStd: logStd, LogWeight: float64(n),
		Newest: t0, Outcomes: outcomes, Faults: faults, WeightedOutcomes: float64(outcomes), WeightedFaults: faults,
		FaultSeconds: faultCost.Seconds(),
	}
	if outcomes > 0 {
		st.FaultRate = faults / float64(outcomes)
		st.LastOutcome = t0
	}
	return st
}

func TestErrorPenalty(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		errRate, want float64
	}{
		{-0.1, 1}, {0, 1}, {0.5, 2}, {0.75, 4},
		{0.9, 10}, {0.95, 10}, {1, 10}, {1.5, 10}, {math.NaN(), 10},
	} {
		if got := errorPenalty(tt.errRate); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("errorPenalty(%v) = %v, want %v", tt.errRate, got, tt.want)
		}
	}
}

func TestExpectedCost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name               string
		latency, f, faultS float64
		want               float64
	}{
		{"no faults: the latency", 0.02, 0, 0.3, 0.02},
		// 0.02/0.7 + (0.3/0.7)*0.001
		{"30% quick faults", 0.02, 0.3, 0.001, 0.02/0.7 + 0.3/0.7*0.001},
		// 0.02/0.7 + (0.3/0.7)*0.3 = 0.0286 + 0.1286
		{"30% faults after 300 ms cost far more", 0.02, 0.3, 0.3, 0.02/0.7 + 0.3/0.7*0.3},
		{"always failing: capped at 10x and 9 faults", 0.1, 1, 0.2, 1 + 9*0.2},
	} {
		if got := expectedCost(tt.latency, tt.f, tt.faultS); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: expectedCost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStandardNormal(t *testing.T) {
	t.Parallel()
	zPlus := 1 - math.Exp(-0.5) // radius 1
	for _, tt := range []struct {
		name   string
		u1, u2 float64
		want   float64
	}{
		{"u1 = 0 gives 0", 0, 0.3, 0},
		{"radius 1, angle 0", zPlus, 0, 1},
		{"radius 1, angle pi", zPlus, 0.5, -1},
		{"radius 1, angle pi/2", zPlus, 0.25, 0},
		{"largest u1 is finite", math.Nextafter(1, 0), 0, math.Sqrt(-2 * math.Log(math.Pow(2, -53)))},
	} {
		if got := standardNormal(tt.u1, tt.u2); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: standardNormal(%v, %v) = %v, want %v", tt.name, tt.u1, tt.u2, got, tt.want)
		}
	}
}

// moments returns the mean and variance of n draws.
func drawMoments(n int, draw func() float64) (mean, variance float64) {
	var sum, sumSq float64
	for range n {
		x := draw()
		sum += x
		sumSq += x * x
	}
	mean = sum / float64(n)
	return mean, sumSq/float64(n) - mean*mean
}

func TestStandardNormalMoments(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	mean, variance := drawMoments(100_000, func() float64 { return standardNormal(r.Float64(), r.Float64()) })
	if math.Abs(mean) > 0.02 || math.Abs(variance-1) > 0.03 {
		t.Errorf("mean, variance = %.4f, %.4f; want about 0, 1", mean, variance)
	}
}

func TestBetaDrawMoments(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct{ a, b float64 }{{0.5, 2}, {1, 1}, {3.5, 5}, {30.5, 72}, {0.1, 0.1}} {
		mean, variance := drawMoments(50_000, func() float64 { return betaDraw(tt.a, tt.b, r) })
		wantMean := tt.a / (tt.a + tt.b)
		wantVar := tt.a * tt.b / ((tt.a + tt.b) * (tt.a + tt.b) * (tt.a + tt.b + 1))
		if math.Abs(mean-wantMean) > 0.01 || math.Abs(variance-wantVar) > 0.1*wantVar+1e-4 {
			t.Errorf("Beta(%v, %v): mean, variance = %.4f, %.5f; want %.4f, %.5f", tt.a, tt.b, mean, variance, wantMean, wantVar)
		}
	}
	if x := gammaDraw(0, r); x != 0 {
		t.Errorf("gammaDraw(0) = %v, want 0", x)
	}
}

// TestPosteriorWidensWithAge: the same evidence, older, is less certain: the
// spread of the log latency grows and the fault rate's Beta shrinks towards
// its prior, so a target that got no traffic is re-tried.
func TestPosteriorWidensWithAge(t *testing.T) {
	t.Parallel()
	st := target(20*time.Millisecond, 0.25, 100, 100, 30, time.Millisecond)
	fresh := posteriorOf(&st, t0)
	old := posteriorOf(&st, t0.Add(10*stats.RecencyHalfLife))
	if math.Abs(fresh.logSpread-0.025) > 1e-12 {
		t.Errorf("fresh spread = %v, want 0.25/sqrt(100)", fresh.logSpread)
	}
	if !(old.logSpread > 10*fresh.logSpread) {
		t.Errorf("spread after 10 half-lives = %v, want far wider than %v", old.logSpread, fresh.logSpread)
	}
	if fresh.faultA != faultPriorFaults+30 || fresh.faultB != faultPriorSuccesses+70 {
		t.Errorf("fresh Beta = (%v, %v), want (30.5, 72)", fresh.faultA, fresh.faultB)
	}
	if old.faultA+old.faultB > faultPriorFaults+faultPriorSuccesses+0.2 {
		t.Errorf("old Beta = (%v, %v), want near the prior", old.faultA, old.faultB)
	}
	never := posteriorOf(&stats.Target{Samples: 1, LogWeight: 1, Newest: t0.Add(-time.Hour)}, t0)
	if never.logSpread != maxLogSpread {
		t.Errorf("spread of hour-old evidence = %v, want the cap %v", never.logSpread, maxLogSpread)
	}
}

// TestPosteriorCountsLatesBeyondP99: attempts cancelled by a hedge count
// with the faults only when they had waited, on average, at least the
// target's p99 (a hang the samples do not foresee), not when they are
// the tail its samples already describe.
func TestPosteriorCountsLatesBeyondP99(t *testing.T) {
	t.Parallel()
	st := target(20*time.Millisecond, 0.9, 100, 100, 0, 0)
	st.P99 = 160 * time.Millisecond
	st.Late, st.WeightedLate, st.LastLate = 10, 10, t0
	for _, tt := range []struct {
		name   string
		waited time.Duration
		faultA float64
		cost   float64
	}{
		{"within its p99: bad luck, no fault", 120 * time.Millisecond, faultPriorFaults, 0},
		{"at its p99: a fault of what it waited", 160 * time.Millisecond, faultPriorFaults + 10, 0.16},
		{"far beyond it (a hang): a fault", 2 * time.Second, faultPriorFaults + 10, 2},
	} {
		st.LateSeconds = tt.waited.Seconds()
		p := posteriorOf(&st, t0)
		if p.faultA != tt.faultA || math.Abs(p.faultSeconds-tt.cost) > 1e-12 {
			t.Errorf("%s: faultA %v, fault seconds %v; want %v, %v", tt.name, p.faultA, p.faultSeconds, tt.faultA, tt.cost)
		}
	}
}

// leads orders n requests with a seeded source and counts who led and how
// each selection was reported.
func leads(t *testing.T, st statsTable, now func() time.Time, n int) (map[string]int, map[string]int) {
	t.Helper()
	s := newReliableLatency(st, now, rand.New(rand.NewPCG(1, 2)))
	s.every = time.Hour // the safety-net probe is tested on its own
	cands := newCandidates("a", "b", "c")
	leadBy, sels := map[string]int{}, map[string]int{}
	for range n {
		got, sel := s.Order(nil, "m", cands)
		leadBy[got[0].Target]++
		sels[sel]++
	}
	return leadBy, sels
}

func TestReliableLatencyChoices(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name  string
		stats statsTable
		check func(t *testing.T, leadBy, sels map[string]int)
	}{
		{"stable: the fastest leads nearly always, and is reported leader",
			statsTable{"a": target(20*ms, 0.25, 100, 100, 0, 0), "b": target(40*ms, 0.25, 10, 10, 0, 0), "c": target(80*ms, 0.25, 10, 10, 0, 0)},
			func(t *testing.T, leadBy, sels map[string]int) {
				if leadBy["a"] < 1990 || sels["leader"] != leadBy["a"] {
					t.Errorf("led by %v, selections %v; want a leading ~always as leader", leadBy, sels)
				}
			}},
		{"30% quick faults: the fastest still leads (a fault costs 1 ms)",
			statsTable{"a": target(20*ms, 0.25, 70, 100, 30, ms), "b": target(40*ms, 0.25, 10, 10, 0, 0), "c": target(80*ms, 0.25, 10, 10, 0, 0)},
			func(t *testing.T, leadBy, _ map[string]int) {
				if leadBy["a"] < 1900 {
					t.Errorf("led by %v; want a to lead", leadBy)
				}
			}},
		{"30% faults after 300 ms: the fault cost moves it behind a slower reliable one",
			statsTable{"a": target(20*ms, 0.25, 70, 100, 30, 300*ms), "b": target(40*ms, 0.25, 10, 10, 0, 0), "c": target(80*ms, 0.25, 10, 10, 0, 0)},
			func(t *testing.T, leadBy, _ map[string]int) {
				if leadBy["b"] < 1990 {
					t.Errorf("led by %v; want b to lead", leadBy)
				}
			}},
		{"bad luck (ok/503/ok/503/ok/503) never shuts a good target out",
			statsTable{"a": target(20*ms, 0.25, 3, 6, 3, 5*ms), "b": target(40*ms, 0.25, 10, 10, 0, 0), "c": target(80*ms, 0.25, 10, 10, 0, 0)},
			func(t *testing.T, leadBy, sels map[string]int) {
				if leadBy["a"] < 400 || leadBy["b"] < 400 {
					t.Errorf("led by %v; want both a and b to lead often while a's fault rate is uncertain", leadBy)
				}
				if sels["explore"] == 0 {
					t.Errorf("selections %v: the draw choosing the runner-up must be reported explore", sels)
				}
			}},
		{"unmeasured first, shuffled; only-faulted last",
			statsTable{"a": {Outcomes: 2, Faults: 2, FaultRate: 1, LastOutcome: t0}, "b": target(40*ms, 0.25, 10, 10, 0, 0)},
			func(t *testing.T, leadBy, sels map[string]int) {
				if leadBy["c"] != 2000 || sels["cold"] != 2000 {
					t.Errorf("led by %v, selections %v; want c (unmeasured) cold", leadBy, sels)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leadBy, sels := leads(t, tt.stats, fixedNow, 2000)
			tt.check(t, leadBy, sels)
		})
	}
}

// TestReliableLatencyRetriesAnAgedTarget: a runner-up that got no traffic
// for a while is re-tried because its posterior widened, not by a fixed
// rate: fresh, it almost never leads; 5 half-lives later it does.
func TestReliableLatencyRetriesAnAgedTarget(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	st := statsTable{"a": target(20*ms, 0.25, 100, 100, 0, 0), "b": target(40*ms, 0.25, 5, 5, 0, 0), "c": target(80*ms, 0.25, 5, 5, 0, 0)}
	freshLeads, _ := leads(t, st, fixedNow, 2000)
	aged := st["b"]
	aged.Newest, aged.LastOutcome = t0.Add(-5*stats.RecencyHalfLife), t0.Add(-5*stats.RecencyHalfLife)
	st["b"] = aged
	agedLeads, _ := leads(t, st, fixedNow, 2000)
	if freshLeads["b"] > 10 || agedLeads["b"] < 50 {
		t.Errorf("b led %d of 2000 fresh and %d aged; want almost never, then clearly more", freshLeads["b"], agedLeads["b"])
	}
}

// TestReliableLatencySafetyNetProbe: a runner-up that only faulted has no
// latency to draw; once its data is onlyFaultsProbeEvery old it leads one
// request (a measured one waits reliableProbeEvery).
func TestReliableLatencySafetyNetProbe(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	st := statsTable{
		"a": target(20*ms, 0.25, 100, 100, 0, 0),
		"b": {Outcomes: 3, Faults: 3, FaultRate: 1, LastOutcome: t0.Add(-onlyFaultsProbeEvery)},
	}
	s := newReliableLatency(st, fixedNow, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("a", "b")
	got, sel := s.Order(nil, "m", cands)
	if !slices.Equal(names(got), []string{"b", "a"}) || sel != "explore" {
		t.Errorf("Order = %v %s, want [b a] explore", names(got), sel)
	}
	if got, _ := s.Order(nil, "m", cands); got[0].Target != "a" {
		t.Errorf("second Order led by %s, want a: one probe per interval", got[0].Target)
	}
}

func TestReliableLatencyRank(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	st := statsTable{"a": target(20*ms, 0.25, 70, 100, 30, 300*ms), "b": target(40*ms, 0.25, 10, 10, 0, 0)}
	got, leader := newReliableLatency(st, fixedNow, defaultRand).Rank(nil, "m", newCandidates("a", "b"))
	if !slices.Equal(rankedNames(got), []string{"b", "a"}) || leader != 0 {
		t.Fatalf("Rank = %v leader %d, want [b a] leader 0", rankedNames(got), leader)
	}
	// b: 40 ms with the prior's mean fault rate 0.5/(0.5+12) = 0.04
	f := faultPriorFaults / (faultPriorFaults + faultPriorSuccesses + 10)
	if want := expectedCost(0.04, f, 0); math.Abs(got[0].Score-want) > 1e-9 {
		t.Errorf("b's score = %v, want %v", got[0].Score, want)
	}
}

func TestReliableLatencySingleTarget(t *testing.T) {
	t.Parallel()
	s := newReliableLatency(statsTable{"a": target(time.Second, 0.1, 3, 3, 3, 0)}, fixedNow, defaultRand)
	got, sel := s.Order(nil, "m", newCandidates("a"))
	if !slices.Equal(names(got), []string{"a"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [a] leader", names(got), sel)
	}
	if got, sel := s.Order(nil, "m", nil); len(got) != 0 || sel != "cold" {
		t.Errorf("Order(no candidates) = %v %s, want [] cold", names(got), sel)
	}
}

func TestReliableLatencyOrderDoesNotAllocate(t *testing.T) {
	ms := time.Millisecond
	st := statsTable{"a": target(20*ms, 0.25, 100, 100, 3, ms), "b": target(40*ms, 0.25, 10, 10, 0, 0), "c": target(80*ms, 0.25, 10, 10, 1, ms)}
	s := newReliableLatency(st, fixedNow, rand.New(rand.NewPCG(1, 2)))
	cands := newCandidates("a", "b", "c")
	buf := make([]*Candidate, 0, 16)
	if allocs := testing.AllocsPerRun(100, func() { s.Order(buf[:0], "m", cands) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
}

// TestReliableLatencyMoreThanRankedCap: past the stack buffers, the order
// is still complete and sorted.
func TestReliableLatencyMoreThanRankedCap(t *testing.T) {
	t.Parallel()
	st := statsTable{}
	specs := make([]string, 20)
	for i := range specs {
		specs[i] = string(rune('a' + i))
		st[specs[i]] = target(time.Duration(20-i)*time.Second, 0.1, 100, 100, 0, 0)
	}
	got, _ := newReliableLatency(st, fixedNow, rand.New(rand.NewPCG(1, 2))).Order(nil, "m", newCandidates(specs...))
	want := slices.Clone(specs)
	slices.Reverse(want)
	if !slices.Equal(names(got), want) {
		t.Errorf("Order = %v, want %v", names(got), want)
	}
}

// TestReliableLatencyOverTracker wires the strategy to the collector's
// tracker as cmd/firstbyte does: faults recorded there, with what they
// cost, move a faster target behind a reliable one.
func TestReliableLatencyOverTracker(t *testing.T) {
	t.Parallel()
	now := t0
	clock := func() time.Time { return now }
	tr := collector.NewTracker(collector.TrackerOptions{Now: clock})
	for i := range 20 {
		at := now.Add(-time.Duration(20-i) * 100 * time.Millisecond)
		tr.RecordSample("groq", "m", 200*time.Millisecond, at, collector.OriginSelf)
		tr.RecordSample("openai", "m", 260*time.Millisecond, at, collector.OriginSelf)
		tr.RecordFault("groq", "m", fault.Full, 300*time.Millisecond, false, at) // groq fails half its attempts, slowly
	}
	s, err := New("reliable-latency", Deps{Stats: tr, Rand: rand.New(rand.NewPCG(5, 6)), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	got, sel := s.Order(nil, "m", newCandidates("groq", "openai"))
	if !slices.Equal(names(got), []string{"openai", "groq"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [openai groq] leader", names(got), sel)
	}
}

// TestReliableLatencyConcurrentOrder runs Order from many goroutines on one
// strategy, as requests do (run with -race).
func TestReliableLatencyConcurrentOrder(t *testing.T) {
	t.Parallel()
	st := statsTable{"groq": target(300*time.Millisecond, 0.2, 10, 10, 0, 0), "openai": target(320*time.Millisecond, 0.2, 10, 10, 1, 0)}
	s := newReliableLatency(st, time.Now, defaultRand)
	cands := newCandidates("groq", "openai", "anthropic")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf [16]*Candidate
			for range 500 {
				if got, _ := s.Order(buf[:0], "m", cands); len(got) != 3 {
					t.Errorf("Order returned %d candidates, want 3", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}
