// Package routingview is the routing state of every client model as its
// mode sees it now: what /debug/routing shows (Handler), what the routing
// gauges export and what the demo draws. It reads the modes, the
// statistics source and each provider's guards; it decides nothing.
package routingview

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Model is the routing state of one client model as the active mode
// sees it: what /debug/routing shows and the routing gauges export.
type Model struct {
	Model string `json:"model"`
	Mode  string `json:"mode"`
	// Route is the route in force ("routes[0]"), absent when the
	// strategy serves the model.
	Route   string   `json:"route,omitempty"`
	API     string   `json:"api"` // "chat": chat completions and messages alike, from targets of either kind
	Targets []Target `json:"targets"`
}

// Target is one candidate's state. Rank is its 1-based place in the
// order a request would get now from the active mode, without exploration
// or randomness (targets whose circuit is open after the others); Leader
// marks the target the mode prefers now (none in modes that rotate or draw
// the first pick at random). Score is the figure the mode ranks on, in its
// own unit: seconds for the latency modes (p50, EWMA, or reliable-latency's
// expected time to a first byte), USD per million tokens for
// cost-optimized, the weight for loadbalance, the declaration index for
// fallback; null when the target has none.
type Target struct {
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
	Completion *Completion `json:"completion,omitempty"`
	OutputRate *OutputRate `json:"output_rate,omitempty"`
}

// Policy is how a model's candidates are ordered: the mode's name, the
// route in force ("routes[0]"; "" : the strategy) and the mode itself.
type Policy struct {
	Mode, Route string
	Strategy    mode.Strategy
}

// Of is model's routing state, its candidates (cands, of the endpoint
// family kind) ordered by p as the next request would be. stats may be
// nil (a mode that ranks on no measurement); now is the gateway's clock.
func Of(p Policy, kind, model string, cands []*mode.Candidate, stats mode.StatsSource, now func() time.Time) Model {
	mr := Model{Model: model, Mode: p.Mode, Route: p.Route, API: kind}
	open, blocked := splitByCircuit(nil, nil, cands)
	ranked, leader := p.Strategy.Rank(nil, model, open)
	if len(open) == 0 {
		ranked, _ = p.Strategy.Rank(nil, model, blocked)
		blocked = nil
	}
	for _, c := range blocked {
		ranked = append(ranked, mode.Ranked{Candidate: c, Score: math.NaN(), Note: upstream.SkipCircuitOpen})
	}
	var at time.Time
	if stats != nil {
		at = now()
	}
	for i, r := range ranked {
		c := r.Candidate
		u := c.Upstream
		state := u.Breaker.State()
		t := Target{
			Target: c.Target, UpstreamModel: c.Model, Rank: i + 1, Leader: i == leader, Note: r.Note,
			Circuit: state.String(), CircuitOpen: state != upstream.CircuitClosed,
		}
		if reason, next := c.Guard.DisabledState(); reason != "" {
			t.Disabled, t.NextProbe = reason, next.UTC().Format(time.RFC3339)
		}
		if until := c.Guard.CooledUntil(now()); !until.IsZero() {
			t.RateLimitedUntil = float64(until.UnixNano()) / 1e9
		}
		if !math.IsNaN(r.Score) && !math.IsInf(r.Score, 0) {
			s := r.Score
			t.Score = &s
		}
		if stats != nil {
			st := stats.StatsAt(c.Target, c.Model, at)
			t.P50Seconds, t.EWMASeconds, t.Samples = st.P50.Seconds(), st.EWMA.Seconds(), st.Samples
			t.SamplesSelf, t.SamplesPeers, t.SamplesForeign = st.SelfSamples, st.PeerSamples, st.ForeignSamples
			t.FaultRate, t.Faults, t.Outcomes, t.FaultSeconds = st.FaultRate, st.Faults, st.Outcomes, st.FaultSeconds
			t.Inflight, t.PeerInflight, t.LoadFactor = int(u.Inflight()), st.PeerInflight, mode.LoadFactor(c, &st)
			if st.Samples > 0 {
				t.OldestSampleAgeS = max(0, at.Sub(st.Oldest).Seconds())
			}
			addCompletion(stats, &t, &ranked[i], model, &st, at)
		}
		mr.Targets = append(mr.Targets, t)
	}
	return mr
}

// Handler serves GET /debug/routing: per model and target, the active
// mode's score, rank and leader, the statistics behind them and the
// circuit state, under the gateway's mode; extra (nil: none) adds members.
// No prompt or key is in it.
func Handler(modeName string, models func() []Model, extra func() map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		out := map[string]any{"mode": modeName, "models": models()}
		if extra != nil {
			for k, v := range extra() {
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

// splitByCircuit appends the eligible candidates whose circuit would let an
// attempt through now to admitted and the others (open within the
// cooldown, or half-open with its probe in flight) to blocked, each in
// eligible's order, asking each breaker once.
func splitByCircuit(admitted, blocked, eligible []*mode.Candidate) ([]*mode.Candidate, []*mode.Candidate) {
	for _, c := range eligible {
		if c.Upstream.Breaker.Blocked() {
			blocked = append(blocked, c)
		} else {
			admitted = append(admitted, c)
		}
	}
	return admitted, blocked
}
