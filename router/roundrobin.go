package router

import (
	"math"
	"sync/atomic"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// RoundRobin rotates which target leads, one step per request; the rest
// follow in declaration order after it.
type RoundRobin struct {
	next atomic.Uint64 // shared by all models: rotation, not fairness per model
}

var _ Strategy = (*RoundRobin)(nil)

func init() {
	registerStrategy("round-robin", false, func(StrategyDeps) Strategy { return &RoundRobin{} })
}

// Order rotates eligible by a counter.
func (r *RoundRobin) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	if len(eligible) == 0 {
		return dst, telemetry.SelectionOrder
	}
	start := int((r.next.Add(1) - 1) % uint64(len(eligible)))
	dst = append(dst, eligible[start:]...)
	return append(dst, eligible[:start]...), telemetry.SelectionOrder
}

// Rank implements Strategy: declaration order, no leader (the lead rotates).
func (r *RoundRobin) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	for _, c := range eligible {
		dst = append(dst, Ranked{Candidate: c, Score: math.NaN(), Note: "rotates"})
	}
	return dst, -1
}
