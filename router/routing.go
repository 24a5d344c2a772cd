package router

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"
)

// SampleAger is optionally implemented by a LatencySource that can say how
// old its oldest live sample is (for the debug page).
type SampleAger interface {
	OldestSampleAge(target, model string) (time.Duration, bool)
}

// ModelRouting is the routing state of one client model: what
// /debug/routing shows and the leader and p50 gauges export.
type ModelRouting struct {
	Model   string          `json:"model"`
	Mode    string          `json:"mode"`
	API     string          `json:"api"` // provider kind: openai or anthropic
	Targets []TargetRouting `json:"targets"`
}

// TargetRouting is one candidate's state. Rank is its 1-based place in the
// order a request would get now without exploration (unmeasured first, in
// declaration order); Leader marks the lowest p50 among the measured.
type TargetRouting struct {
	Target           string  `json:"target"`
	UpstreamModel    string  `json:"upstream_model"`
	P50Seconds       float64 `json:"p50_seconds"`
	Samples          int     `json:"samples"`
	OldestSampleAgeS float64 `json:"oldest_sample_age_seconds"`
	Rank             int     `json:"rank"`
	Leader           bool    `json:"leader"`
	CircuitOpen      bool    `json:"circuit_open"`
}

// Routing reads the current state of every model, sorted by API and model.
// It reads the latency source, so it is as fresh as the tracker.
func (g *Gateway) Routing() []ModelRouting {
	var out []ModelRouting
	kinds := make([]string, 0, len(g.routes))
	for k := range g.routes {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	ager, _ := g.latency.(SampleAger)
	for _, kind := range kinds {
		models := make([]string, 0, len(g.routes[kind]))
		for m := range g.routes[kind] {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			cands := g.routes[kind][m]
			mr := ModelRouting{Model: m, Mode: g.mode, API: kind, Targets: make([]TargetRouting, len(cands))}
			p50s := make([]time.Duration, len(cands)) // -1: no live sample
			index := make(map[*Candidate]int, len(cands))
			for i, c := range cands {
				index[c] = i
				p50s[i] = -1
				t := TargetRouting{Target: c.Target, UpstreamModel: c.Model, CircuitOpen: c.upstream.breaker.isOpen()}
				if g.latency != nil {
					if p, n, ok := g.latency.P50(c.Target, c.Model); ok {
						t.P50Seconds, t.Samples, p50s[i] = p.Seconds(), n, p
					}
				}
				if ager != nil {
					if age, ok := ager.OldestSampleAge(c.Target, c.Model); ok {
						t.OldestSampleAgeS = age.Seconds()
					}
				}
				mr.Targets[i] = t
			}
			// The order least-latency gives without exploration (unmeasured
			// ones unshuffled); its first measured target is the leader.
			order, cold := rankByScore(nil, cands, p50s, make([]time.Duration, 0, len(cands)))
			for rank, c := range order {
				mr.Targets[index[c]].Rank = rank + 1
			}
			if cold < len(order) {
				mr.Targets[index[order[cold]]].Leader = true
			}
			out = append(out, mr)
		}
	}
	return out
}

// RoutingHandler serves GET /debug/routing: per model and target, p50, live
// samples, oldest sample age, rank and leader. No prompt or key is in it.
func (g *Gateway) RoutingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			Mode   string         `json:"mode"`
			Models []ModelRouting `json:"models"`
		}{g.mode, g.Routing()})
	})
}
