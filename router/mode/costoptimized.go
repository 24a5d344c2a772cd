package mode

import (
	"math"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// costOptimized tries the cheapest target first: by the provider's price
// of the upstream model (input + output USD per million tokens, from the
// provider's pricing rate card), unpriced targets last, ties by descending
// weight, then declaration order.
type costOptimized struct{}

var _ Strategy = costOptimized{}

func init() {
	register("cost-optimized", false, func(Deps) Strategy { return costOptimized{} })
}

// cheaper orders a before b.
func cheaper(a, b *Candidate) bool {
	if a.Priced != b.Priced {
		return a.Priced
	}
	if a.Priced && a.Price != b.Price {
		return a.Price < b.Price
	}
	if a.Weight != b.Weight {
		return a.Weight > b.Weight
	}
	return a.Index < b.Index
}

// Order implements Strategy.
func (costOptimized) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	base := len(dst)
	dst = append(dst, eligible...)
	out := dst[base:]
	for i := 1; i < len(out); i++ { // insertion sort: stable, tiny n, no allocation
		for j := i; j > 0 && cheaper(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return dst, telemetry.SelectionOrder
}

// Rank implements Strategy: by price (USD per million tokens), unpriced
// last; the cheapest leads.
func (c costOptimized) Rank(dst []Ranked, model string, eligible []*Candidate) ([]Ranked, int) {
	var buf [RankedCap]*Candidate
	order, _ := c.Order(buf[:0], model, eligible)
	for _, cand := range order {
		r := Ranked{Candidate: cand, Score: cand.Price, Note: "price"}
		if !cand.Priced {
			r.Score, r.Note = math.NaN(), "unpriced"
		}
		dst = append(dst, r)
	}
	if len(order) == 0 {
		return dst, -1
	}
	return dst, 0
}
