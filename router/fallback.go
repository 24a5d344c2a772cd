package router

import "github.com/firstbyte-dev/firstbyte/telemetry"

// Fallback tries targets in declaration order: the first that works serves.
type Fallback struct{}

var _ Strategy = Fallback{}

func init() { registerStrategy("fallback", func(StrategyDeps) Strategy { return Fallback{} }) }

// Order returns the eligible candidates as declared.
func (Fallback) Order(dst []*Candidate, _ string, eligible []*Candidate) ([]*Candidate, string) {
	return append(dst, eligible...), telemetry.SelectionOrder
}
