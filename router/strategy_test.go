package router

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// latencies is a LatencySource from a table: the tracker's contract
// (p50, samples, ok) without its window maths, which the collector tests.
type latencies map[string]time.Duration

func (l latencies) P50(target, model string) (time.Duration, int, bool) {
	d, ok := l[target+"/"+model]
	if !ok {
		return 0, 0, false
	}
	return d, 1, true
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

func TestLeastLatencyOrder(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name          string
		lat           latencies
		rand          *scriptedRand
		want          []string
		wantSelection string
	}{
		{"all sampled, no exploration: ascending p50",
			latencies{"groq/m": 300 * ms, "openai/m": 600 * ms, "anthropic/m": 900 * ms},
			&scriptedRand{ints: []int{9}}, []string{"groq", "openai", "anthropic"}, "leader"},
		{"unsampled first (anthropic just added)",
			latencies{"groq/m": 300 * ms, "openai/m": 600 * ms},
			&scriptedRand{}, []string{"anthropic", "groq", "openai"}, "cold"},
		{"exploration: draw 0 of 10, then non-leader #2 (anthropic)",
			latencies{"groq/m": 300 * ms, "openai/m": 600 * ms, "anthropic/m": 900 * ms},
			&scriptedRand{ints: []int{0, 1}}, []string{"anthropic", "groq", "openai"}, "explore"},
		{"exploration: draw 0 of 10, then non-leader #1 (openai)",
			latencies{"groq/m": 300 * ms, "openai/m": 600 * ms, "anthropic/m": 900 * ms},
			&scriptedRand{ints: []int{0, 0}}, []string{"openai", "groq", "anthropic"}, "explore"},
		{"ties keep declaration order",
			latencies{"groq/m": 500 * ms, "openai/m": 500 * ms, "anthropic/m": 100 * ms},
			&scriptedRand{ints: []int{9}}, []string{"anthropic", "groq", "openai"}, "leader"},
		{"nothing sampled: all cold, shuffled by the injected source",
			latencies{},
			&scriptedRand{ints: []int{0, 0}}, []string{"openai", "anthropic", "groq"}, "cold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewLeastLatency(tt.lat, tt.rand)
			got, sel := s.Order(nil, "m", newCandidates("groq", "openai", "anthropic"))
			if !slices.Equal(names(got), tt.want) || sel != tt.wantSelection {
				t.Errorf("Order = %v %s, want %v %s", names(got), sel, tt.want, tt.wantSelection)
			}
		})
	}
}

func TestLeastLatencySingleTargetNeverExplores(t *testing.T) {
	s := NewLeastLatency(latencies{"a/m": time.Second}, &scriptedRand{ints: []int{0, 0, 0}})
	got, sel := s.Order(nil, "m", newCandidates("a"))
	if !slices.Equal(names(got), []string{"a"}) || sel != "leader" {
		t.Errorf("Order = %v %s, want [a] leader", names(got), sel)
	}
}

// TestLeastLatencyExplorationShare: over 2,000 requests, exploration lies
// within 10 % +- 2 %, and explorations spread over both runners-up.
func TestLeastLatencyExplorationShare(t *testing.T) {
	lat := latencies{"groq/m": 300 * time.Millisecond, "openai/m": 600 * time.Millisecond, "anthropic/m": 900 * time.Millisecond}
	s := NewLeastLatency(lat, rand.New(rand.NewPCG(1, 2)))
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
	s := NewLeastLatency(latencies{"a/m": 2 * time.Second, "b/m": time.Second}, &scriptedRand{ints: []int{9}})
	dst := make([]*Candidate, 0, 4)
	got, _ := s.Order(dst, "m", newCandidates("a", "b"))
	if !slices.Equal(names(got), []string{"b", "a"}) || &got[0] != &dst[:1][0] {
		t.Errorf("Order did not fill dst in place: %v", names(got))
	}
}

func TestLeastLatencyManyTargets(t *testing.T) {
	lat := latencies{}
	specs := make([]string, 20)
	for i := range specs {
		specs[i] = string(rune('a' + i))
		lat[specs[i]+"/m"] = time.Duration(20-i) * time.Millisecond
	}
	got, sel := NewLeastLatency(lat, &scriptedRand{ints: []int{9}}).Order(nil, "m", newCandidates(specs...))
	want := slices.Clone(specs)
	slices.Reverse(want)
	if !slices.Equal(names(got), want) || sel != "leader" {
		t.Errorf("Order = %v, want %v", names(got), want)
	}
}

func TestFallbackAndRoundRobin(t *testing.T) {
	cands := newCandidates("a", "b", "c")
	if got, sel := (Fallback{}).Order(nil, "m", cands); !slices.Equal(names(got), []string{"a", "b", "c"}) || sel != "order" {
		t.Errorf("Fallback.Order = %v %s", names(got), sel)
	}
	rr := &RoundRobin{}
	var leads []string
	for range 4 {
		got, _ := rr.Order(nil, "m", cands)
		leads = append(leads, got[0].Target)
	}
	if !slices.Equal(leads, []string{"a", "b", "c", "a"}) {
		t.Errorf("RoundRobin leads = %v", leads)
	}
}

func TestLoadBalance(t *testing.T) {
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
		lb := &LoadBalance{rand: &scriptedRand{floats: []float64{tt.u}}}
		got, _ := lb.Order(nil, "m", cands)
		if !slices.Equal(names(got), tt.want) {
			t.Errorf("LoadBalance(u=%v).Order = %v, want %v", tt.u, names(got), tt.want)
		}
	}
}

func TestScanRequest(t *testing.T) {
	tests := []struct {
		body       string
		model      string
		stream     bool
		err        bool
		swappedFor string // body after withModel("X")
	}{
		{`{"model":"m"}`, "m", false, false, `{"model":"X"}`},
		{` { "messages" : [ {"model":"inner"} ], "model" : "a\"b" , "stream":true } `, `a"b`, true, false, ` { "messages" : [ {"model":"inner"} ], "model" : "X" , "stream":true } `},
		{`{"x":{"model":1},"model":"m","stream":false}`, "m", false, false, `{"x":{"model":1},"model":"X","stream":false}`},
		{`{"model":"\u00e9"}`, "é", false, false, `{"model":"X"}`},
		{`{"x":"}\"{","model":"m"}`, "m", false, false, `{"x":"}\"{","model":"X"}`},
		{`{"model":null}`, "", false, true, ""},
		{`{}`, "", false, true, ""},
		{`{"model":""}`, "", false, true, ""},
		{`[]`, "", false, true, ""},
		{`{"model":"m"`, "", false, true, ""},
	}
	for _, tt := range tests {
		f, err := scanRequest([]byte(tt.body))
		if (err != nil) != tt.err || f.Model != tt.model || f.Stream != tt.stream {
			t.Errorf("scanRequest(%s) = %q %v %v, want %q %v err=%v", tt.body, f.Model, f.Stream, err, tt.model, tt.stream, tt.err)
			continue
		}
		if err == nil {
			if got := string(f.withModel(nil, []byte(tt.body), "X")); got != tt.swappedFor {
				t.Errorf("withModel(%s) = %s, want %s", tt.body, got, tt.swappedFor)
			}
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	got := string(appendJSONString(nil, "a\"b\\c\n\x01é"))
	if want := `"a\"b\\c\u000a\u0001é"`; got != want {
		t.Errorf("appendJSONString = %s, want %s", got, want)
	}
}

// FuzzScanRequest: the scanner accepts exactly what encoding/json accepts
// (it replaced json.Valid on the hot path), and never panics.
func FuzzScanRequest(f *testing.F) {
	for _, seed := range []string{`{"model":"m"}`, `{"model":"m","x":[1,-2.5e+3,true,false,null,{"a":"\u00e9\n"}]}`, `{"a":01}`, `{"a":"\x01"}`, `[]`, `{"model":"m",}`, `{"a":1.}`, `{"a":"\q"}`, ` {"model" : "m" } `, `{"model":"m"}x`, `"s"`, `{"a":[}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := scanRequest(body)
		valid := json.Valid(body)
		if (err == errInvalidJSON) == valid {
			t.Errorf("scanRequest(%q) err=%v, json.Valid=%v", body, err, valid)
		}
	})
}

// ewmaLatencies adds EWMAAt to the table source, with figures of its own so
// a test can tell which one a strategy ranked on.
type ewmaLatencies struct {
	latencies
	ewma map[string]time.Duration
}

func (e ewmaLatencies) EWMAAt(target, model string, _ time.Time) (time.Duration, int, bool) {
	d, ok := e.ewma[target+"/"+model]
	return d, 1, ok
}

func TestEWMALatencyRanksOnTheAverageAndNeverExplores(t *testing.T) {
	ms := time.Millisecond
	src := ewmaLatencies{
		latencies: latencies{"a/m": 100 * ms, "b/m": 200 * ms, "c/m": 300 * ms},
		ewma:      map[string]time.Duration{"a/m": 500 * ms, "b/m": 150 * ms}, // a just got slow; c unmeasured by EWMA
	}
	s, ok := NewStrategy("ewma-latency", StrategyDeps{Latency: src, Rand: &scriptedRand{ints: []int{0, 0, 0}}})
	if !ok {
		t.Fatal("ewma-latency not registered")
	}
	got, sel := s.Order(nil, "m", newCandidates("a", "b", "c"))
	if want := []string{"c", "b", "a"}; !slices.Equal(names(got), want) || sel != "cold" {
		t.Errorf("Order = %v %s, want %v cold", names(got), sel, want)
	}
	src.ewma["c/m"] = 400 * ms
	got, sel = s.Order(nil, "m", newCandidates("a", "b", "c"))
	if want := []string{"b", "c", "a"}; !slices.Equal(names(got), want) || sel != "leader" {
		t.Errorf("Order = %v %s, want %v leader (a draw of 0 must not explore)", names(got), sel, want)
	}
}
