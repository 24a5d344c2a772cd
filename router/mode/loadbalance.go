package mode

import (
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// loadBalance picks the first target at random in proportion to its
// weight; the rest follow by descending weight (ties in declaration order)
// so failover goes to the next most trusted target.
type loadBalance struct {
	rand Rand
}

var _ Strategy = (*loadBalance)(nil)

func init() {
	register("loadbalance", false, func(d Deps) Strategy { return &loadBalance{rand: d.Rand} })
}

// Order draws the leader by weight, then sorts the rest by weight.
func (l *loadBalance) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	base := len(dst)
	dst = append(dst, eligible...)
	out := dst[base:]
	if len(out) < 2 {
		return dst, telemetry.SelectionOrder
	}
	lead := weightedPick(out, l.rand.Float64())
	out[0], out[lead] = out[lead], out[0]
	rest := out[1:]
	// Insertion sort: a handful of targets, stable, no allocation.
	for i := 1; i < len(rest); i++ {
		for j := i; j > 0 && byWeightThenIndex(rest[j], rest[j-1]); j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	return dst, telemetry.SelectionOrder
}

// Rank implements Strategy: by descending weight (the score), ties as
// declared; no leader, since the first pick is drawn at random.
func (l *loadBalance) Rank(dst []Ranked, _ string, eligible []*Candidate) ([]Ranked, int) {
	base := len(dst)
	for _, c := range eligible {
		dst = append(dst, Ranked{Candidate: c, Score: c.Weight, Note: "weight"})
	}
	out := dst[base:]
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && byWeightThenIndex(out[j].Candidate, out[j-1].Candidate); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return dst, -1
}

func byWeightThenIndex(a, b *Candidate) bool {
	if a.Weight != b.Weight {
		return a.Weight > b.Weight
	}
	return a.Index < b.Index
}

// weightedPick returns the index chosen by u in [0,1) over the weights;
// when every weight is zero it picks uniformly.
func weightedPick(cs []*Candidate, u float64) int {
	total := 0.0
	for _, c := range cs {
		total += c.Weight
	}
	if total <= 0 {
		return min(int(u*float64(len(cs))), len(cs)-1)
	}
	x := u * total
	for i, c := range cs {
		if x < c.Weight {
			return i
		}
		x -= c.Weight
	}
	return len(cs) - 1
}
