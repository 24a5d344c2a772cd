package router

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// ModelRouting is the routing state of one client model as the active mode
// sees it: what /debug/routing shows and the routing gauges export.
type ModelRouting struct {
	Model string `json:"model"`
	Mode  string `json:"mode"`
	// Route is the route in force ("routes[0]"), absent when the
	// strategy serves the model.
	Route   string          `json:"route,omitempty"`
	API     string          `json:"api"` // "chat": chat completions and messages alike, from targets of either kind
	Targets []TargetRouting `json:"targets"`
}

// TargetRouting is one candidate's state. Rank is its 1-based place in the
// order a request would get now from the active mode, without exploration
// or randomness (targets whose circuit is open after the others); Leader
// marks the target the mode prefers now (none in modes that rotate or draw
// the first pick at random). Score is the figure the mode ranks on, in its
// own unit: seconds for the latency modes (p50, EWMA, or reliable-latency's
// expected time to a first byte), USD per million tokens for
// cost-optimized, the weight for loadbalance, the declaration index for
// fallback; null when the target has none.
type TargetRouting struct {
	Target        string   `json:"target"`
	UpstreamModel string   `json:"upstream_model"`
	Rank          int      `json:"rank"`
	Leader        bool     `json:"leader"`
	Score         *float64 `json:"score"`
	Note          string   `json:"note,omitempty"`

	P50Seconds       float64 `json:"p50_seconds"`
	EWMASeconds      float64 `json:"ewma_seconds"`
	Samples          int     `json:"samples"`
	SamplesSelf      int     `json:"samples_self"`
	SamplesPeers     int     `json:"samples_peers"`
	SamplesForeign   int     `json:"samples_foreign"`
	OldestSampleAgeS float64 `json:"oldest_sample_age_seconds"`
	FaultRate        float64 `json:"fault_rate"`
	Faults           float64 `json:"faults"`   // weighted live faults (a 400/422 counts half)
	Outcomes         int     `json:"outcomes"` // live outcomes the fault rate is over
	FaultSeconds     float64 `json:"fault_seconds"`

	Circuit     string `json:"circuit"` // closed | open | half_open
	CircuitOpen bool   `json:"circuit_open"`
	// Disabled is why the target's provider is disabled (auth, quota; ""
	// when it is not); NextProbe is when its next probe may go (RFC 3339).
	Disabled  string `json:"disabled,omitempty"`
	NextProbe string `json:"next_probe,omitempty"`
	// RateLimitedUntil is when the provider's rate limits let it be tried
	// again (Unix seconds; 0 when it is not cooled).
	RateLimitedUntil float64 `json:"rate_limited_until"`

	// Inflight is this gateway's attempts in flight at the target now;
	// PeerInflight what peers' latest spans said of theirs; LoadFactor the
	// factor the latency modes scale its estimate by for a new request
	// (see mode.LoadFactor).
	Inflight     int     `json:"inflight"`
	PeerInflight int     `json:"peer_inflight"`
	LoadFactor   float64 `json:"load_factor"`

	// Completion is the predicted time to the last token and its parts;
	// OutputRate the output rate's percentiles (nil: the statistics
	// source keeps no output rates).
	Completion *CompletionRouting `json:"completion,omitempty"`
	OutputRate *OutputRateRouting `json:"output_rate,omitempty"`
}

// Routing reads the current state of every model, sorted by model, as chat
// requests (chat completions and messages alike) are routed: every target
// serves them. The other endpoints route over the subset of the same
// candidates of the provider kind that speaks them, in the same order. It
// reads the statistics source and the active mode, so it is exactly what
// the next request would be ordered by.
func (g *Gateway) Routing() []ModelRouting {
	var out []ModelRouting
	chat := g.routes[familyChat]
	models := make([]string, 0, len(chat))
	for m := range chat {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		out = append(out, g.modelRouting(familyChat, m, chat[m]))
	}
	return out
}

func (g *Gateway) modelRouting(kind, model string, cands []*mode.Candidate) ModelRouting {
	p := g.policyFor(model)
	mr := ModelRouting{Model: model, Mode: p.mode, Route: p.route, API: kind}
	open, blocked := splitByCircuit(nil, nil, cands)
	ranked, leader := p.strategy.Rank(nil, model, open)
	if len(open) == 0 {
		ranked, _ = p.strategy.Rank(nil, model, blocked)
		blocked = nil
	}
	for _, c := range blocked {
		ranked = append(ranked, mode.Ranked{Candidate: c, Score: math.NaN(), Note: SkipCircuitOpen})
	}
	var now time.Time
	if g.stats != nil {
		now = g.now()
	}
	for i, r := range ranked {
		c := r.Candidate
		u := c.Upstream
		state := u.Breaker.State()
		t := TargetRouting{
			Target: c.Target, UpstreamModel: c.Model, Rank: i + 1, Leader: i == leader, Note: r.Note,
			Circuit: state.String(), CircuitOpen: state != upstream.CircuitClosed,
		}
		if reason, next := c.Guard.DisabledState(); reason != "" {
			t.Disabled, t.NextProbe = reason, next.UTC().Format(time.RFC3339)
		}
		if until := c.Guard.CooledUntil(g.now()); !until.IsZero() {
			t.RateLimitedUntil = float64(until.UnixNano()) / 1e9
		}
		if !math.IsNaN(r.Score) && !math.IsInf(r.Score, 0) {
			s := r.Score
			t.Score = &s
		}
		if g.stats != nil {
			st := g.stats.StatsAt(c.Target, c.Model, now)
			t.P50Seconds, t.EWMASeconds, t.Samples = st.P50.Seconds(), st.EWMA.Seconds(), st.Samples
			t.SamplesSelf, t.SamplesPeers, t.SamplesForeign = st.SelfSamples, st.PeerSamples, st.ForeignSamples
			t.FaultRate, t.Faults, t.Outcomes, t.FaultSeconds = st.FaultRate, st.Faults, st.Outcomes, st.FaultSeconds
			t.Inflight, t.PeerInflight, t.LoadFactor = int(u.Inflight()), st.PeerInflight, mode.LoadFactor(c, &st)
			if st.Samples > 0 {
				t.OldestSampleAgeS = max(0, now.Sub(st.Oldest).Seconds())
			}
			g.addCompletion(&t, &ranked[i], model, &st, now)
		}
		mr.Targets = append(mr.Targets, t)
	}
	return mr
}

// RoutingHandler serves GET /debug/routing: per model and target, the
// active mode's score, rank and leader, the statistics behind them and the
// circuit state. No prompt or key is in it.
func (g *Gateway) RoutingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		out := map[string]any{"mode": g.mode, "models": g.Routing()}
		if g.debugExtra != nil {
			for k, v := range g.debugExtra() {
				if _, taken := out[k]; !taken {
					out[k] = v
				}
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	})
}
