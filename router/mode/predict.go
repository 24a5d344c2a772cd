package mode

import "time"

// CompletionPredictor predicts what a caller of a long answer waits for:
// the time to the last token of a request at c whose answer may be up to
// maxTokens long (0: no limit asked), in seconds; ok is false when c is
// unmeasured for it. The least-completion mode's strategy implements it,
// and a request's `sort: completion` ranks on it under any mode.
type CompletionPredictor interface {
	PredictCompletion(c *Candidate, model string, maxTokens int, now time.Time) (seconds float64, ok bool)
}

// CompletionMode is the mode that predicts the time to the last token.
const CompletionMode = "least-completion"

// NewCompletionPredictor builds CompletionMode's predictor over deps, or
// returns false when this build has no such mode (or deps no statistics):
// then `sort: completion` ranks as `sort: latency` does.
func NewCompletionPredictor(deps Deps) (CompletionPredictor, bool) {
	if _, ok := strategies[CompletionMode]; !ok || deps.Stats == nil {
		return nil, false
	}
	s, err := New(CompletionMode, deps)
	if err != nil {
		return nil, false
	}
	p, ok := s.(CompletionPredictor)
	return p, ok
}
