package mode

import (
	"math"
	"sync/atomic"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// roundRobin rotates which target leads, one step per request; the rest
// follow in declaration order after it.
type roundRobin struct {
	next atomic.Uint64 // shared by all models: rotation, not fairness per model
}

var _ Strategy = (*roundRobin)(nil)

func init() {
	register("round-robin", false, func(Deps) Strategy { return &roundRobin{} })
}

// Order rotates eligible by a counter.
func (r *roundRobin) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	if len(eligible) == 0 {
		return dst, telemetry.SelectionOrder
	}
	start := int((r.next.Add(1) - 1) % uint64(len(eligible)))
	dst = append(dst, eligible[start:]...)
	return append(dst, eligible[:start]...), telemetry.SelectionOrder
}

// Rank implements Strategy: declaration order, no leader (the lead rotates).
func (r *roundRobin) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	for _, c := range eligible {
		dst = append(dst, Ranked{Candidate: c, Score: math.NaN(), Note: "rotates"})
	}
	return dst, -1
}
