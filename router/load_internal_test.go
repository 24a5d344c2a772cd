package router

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

// queued is a target that answers in p50 when idle and whose load curve
// says it answers in 4x that with 4 attempts in flight; peers says how
// many peers' attempts are in flight there now.
func queued(p50 time.Duration, peers int) stats.Target {
	st := target(p50, 0.1, 100, 100, 0, 0)
	st.Load[0], st.Load[3] = p50, 4*p50
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
			return &EWMALatency{stats: s, now: fixedNow, rand: &scriptedRand{}, every: EWMAProbeEvery}
		},
		"reliable-latency": func(s StatsSource) Strategy { return newReliableLatency(s, fixedNow, nil) },
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

// TestMaxConcurrencyCountsRounds: with a provider's max_concurrency set,
// a request that would wait behind a full round is expected to take a
// round longer; with the fast target's single slot taken by a request
// held open, the next request goes to the slower one without waiting, and
// /debug/routing shows the count and the factor.
func TestMaxConcurrencyCountsRounds(t *testing.T) {
	ms := time.Millisecond
	fast, steady := newHeldUpstream(t, "fast"), newHeldUpstream(t, "steady")
	close(steady.release)
	yaml := "strategy: {mode: least-latency}\nproviders:\n" +
		"  fast: {base_url: \"" + fast.URL + "/v1\", models: [m], max_concurrency: 1, queue: 8}\n" +
		"  steady: {base_url: \"" + steady.URL + "/v1\", models: [m]}\n" +
		"targets:\n  - {virtual_key: fast}\n  - {virtual_key: steady}\n"
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st := statsTable{"fast": target(100*ms, 0.1, 100, 100, 0, 0), "steady": target(150*ms, 0.1, 100, 100, 0, 0)}
	g, err := New(cfg, Options{Stats: st, Now: fixedNow, Rand: &scriptedRand{ints: []int{9, 9, 9}}})
	if err != nil {
		t.Fatal(err)
	}
	held := serve(g)
	waitFor(t, fast.arrived, "the first request at the fast target")

	// fast: 100 ms x ceil(2/1) = 200 ms > steady's 150 ms.
	rec := <-serve(g)
	if rec.Code != 200 || rec.Header().Get(HeaderTarget) != "steady" {
		t.Fatalf("%d, served by %q: want steady while fast's one slot is taken", rec.Code, rec.Header().Get(HeaderTarget))
	}
	debug := httptest.NewRecorder()
	g.RoutingHandler().ServeHTTP(debug, httptest.NewRequest(http.MethodGet, "/debug/routing", nil))
	var out struct {
		Models []ModelRouting `json:"models"`
	}
	if err := json.Unmarshal(debug.Body.Bytes(), &out); err != nil || len(out.Models) != 1 {
		t.Fatalf("/debug/routing: %v %s", err, debug.Body.String())
	}
	for _, tr := range out.Models[0].Targets {
		if tr.Target == "fast" && (tr.Inflight != 1 || tr.LoadFactor != 2 || tr.Rank != 2) {
			t.Errorf("fast in /debug/routing: inflight %d, load_factor %g, rank %d; want 1, 2, 2", tr.Inflight, tr.LoadFactor, tr.Rank)
		}
	}

	close(fast.release)
	if rec := <-held; rec.Code != 200 || rec.Header().Get(HeaderTarget) != "fast" {
		t.Fatalf("the held request: %d from %q, want 200 from fast", rec.Code, rec.Header().Get(HeaderTarget))
	}
	// The slot is free again: fast leads.
	if rec := <-serve(g); rec.Header().Get(HeaderTarget) != "fast" || !strings.Contains(rec.Body.String(), "from fast") {
		t.Fatalf("after the slot freed, served by %q: want fast", rec.Header().Get(HeaderTarget))
	}
}

// TestNearTiesSpreadUnderLoad: while the leader is building a queue, a
// runner-up within nearTieMargin of it leads half the time (a coin from
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
		{"queued, past the margin", queued(100*ms, 1), 250 * ms, 0, []string{"fast", "steady"}},
		{"idle, near-tied", queued(100*ms, 0), 110 * ms, 0, []string{"fast", "steady"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fast := tt.fast
			fast.Load[1] = 200 * ms // two in flight: twice as slow
			st := statsTable{"fast": fast, "steady": target(tt.other, 0.01, 100, 100, 0, 0)}
			for mode, s := range map[string]Strategy{
				"least-latency": newLeastLatency(st, fixedNow, &scriptedRand{ints: []int{9, tt.coin}}),
				"ewma-latency":  &EWMALatency{stats: st, now: fixedNow, rand: &scriptedRand{ints: []int{tt.coin}}, every: time.Hour},
			} {
				got, sel := s.Order(nil, "m", newCandidates("fast", "steady"))
				if !slices.Equal(names(got), tt.want) || sel != "leader" {
					t.Errorf("%s: Order = %v %s, want %v leader", mode, names(got), sel, tt.want)
				}
			}
		})
	}
}
