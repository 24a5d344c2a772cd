package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/reqbody"
)

// affinityGateway is a gateway over upstreams named a, b and c, which
// answer at once, in mode, ranking on st; its random source never explores
// unless explore is set (then the first request explores its draw).
func affinityGateway(t *testing.T, mode string, st statsTable, rnd mode.Rand) *Gateway {
	t.Helper()
	var b strings.Builder
	b.WriteString("strategy: {mode: " + mode + "}\nproviders:\n")
	for _, name := range []string{"a", "b", "c"} {
		u := newHeldUpstream(t, name)
		close(u.release)
		b.WriteString("  " + name + ": {base_url: \"" + u.URL + "/v1\", models: [m]}\n")
	}
	b.WriteString("targets:\n  - {virtual_key: a}\n  - {virtual_key: b}\n  - {virtual_key: c}\n")
	cfg, err := config.Parse([]byte(b.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Stats: st, Now: fixedNow, Rand: rnd})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// conversation is a chat request whose system prompt is long enough to be
// cached: one conversation per id, whatever its last turn.
func conversation(id, last string) string {
	system := strings.Repeat("You are a careful assistant. ", 200) + id
	return `{"model":"m","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + last + `"}]}`
}

// TestAffinityKeepsAConversationOnItsTarget: the second turn of a
// conversation goes where the first was served while that target's
// expected time and its recent attempts (their EWMA) are within 1.5x the
// best one's expected time, labelled leader even when the mode's order
// would have explored; either past the bound, the order stands (broken); a conversation no target has served follows the order (none);
// a mode that does not rank on latency keeps its own order.
func TestAffinityKeepsAConversationOnItsTarget(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name          string
		mode          string
		b             time.Duration // b's p50; a's is 20 ms, c's 100 ms
		bRecent       time.Duration // b's EWMA of its latest attempts (0: its p50)
		explore       bool          // the second turn's order explores c
		want          string        // who serves the second turn
		wantSelection string
		wantAffinity  string
	}{
		{"within the bound", "least-latency", 25 * ms, 0, false, "b", "leader", affinity.Hit},
		{"at the bound", "least-latency", 30 * ms, 0, false, "b", "leader", affinity.Hit},
		{"past the bound", "least-latency", 31 * ms, 0, false, "a", "leader", affinity.Broken},
		{"recent attempts past the bound", "least-latency", 25 * ms, 31 * ms, false, "a", "leader", affinity.Broken},
		{"p50 past the bound, recent attempts within", "least-latency", 31 * ms, 30 * ms, false, "a", "leader", affinity.Broken},
		{"over an exploring order", "least-latency", 25 * ms, 0, true, "b", "leader", affinity.Hit},
		{"ewma-latency", "ewma-latency", 25 * ms, 0, false, "b", "leader", affinity.Hit},
		{"reliable-latency", "reliable-latency", 25 * ms, 0, false, "b", "leader", affinity.Hit},
		{"fallback keeps its order", "fallback", 25 * ms, 0, false, "a", "order", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := statsTable{"a": target(20*ms, 0.01, 100, 100, 0, 0), "b": target(tt.b, 0.01, 100, 100, 0, 0), "c": target(100*ms, 0.01, 100, 100, 0, 0)}
			if tt.bRecent != 0 {
				bt := st["b"]
				bt.EWMA = tt.bRecent
				st["b"] = bt
			}
			rnd := &scriptedRand{}
			g := affinityGateway(t, tt.mode, st, rnd)
			// Turn 1, served by b on the client's order: b holds the prefix.
			if rec := post1(g, conversation("1", "first"), "b,a,c"); rec.Header().Get(HeaderTarget) != "b" {
				t.Fatalf("turn 1 served by %q, want b", rec.Header().Get(HeaderTarget))
			}
			// What the second turn's route makes of it (a route with no
			// attempt teaches nothing).
			r, _, _ := g.Route("m", RouteOptions{Prefix: prefixOfBody(t, conversation("1", "second"))})
			if got := r.AffinityResult(); got != tt.wantAffinity {
				t.Errorf("affinity result %q, want %q", got, tt.wantAffinity)
			}
			if tt.explore {
				rnd.ints = []int{0, 1} // explore, and the second runner-up (c)
			}
			rec := post1(g, conversation("1", "second"), "")
			h := rec.Header()
			if h.Get(HeaderTarget) != tt.want || h.Get(HeaderAttempts) != "1" || h.Get(HeaderSelection) != tt.wantSelection {
				t.Errorf("turn 2: served by %q after %s attempts, selection %q; want %s at once, %s",
					h.Get(HeaderTarget), h.Get(HeaderAttempts), h.Get(HeaderSelection), tt.want, tt.wantSelection)
			}
			if tt.mode == "least-latency" && !tt.explore {
				if rec := post1(g, conversation("2", "x"), ""); rec.Header().Get(HeaderTarget) != "a" {
					t.Errorf("another conversation served by %q, want a (the order)", rec.Header().Get(HeaderTarget))
				}
			}
		})
	}
}

// post1 sends one chat request with body to g, the client's order in
// X-Firstbyte-Provider-Order when one is given.
func post1(g *Gateway, body, order string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if order != "" {
		req.Header.Set(HeaderProviderOrder, order)
	}
	g.Handler().ServeHTTP(rec, req)
	return rec
}

func prefixOfBody(t *testing.T, body string) affinity.Prefix {
	t.Helper()
	f, err := reqbody.Scan([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return affinity.Of(&f, []byte(body))
}
