package mode

import "github.com/firstbyte-dev/firstbyte/telemetry"

// fallback tries targets in declaration order: the first that works serves.
type fallback struct{}

var _ Strategy = fallback{}

func init() {
	register("fallback", false, func(Deps) Strategy { return fallback{} })
}

// Order returns the eligible candidates as declared.
func (fallback) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	return append(dst, eligible...), telemetry.SelectionOrder
}

// Rank implements Strategy: declaration order; the first declared leads.
func (fallback) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	for _, c := range eligible {
		dst = append(dst, Ranked{Candidate: c, Score: float64(c.Index), Note: "declared"})
	}
	if len(eligible) == 0 {
		return dst, -1
	}
	return dst, 0
}
