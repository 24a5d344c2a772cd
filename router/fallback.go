package router

import "github.com/firstbyte-dev/firstbyte/telemetry"

// Fallback tries targets in declaration order: the first that works serves.
type Fallback struct{}

var _ Strategy = Fallback{}

func init() {
	registerStrategy("fallback", false, func(StrategyDeps) Strategy { return Fallback{} })
}

// Order returns the eligible candidates as declared.
func (Fallback) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	return append(dst, eligible...), telemetry.SelectionOrder
}

// Rank implements Strategy: declaration order; the first declared leads.
func (Fallback) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	for _, c := range eligible {
		dst = append(dst, Ranked{Candidate: c, Score: float64(c.Index), Note: "declared"})
	}
	if len(eligible) == 0 {
		return dst, -1
	}
	return dst, 0
}
