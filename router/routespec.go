package router

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/mode"
)

// routeSpec is what a request brings to its route.
type routeSpec struct {
	model    string            // the client's model
	eligible []*mode.Candidate // the targets serving it
	buf      []*mode.Candidate // where the order is built (nil: a new array)
	// names is the order the client named (X-Firstbyte-Provider-Order),
	// when manual: those targets first, the others after, as declared.
	names  string
	manual bool
	// preset is the order the client's provider preferences made (nil:
	// none); like a manual order, the affinity does not lead it.
	preset *presetOrder
	prefix affinity.Prefix // the prompt prefix (Key 0: none)
	home   string          // the target that stored the response it continues ("" : none)
	hedge  bool            // it may be sent twice at once (it leaves no state behind)
	// maxTokens is the request's own output limit (0: none), which
	// least-completion caps its expected answer length by.
	maxTokens int
	// req builds each candidate's exchange (nil: the study's simulated
	// attempts), and span is the request's, where skips are noted (nil:
	// none).
	req  *request
	span trace.Span
}

// presetOrder is an order made before the route: the client's provider
// preferences' (preference.go).
type presetOrder struct {
	order     []*mode.Candidate
	selection string
	probe     *mode.Candidate
}
