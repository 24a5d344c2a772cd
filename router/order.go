package router

import (
	"cmp"
	"strings"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Ordering a request: the active mode's order over the targets whose
// circuit would let an attempt through, then the others; or the order the
// client named (X-Firstbyte-Provider-Order).

// Route is the route a chat request for the client model would take now
// (the study drives it on a virtual clock, as the handler does with real
// attempts). With names nil the active mode orders the candidates; else
// the named targets lead in that order, the other eligible ones after, in
// declaration order (selection manual). ok is false when no target serves
// the model; unknown is the first name that is not an eligible target.
func (g *Gateway) Route(model string, names []string) (r *Route, unknown string, ok bool) {
	eligible := g.routes[familyChat][model]
	if len(eligible) == 0 {
		return nil, "", false
	}
	if names != nil {
		order, unknown := manualOrder(nil, strings.Join(names, ","), eligible)
		if unknown != "" {
			return nil, unknown, true
		}
		return NewRoute(order, telemetry.SelectionManual), "", true
	}
	order, selection := g.order(nil, model, eligible)
	return NewRoute(order, selection), "", true
}

// order is the order a request gets: the strategy's over the targets whose
// circuit would let an attempt through, then those whose would not (in
// declaration order), so an open circuit costs a request nothing unless
// every other target has failed.
func (g *Gateway) order(dst []*Candidate, model string, eligible []*Candidate) ([]*Candidate, string) {
	// On the stack: neither reaches the strategy (an interface call, which
	// would move them to the heap).
	var admittedBuf, blockedBuf [rankedCap]*Candidate
	admitted, blocked := splitByCircuit(admittedBuf[:0], blockedBuf[:0], eligible)
	if len(blocked) == 0 || len(admitted) == 0 {
		return g.strategy.Order(dst, model, eligible)
	}
	// Some circuits open: the strategy orders a copy of the others (the one
	// allocation, as rare as an open circuit).
	dst, selection := g.strategy.Order(dst, model, append([]*Candidate(nil), admitted...))
	return append(dst, blocked...), selection
}

// splitByCircuit appends the eligible candidates whose circuit would let an
// attempt through now to admitted and the others (open within the
// cooldown, or half-open with its probe in flight) to blocked, each in
// eligible's order, asking each breaker once.
func splitByCircuit(admitted, blocked, eligible []*Candidate) ([]*Candidate, []*Candidate) {
	for _, c := range eligible {
		if c.upstream.breaker.blocked() {
			blocked = append(blocked, c)
		} else {
			admitted = append(admitted, c)
		}
	}
	return admitted, blocked
}

// manualOrder puts the targets named in the order header first, in that
// order, then the other eligible ones as declared, so naming targets never
// loses a request that another target could serve. It returns the first
// name that is not an eligible target ("" when all are), and an empty
// header is such a name.
func manualOrder(dst []*Candidate, names string, eligible []*Candidate) ([]*Candidate, string) {
	base := len(dst)
	for name := range strings.SplitSeq(names, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, c := range eligible {
			if c.Target == name {
				found = true
				if !containsCandidate(dst[base:], c) {
					dst = append(dst, c)
				}
			}
		}
		if !found {
			return dst, cmp.Or(name, "(empty)")
		}
	}
	for _, c := range eligible {
		if !containsCandidate(dst[base:], c) {
			dst = append(dst, c)
		}
	}
	return dst, ""
}

func containsCandidate(cs []*Candidate, c *Candidate) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
