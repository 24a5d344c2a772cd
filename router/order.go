package router

import (
	"cmp"
	"slices"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Ordering a request: the active mode's order over the targets whose
// circuit would let an attempt through, then the others; or the order the
// client named (X-Firstbyte-Provider-Order).

// RouteOptions are what a request brings to its route beside its model.
type RouteOptions struct {
	// Names is the order the client named (X-Firstbyte-Provider-Order):
	// those targets first, in that order, the other eligible ones after,
	// in declaration order (selection manual). Nil: the mode orders.
	Names []string
	// Prefix is the request's prompt prefix, for the prompt-cache
	// affinity (Key 0: none).
	Prefix affinity.Prefix
	// MaxTokens is the request's own limit on its answer's length (0:
	// none), as outputLimit reads it from a body.
	MaxTokens int
}

// Route is the route a chat request for the client model would take now
// (the study drives it on a virtual clock, as the handler does with real
// attempts), built as the handler builds a request's. ok is false when no
// target serves the model; unknown is the first of o.Names that is not an
// eligible target.
func (g *Gateway) Route(model string, o RouteOptions) (r *Route, unknown string, ok bool) {
	eligible := g.routes[familyChat][model]
	if len(eligible) == 0 {
		return nil, "", false
	}
	spec := routeSpec{model: model, eligible: eligible, prefix: o.Prefix, hedge: true, maxTokens: o.MaxTokens}
	if o.Names != nil {
		spec.names, spec.manual = strings.Join(o.Names, ","), true
	}
	r = &Route{}
	if unknown := g.newRoute(r, spec); unknown != "" {
		return nil, unknown, true
	}
	return r, "", true
}

// order is the order a request gets: the strategy's over the targets
// that would take an attempt now, then those that would not: cooled by a
// rate limit, then whose circuit is open (or half-open with its probe
// out), then disabled (each group in declaration order). An unavailable
// target costs a request nothing unless every other one has failed. A
// disabled target whose probe is due leads the one request that claims it
// (selection explore), so a revoked key costs one attempt per probe
// interval; probe is that candidate (nil: none), which the route must
// resolve. strategy is the model's mode (its policy's); maxTokens is the
// request's own output limit (0: none), for the modes that predict an
// answer's length.
func (g *Gateway) order(dst []*mode.Candidate, strategy mode.Strategy, model string, maxTokens int, eligible []*mode.Candidate) (order []*mode.Candidate, selection string, probe *mode.Candidate) {
	now := g.now()
	// On the stack: none reaches the strategy (an interface call, which
	// would move them to the heap).
	var availBuf, awayBuf [mode.RankedCap]*mode.Candidate
	var whyBuf [mode.RankedCap]string
	avail, away, why := availBuf[:0], awayBuf[:0], whyBuf[:0] // why[i]: away[i]'s skip reason, read once
	for _, c := range eligible {
		if probe == nil && c.Guard.ClaimDisabledProbe(now) {
			probe = c
			continue
		}
		if reason := c.Guard.AwayFor(now); reason != "" {
			away, why = append(away, c), append(why, reason)
			continue
		}
		avail = append(avail, c)
	}
	if probe == nil && (len(away) == 0 || len(avail) == 0 && !slices.Contains(why, SkipDisabled)) {
		// All available, or none and none disabled: the mode orders them
		// all (when none is available, its order breaks the ties when the
		// blackout rule picks one to try).
		dst, selection = mode.OrderFor(strategy, dst, model, maxTokens, eligible)
		return dst, selection, nil
	}
	if probe != nil {
		dst = append(dst, probe)
	}
	groups := awayOrder[:]
	if len(avail) == 0 {
		// Nothing is available: the mode orders the cooled and the open
		// ones, the disabled go last.
		for i, c := range away {
			if why[i] != SkipDisabled {
				avail = append(avail, c)
			}
		}
		groups = awayOrder[2:]
	}
	selection = telemetry.SelectionOrder
	if len(avail) > 0 {
		// The strategy orders a copy (the one allocation, as rare as an
		// unavailable target).
		dst, selection = mode.OrderFor(strategy, dst, model, maxTokens, append([]*mode.Candidate(nil), avail...))
	}
	for _, reason := range groups {
		for i, c := range away {
			if why[i] == reason {
				dst = append(dst, c)
			}
		}
	}
	if probe != nil {
		selection = telemetry.SelectionExplore
	}
	return dst, selection, probe
}

// awayOrder is the order of the unavailable groups after the available
// targets.
var awayOrder = [...]string{SkipRateLimited, SkipCircuitOpen, SkipDisabled}

// manualOrder puts the targets named in the order header first, in that
// order, then the other eligible ones as declared, so naming targets never
// loses a request that another target could serve. It returns the first
// name that is not an eligible target ("" when all are), and an empty
// header is such a name.
func manualOrder(dst []*mode.Candidate, names string, eligible []*mode.Candidate) ([]*mode.Candidate, string) {
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

func containsCandidate(cs []*mode.Candidate, c *mode.Candidate) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
