package router

import (
	"math"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// CostOptimized tries the cheapest target first: by the provider's price
// of the upstream model (input + output USD per million tokens, from the
// provider's pricing rate card), unpriced targets last, ties by descending
// weight, then declaration order.
type CostOptimized struct{}

var _ Strategy = CostOptimized{}

func init() {
	registerStrategy("cost-optimized", false, func(StrategyDeps) Strategy { return CostOptimized{} })
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
func (CostOptimized) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
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
func (c CostOptimized) Rank(dst []Ranked, model string, eligible []*Candidate) ([]Ranked, int) {
	var buf [rankedCap]*Candidate
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
