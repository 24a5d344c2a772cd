package mode

// CompletionSorter orders candidates by the predicted time to the last
// token of a request for model that set maxTokens (0: none), without
// exploration: measured targets first, shortest first, ties and the
// unmeasured after in eligible's order. The least-completion mode's
// strategy implements it, and a request's `sort: completion` orders with
// it under any mode.
type CompletionSorter interface {
	Sort(dst []*Candidate, model string, maxTokens int, eligible []*Candidate) []*Candidate
}

// CompletionMode is the mode that predicts the time to the last token.
const CompletionMode = "least-completion"

// NewCompletionSorter builds CompletionMode's sorter over deps, or
// returns false when this build has no such mode (or deps no statistics):
// then `sort: completion` ranks as `sort: latency` does.
func NewCompletionSorter(deps Deps) (CompletionSorter, bool) {
	if _, ok := strategies[CompletionMode]; !ok || deps.Stats == nil {
		return nil, false
	}
	s, err := New(CompletionMode, deps)
	if err != nil {
		return nil, false
	}
	p, ok := s.(CompletionSorter)
	return p, ok
}
