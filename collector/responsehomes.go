package collector

import (
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Response homes. An attempt that left its response stored at its
// provider carries the response's id (gen_ai.response.id); whoever reads
// the span learns which target holds that response, so a follow-up naming
// it (previous_response_id) can go there from any replica. The tracker
// keeps them in a bounded memory for the provider's retention (package
// homes); the router reads them through an interface of its own.

// learnHome teaches the tracker the response a successful attempt of a
// configured (target, model) stored; at is span's facts.
func (a *Aggregator) learnHome(span ptrace.Span, at *attemptFacts, table *targetTable) {
	if at.responseID == "" || at.model == "" || !table.knows(at.target, at.model) || !at.succeeded() {
		return
	}
	a.tracker.RecordResponseHome(at.responseID, at.target, endTime(span))
}

// RecordResponseHome notes that target stored the response id at
// storedAt; a zero storedAt, or one in the future (a peer's clock running
// ahead), means now.
func (t *Tracker) RecordResponseHome(id, target string, storedAt time.Time) {
	if now := t.now(); storedAt.IsZero() || storedAt.After(now) {
		storedAt = now
	}
	t.homes.Put(id, target, storedAt)
}

// ResponseHome is the target that stored the response id, if a span said
// so and the provider still keeps it at now.
func (t *Tracker) ResponseHome(id string, now time.Time) (target string, ok bool) {
	return t.homes.Get(id, now)
}
