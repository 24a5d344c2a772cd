package study

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestStudyOracleOrder(t *testing.T) {
	t.Parallel()
	byName := map[string]*Scenario{}
	for _, s := range Scenarios() {
		byName[s.Name] = s
	}
	tests := []struct {
		name     string
		scenario string
		at       time.Duration
		want     []string
	}{
		{"stable: fastest first", "a", 0, []string{"t20", "t40", "t80"}},
		{"10x slower: after both others", "b", SlowFrom, []string{"t40", "t80", "t20"}},
		{"recovered", "b", SlowTo, []string{"t20", "t40", "t80"}},
		{"quick 503s: still first", "c", 0, []string{"t20", "t40", "t80"}},
		{"slow 503s: last, a 503 costs more than t80", "c2", 0, []string{"t40", "t80", "t20"}},
		{"hung: last", "d", HangFrom, []string{"t40", "t80", "t20"}},
		{"before the reload: three targets", "e", AddAt - 1, []string{"t20", "t40", "t80"}},
		{"added: first", "e", AddAt, []string{"t10", "t20", "t40", "t80"}},
		{"drift before the crossing", "f", DriftCross - Bucket, []string{"t20", "t40", "t80"}},
		{"drift after the crossing", "f", DriftCross + Bucket, []string{"t40", "t20", "t80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := byName[tt.scenario]
			order, _ := oracleOrder(nil, s, tt.at)
			var got []string
			for _, i := range order {
				got = append(got, s.Targets[i].Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("oracleOrder(%s, %s) = %v, want %v", tt.scenario, tt.at, got, tt.want)
			}
		})
	}
}

// Sorting by E[d]/q is the best order: no permutation costs less.
func TestStudyOracleBeatsEveryPermutation(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 2 + r.IntN(3)
		s := &Scenario{FirstByte: HangFirstByte}
		var bs []Behaviour
		for i := range n {
			s.Targets = append(s.Targets, Target{Name: fmt.Sprint(i)})
			b := Behaviour{Median: time.Duration(5+r.IntN(300)) * time.Millisecond, Hang: r.IntN(6) == 0}
			if r.IntN(2) == 0 {
				b.FaultRate, b.FaultAfter = r.Float64(), time.Duration(r.IntN(400))*time.Millisecond
			}
			bs = append(bs, b)
		}
		s.Behave = func(i int, _ time.Duration) Behaviour { return bs[i] }
		order, best := oracleOrder(nil, s, 0)
		q, cost := make([]float64, n), make([]float64, n)
		for i := range n {
			q[i], cost[i] = attemptCost(bs[i], s.FirstByte)
		}
		permute(order, func(p []int) {
			if c := orderCost(p, q, cost); c < best-1e-12 {
				t.Fatalf("trial %d: oracle order %v costs %v, %v costs %v (behaviours %+v)", trial, order, best, p, c, bs)
			}
		})
	}
}

// permute calls f with every permutation of xs.
func permute(xs []int, f func(p []int)) {
	used := make([]bool, len(xs))
	out := make([]int, 0, len(xs))
	var rec func()
	rec = func() {
		if len(out) == len(xs) {
			f(out)
			return
		}
		for i, x := range xs {
			if !used[i] {
				used[i] = true
				out = append(out, x)
				rec()
				out = out[:len(out)-1]
				used[i] = false
			}
		}
	}
	rec()
}

func TestStudyAttemptCost(t *testing.T) {
	t.Parallel()
	mean20 := 0.020 * math.Exp(Sigma*Sigma/2)
	tests := []struct {
		name      string
		b         Behaviour
		firstByte time.Duration
		q, cost   float64
	}{
		{"log-normal mean, no timeout in reach", Behaviour{Median: 20 * time.Millisecond}, DefaultFirstByte, 1, mean20},
		{"hang costs the timeout", Behaviour{Median: 20 * time.Millisecond, Hang: true}, HangFirstByte, 0, 0.2},
		{"30 % quick faults", Behaviour{Median: 20 * time.Millisecond, FaultRate: 0.3, FaultAfter: QuickFault}, DefaultFirstByte, 0.7, 0.7*mean20 + 0.3*0.005},
		{"a fault past the timeout costs the timeout", Behaviour{Median: 20 * time.Millisecond, FaultRate: 1, FaultAfter: time.Second}, HangFirstByte, 0, 0.2},
		{"median at the timeout: half time out", Behaviour{Median: HangFirstByte}, HangFirstByte, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, cost := attemptCost(tt.b, tt.firstByte)
			if math.Abs(q-tt.q) > 1e-9 || !math.IsNaN(tt.cost) && math.Abs(cost-tt.cost) > 1e-9 {
				t.Errorf("attemptCost(%+v, %s) = %v, %v; want %v, %v", tt.b, tt.firstByte, q, cost, tt.q, tt.cost)
			}
		})
	}
}

// The oracle is every ratio's denominator, so its own ratio is 1; its mean
// in the stable scenario is the fastest target's mean, e^(sigma²/2) times
// its median.
func TestStudyOracleIsTheYardstick(t *testing.T) {
	t.Parallel()
	st := runStudy(t, Options{Seed: 3, Duration: 5 * time.Second, Scenarios: []string{"a", "c2"}, Modes: []string{"fallback"}})
	for _, s := range []string{"a", "c2"} {
		o := st.Result(s, Oracle)
		if got := st.Ratio(o); got != 1 {
			t.Errorf("(%s) oracle's ratio to itself = %v, want 1", s, got)
		}
	}
	want := 20 * time.Millisecond.Seconds() * math.Exp(Sigma*Sigma/2)
	if got := st.Result("a", Oracle).Mean().Seconds(); math.Abs(got-want)/want > 0.02 {
		t.Errorf("(a) oracle's mean = %.2f ms, want %.2f ms within 2 %%", got*1e3, want*1e3)
	}
	// In (c2) the oracle's order is fallback's (t40 first): same draws,
	// same requests, same figures.
	if o, f := st.Result("c2", Oracle), st.Result("c2", "fallback"); o.Mean() != f.Mean() || o.Requests != f.Requests {
		t.Errorf("(c2) oracle mean %s over %d requests, fallback %s over %d: want the same", o.Mean(), o.Requests, f.Mean(), f.Requests)
	}
}

// What the simulated providers did: the scenario's phases really happen in
// their draws, and nothing else changes.
func TestStudyProvidersFollowTheScenario(t *testing.T) {
	t.Parallel()
	st := runStudy(t, Options{Seed: 5, Duration: 12 * time.Second, Scenarios: []string{"b", "c", "d", "e"}, Modes: []string{"round-robin"}})
	within := func(got, want time.Duration, tol float64) bool {
		return math.Abs(float64(got-want)) <= tol*float64(want)
	}
	mean := func(median time.Duration) time.Duration {
		return time.Duration(float64(median) * math.Exp(Sigma*Sigma/2))
	}

	b := st.Result("b", "round-robin")
	before, slow, after := b.DrawsBetween(t20, 0, SlowFrom), b.DrawsBetween(t20, SlowFrom, SlowTo), b.DrawsBetween(t20, SlowTo, time.Hour)
	for _, c := range []struct {
		name string
		d    Draws
		want time.Duration
	}{{"before", before, mean(20 * time.Millisecond)}, {"slow", slow, mean(200 * time.Millisecond)}, {"after", after, mean(20 * time.Millisecond)}} {
		if c.d.Successes < 100 || !within(c.d.MeanSuccess(), c.want, 0.05) {
			t.Errorf("(b) t20 %s: mean success %s over %d, want %s", c.name, c.d.MeanSuccess(), c.d.Successes, c.want)
		}
	}
	if d := b.DrawsBetween(t40, SlowFrom, SlowTo); !within(d.MeanSuccess(), mean(40*time.Millisecond), 0.05) {
		t.Errorf("(b) t40 while t20 is slow: mean success %s, want %s", d.MeanSuccess(), mean(40*time.Millisecond))
	}

	c := st.Result("c", "round-robin").DrawsBetween(t20, 0, time.Hour)
	if share := float64(c.Faults) / float64(c.Attempts); math.Abs(share-0.3) > 0.03 || c.Timeouts != 0 {
		t.Errorf("(c) t20: %d faults, %d timeouts in %d attempts, want 30 %% faults and no timeout", c.Faults, c.Timeouts, c.Attempts)
	}

	d := st.Result("d", "round-robin")
	if h := d.DrawsBetween(t20, HangFrom, HangTo); h.Attempts == 0 || h.Timeouts != h.Attempts {
		t.Errorf("(d) t20 while hung: %d timeouts in %d attempts, want all", h.Timeouts, h.Attempts)
	}
	for _, span := range [][2]time.Duration{{0, HangFrom}, {HangTo, time.Hour}} {
		if x := d.DrawsBetween(t20, span[0], span[1]); x.Timeouts != 0 || x.Successes != x.Attempts {
			t.Errorf("(d) t20 in [%s, %s): %d timeouts, %d of %d succeeded, want all", span[0], span[1], x.Timeouts, x.Successes, x.Attempts)
		}
	}

	e := st.Result("e", "round-robin")
	if n := e.DrawsBetween(t10, 0, AddAt).Attempts; n != 0 {
		t.Errorf("(e) t10 got %d attempts before it was added", n)
	}
	if n := e.DrawsBetween(t10, AddAt, time.Hour).Attempts; n == 0 {
		t.Errorf("(e) t10 got no attempt after it was added")
	}
}

// Every admission the breakers hand out is resolved, and the breaker of
// (d-breaker) both opens (least-latency, which keeps ranking the hung
// target first on its old samples, stops paying the timeout) and closes
// again (it regains the recovered target): a probe whose resolution were
// lost would leave the circuit open for good.
func TestStudyBreakerOpensAndCloses(t *testing.T) {
	t.Parallel()
	st := runStudy(t, Options{Seed: 2, Duration: 12 * time.Second, Scenarios: []string{"d", "d-breaker"}, Modes: []string{"least-latency"}})
	for _, s := range st.Scenarios {
		for _, r := range st.Results[slices.Index(st.Scenarios, s)] {
			if r.Admitted != r.Resolved {
				t.Errorf("(%s) %s: %d admissions, %d resolved", s.Name, r.Mode, r.Admitted, r.Resolved)
			}
		}
	}
	without, with := st.Result("d", "least-latency"), st.Result("d-breaker", "least-latency")
	if 2*with.WindowTTFB > without.WindowTTFB {
		t.Errorf("least-latency while t20 hangs: %s with the breaker, %s without; want less than half", with.WindowTTFB, without.WindowTTFB)
	}
	if got := with.ChangeTimes[1]; got < 0 || got > 2*BreakerSettings.Cooldown+Bucket {
		t.Errorf("(d-breaker) least-latency regained t20 after %s, want within two cooldowns", with.ChangeText(1))
	}
}
