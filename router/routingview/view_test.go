package routingview

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

func candidates(t *testing.T, now func() time.Time, names ...string) []*mode.Candidate {
	t.Helper()
	cs := make([]*mode.Candidate, len(names))
	for i, name := range names {
		p := &config.Provider{CircuitBreaker: config.CircuitBreaker{Failures: 1, Cooldown: time.Minute}}
		u := upstream.New(name, p, upstream.Options{Now: now})
		cs[i] = &mode.Candidate{Target: name, Model: "up-" + name, Index: i, Weight: 1, Tries: 1, Upstream: u, Guard: u.Model("up-" + name)}
	}
	return cs
}

// The view ranks as the mode would now, with the targets whose circuit is
// open after the others, marked and unranked by score; the leader is the
// mode's first pick among the open ones. Without a statistics source
// no measured figure is filled.
func TestOfPutsOpenCircuitsLast(t *testing.T) {
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	cs := candidates(t, now, "a", "b", "c")
	adm, ok := cs[0].Upstream.Breaker.Admit()
	if !ok {
		t.Fatal("a closed breaker refused an attempt")
	}
	adm.Resolve(upstream.Fault) // one failure opens it (failures: 1)
	fallback, err := mode.New("fallback", mode.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	m := Of(Policy{Mode: "fallback", Route: "routes[0]", Strategy: fallback}, "chat", "m", cs, nil, now)
	if m.Model != "m" || m.Mode != "fallback" || m.Route != "routes[0]" || m.API != "chat" {
		t.Fatalf("header %+v", m)
	}
	var got []string
	for _, tg := range m.Targets {
		got = append(got, tg.Target)
	}
	if len(got) != 3 || got[0] != "b" || got[1] != "c" || got[2] != "a" {
		t.Fatalf("order %v, want [b c a]", got)
	}
	b, a := m.Targets[0], m.Targets[2]
	if !b.Leader || b.Rank != 1 || b.UpstreamModel != "up-b" || b.Circuit != "closed" {
		t.Fatalf("leader %+v", b)
	}
	if a.Leader || a.Rank != 3 || !a.CircuitOpen || a.Circuit != "open" || a.Note != upstream.SkipCircuitOpen || a.Score != nil {
		t.Fatalf("open target %+v", a)
	}
	if b.Samples != 0 || b.Completion != nil || b.OutputRate != nil {
		t.Fatalf("figures without a statistics source: %+v", b)
	}
}

// When every circuit is open the view still ranks them all, as a request
// would be tried.
func TestOfAllOpenStillRanks(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) }
	cs := candidates(t, now, "a", "b")
	for _, c := range cs {
		adm, _ := c.Upstream.Breaker.Admit()
		adm.Resolve(upstream.Fault)
	}
	fallback, _ := mode.New("fallback", mode.Deps{})
	m := Of(Policy{Mode: "fallback", Strategy: fallback}, "chat", "m", cs, nil, now)
	if len(m.Targets) != 2 || m.Targets[0].Target != "a" || m.Targets[0].Rank != 1 || m.Targets[1].Rank != 2 {
		t.Fatalf("targets %+v", m.Targets)
	}
}

// The debug page is JSON with the gateway's mode and models; extra
// members are added, never over the page's own.
func TestHandlerExtraNeverOverrides(t *testing.T) {
	h := Handler("least-latency", func() []Model { return []Model{{Model: "m", Mode: "least-latency"}} },
		func() map[string]any { return map[string]any{"mode": "forged", "hedge": "p95"} })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/routing", nil))
	var page struct {
		Mode   string
		Hedge  string
		Models []Model
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if rec.Header().Get("Content-Type") != "application/json" || page.Mode != "least-latency" || page.Hedge != "p95" || len(page.Models) != 1 {
		t.Fatalf("page %+v", page)
	}
}
