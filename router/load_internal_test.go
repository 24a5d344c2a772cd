package router

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/routingview"
)

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
	WaitFor(t, fast.arrived, "the first request at the fast target")

	// fast: 100 ms x ceil(2/1) = 200 ms > steady's 150 ms.
	rec := <-serve(g)
	if rec.Code != 200 || rec.Header().Get(HeaderTarget) != "steady" {
		t.Fatalf("%d, served by %q: want steady while fast's one slot is taken", rec.Code, rec.Header().Get(HeaderTarget))
	}
	debug := httptest.NewRecorder()
	g.RoutingHandler().ServeHTTP(debug, httptest.NewRequest(http.MethodGet, "/debug/routing", nil))
	var out struct {
		Models []routingview.Model `json:"models"`
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
