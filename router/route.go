package router

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/firstbyte-dev/firstbyte/router/affinity"
	"github.com/firstbyte-dev/firstbyte/router/attemptspan"
	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/router/requestlog"
	"github.com/firstbyte-dev/firstbyte/router/upstream"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The pipeline is one small state machine, the same for every mode and for
// every driver: the gateway's handler drives it with real HTTP attempts,
// firstbyte study with simulated ones on a virtual clock.
//
//	order ──> Next ──(admitted)──> attempt ──> End ──(failover)──> Next ...
//	            │                                └──(served, client error, left)──> done
//	            └──(refused: a skip)──> the next candidate ... ──> none left: all failed
//
// A Route is built with the request's order (newRoute, for the handler and
// the study alike). Next hands out the next attempt, a Turn, admitted by
// its provider's circuit breaker (a refusal is a skip, not an attempt);
// the driver runs it and reports how it ended with End, which resolves the
// admission and says whether the request is done (or with Settle, which
// leaves the span's end to the driver). A driver may pass a Turn over
// without an attempt (Skip: the
// request cannot be translated for it, its queue is full) or drop it
// (Abandon: the client left). Nothing else decides what happens next.
//
// Every candidate gets 1 + retry.attempts tries; the cursor moves past a
// candidate when its tries are spent or its breaker refuses. Several Turns
// may be out at once (a hedge): each is resolved by its own End.

// Route is one request's way through its candidates. It is used by one
// goroutine at a time (the driver's).
type Route struct {
	order     []*mode.Candidate
	selection string
	// span is the request's span: every skip becomes an event on it as it
	// happens (the metrics count skips there). Nil: none.
	span trace.Span
	// req is the client's request, from which the route builds a
	// candidate's exchange before its breaker is asked, once per candidate
	// (translated for its wire format); an error is a skip. Nil: every
	// candidate is ready as it is (the study's simulated attempts).
	req *request
	// built is the exchange built last, for the candidate cand (its
	// retries reuse it); every Turn carries its own copy.
	built struct {
		cand *mode.Candidate
		x    exchange
	}
	// untranslatable is why the request could not be carried in some
	// candidate's wire format (a *translate.RequestError inside): the
	// client's 400 when every candidate was skipped for it.
	untranslatable error

	// probe is a disabled candidate whose probe this request claimed (it
	// leads the order); nil: none. Whatever becomes of it, it is resolved.
	probe *mode.Candidate

	pos, try int  // the cursor: the candidate Next tries, and its try
	attempts int  // Turns handed out: upstream attempts started
	forced   bool // the blackout rule has handed out its try
	hedges   int  // of the attempts, hedges (Hedge)
	// hedge is the request's hedge result (won, lost, denied; "" : none
	// was due), which the driver sets.
	hedge string
	// hedging is the gateway's hedge policy, and model the request's
	// client model (its budget); nil: no hedging.
	hedging *mode.Hedging
	model   string
	// prefix is the request's prompt prefix (Key 0: none), and affinity the
	// gateway's memory of who served it, which End teaches; affinityResult
	// says how the order used it (AffinityHit, ...; "" : no prefix).
	prefix         affinity.Prefix
	affinity       *affinity.Table
	affinityResult string
	skipped        []Skip
	failures       []Failure
	// maxTokens is the request's own output limit (0: none), which every
	// attempt span carries.
	maxTokens int
	// lastEnd is how the last attempt to end ended (a hedge's cancelled
	// loser aside): the request log line's error class and reason.
	lastEnd requestlog.End
}

// newRoute builds r, the one way a route is built, for the handler and the
// study alike: the mode's order (or the client's), the prompt-cache
// affinity's lead, the stored response's home first, and the hedge policy.
// unknown is the first name of a manual order that is not an eligible
// target (r is then unusable).
func (g *Gateway) newRoute(r *Route, s routeSpec) (unknown string) {
	now, p := g.now(), g.policyFor(s.model) // the model's mode and hedge policy
	*r = Route{req: s.req, span: s.span, model: s.model, maxTokens: s.maxTokens}
	if s.preset != nil {
		r.order, r.selection, r.probe = s.preset.order, s.preset.selection, s.preset.probe
	} else if s.manual {
		r.order, unknown = manualOrder(s.buf, s.names, s.eligible)
		if unknown != "" {
			return unknown
		}
		r.selection = telemetry.SelectionManual
	} else {
		r.order, r.selection, r.probe = g.order(s.buf, p.strategy, s.model, s.maxTokens, s.eligible)
	}
	if s.prefix.Key != 0 && g.affinity != nil {
		r.prefix, r.affinity = s.prefix, g.affinity // its end teaches who served the prefix
		if !s.manual && s.preset == nil {
			var lead int
			lead, r.affinityResult = g.affinity.Lead(r.order, r.probe, s.model, s.prefix, now)
			if lead >= 0 {
				mode.Lead(r.order, lead)
				r.selection = telemetry.SelectionLeader
			}
		}
	}
	if i := slices.IndexFunc(r.order, func(c *mode.Candidate) bool { return c.Target == s.home }); s.home != "" && i >= 0 {
		if r.probe != nil && r.probe != r.order[i] {
			r.probe.Guard.DisabledProbeDone() // the request is the home's
			r.probe = nil
		}
		mode.Lead(r.order, i)
		r.selection = telemetry.SelectionOrder
	}
	if h := p.hedge; s.hedge && h != nil { // the route's hedge policy
		r.hedging = h
		h.Request(s.model, now) // counted in its model's budget
	}
	return ""
}

// policyFor is the policy of the (resolved) client model: its mode and
// hedge policy (routes.go builds them).
func (g *Gateway) policyFor(model string) *policy {
	if p := g.policies[model]; p != nil {
		return p
	}
	if g.fallbackPolicy == nil { // a Gateway built without New (internal tests)
		return &policy{mode: g.mode, strategy: g.strategy, hedge: g.hedge}
	}
	return g.fallbackPolicy
}

// Turn is one attempt the route handed out: the candidate, its 1-based
// attempt number within the request, the selection its span records, the
// exchange built for that candidate (what the attempt sends, and where),
// and the breaker's admission that End resolves. An attempt is built from
// its Turn alone, so its URL, body and credentials, and the target its
// span, headers and metrics name, are all the candidate's.
type Turn struct {
	Cand      *mode.Candidate
	Attempt   int
	Selection string // the request's selection for attempt 1, then failover

	x exchange // built for Cand from the route's request (zero: none, the study's)

	pos, try int // where the cursor was: Skip moves past this candidate
	adm      upstream.Admission
	probe    bool       // the disabled provider's probe, or a forced try of it
	hedge    bool       // a hedge, started beside a late attempt
	inflight int64      // its provider's attempts in flight from this gateway, itself included
	span     trace.Span // nil until StartSpan
	resolved bool
}

// Hedged reports whether t is a hedge, started beside a late attempt.
func (t *Turn) Hedged() bool { return t.hedge }

// Selection is why the first candidate leads (X-Firstbyte-Selection).
func (r *Route) Selection() string { return r.selection }

// Attempts is how many attempts were handed out (X-Firstbyte-Attempts).
func (r *Route) Attempts() int { return r.attempts }

// Skipped lists the candidates passed over, once per target.
func (r *Route) Skipped() []Skip { return r.skipped }

// Failures lists the failover-safe failures, in the order they ended.
func (r *Route) Failures() []Failure { return r.failures }

// Next hands out the next attempt: the candidate under the cursor, if its
// provider admits one now (not disabled unless this is its probe, not
// cooled, its breaker willing); a refusal is a skip (on its first try) and
// the cursor moves on. When every candidate was passed over without an
// attempt because it was away (open, disabled, or cooled with at least one
// open or disabled), the one most likely to answer is tried anyway, once:
// a request is never refused for what only the gateway believes. ok is
// false when no candidate is left.
func (r *Route) Next() (t Turn, ok bool) {
	for r.pos < len(r.order) {
		c := r.order[r.pos]
		probe := c == r.probe
		x, err := r.prepared(c)
		if err != nil {
			r.passOver(c, SkipUntranslatable, probe)
			continue
		}
		adm, refused := c.Guard.Admit(c.Upstream.Now(), probe)
		if refused != "" {
			if r.try == 0 {
				r.skip(c.Target, refused)
			}
			r.passOver(c, "", probe)
			continue
		}
		t = r.turn(c, x, adm, probe)
		if r.try++; r.try >= c.Tries {
			r.pos, r.try = r.pos+1, 0
		}
		return t, true
	}
	if c := r.blackout(); c != nil {
		r.forced = true
		// The forced try is of a candidate the cursor has passed, whose
		// exchange may not be the one last prepared: it gets its own.
		x, err := r.prepared(c)
		if err != nil {
			return Turn{}, false // not reached: a blackout needs every candidate prepared
		}
		return r.turn(c, x, c.Upstream.Breaker.Force(), c.Guard.Disabled()), true
	}
	return Turn{}, false
}

// Hedge hands out a hedge beside t, a late attempt still running: the
// next candidate in the order after t's (t's own retries are given up: a
// hedge goes to another target), admitted as Next admits. ok is false when
// no candidate is left.
func (r *Route) Hedge(t *Turn) (h Turn, ok bool) {
	if r.pos == t.pos {
		r.pos, r.try = r.pos+1, 0
	}
	if r.pos >= len(r.order) {
		return Turn{}, false
	}
	h, ok = r.Next()
	if ok {
		h.hedge = true
		r.hedges++
	}
	return h, ok
}

// HedgeAfter is how long t may go without a first byte before a hedge
// starts beside it; ok is false when no hedge may (hedging is off, or t's
// target has too few samples to say how late is late).
func (r *Route) HedgeAfter(t *Turn) (time.Duration, bool) {
	if r.hedging == nil {
		return 0, false
	}
	var next *mode.Candidate // the candidate a hedge would go to, as the order stands
	for i := t.pos + 1; i < len(r.order); i++ {
		if r.order[i] != t.Cand {
			next = r.order[i]
			break
		}
	}
	if next == nil {
		return 0, false
	}
	return r.hedging.Delay(r.model, t.Cand, next, t.Cand.Upstream.Now())
}

// HedgeMax is how many hedges may run beside one attempt.
func (r *Route) HedgeMax() int {
	if r.hedging == nil {
		return 0
	}
	return r.hedging.Max()
}

// TryHedge starts a hedge beside last (the newest attempt still running),
// if the model's budget allows one now: a refusal is recorded as the
// request's hedge result (denied) unless a hedge already started.
func (r *Route) TryHedge(last *Turn) (Turn, bool) {
	if r.hedging == nil {
		return Turn{}, false
	}
	if !r.hedging.Take(r.model, last.Cand.Upstream.Now()) {
		if r.hedges == 0 {
			r.hedge = HedgeDenied
		}
		return Turn{}, false
	}
	return r.Hedge(last)
}

// AffinityResult says how the order used the request's prompt prefix:
// AffinityHit, AffinityBroken, AffinityNone; "" when it has none.
func (r *Route) AffinityResult() string { return r.affinityResult }

// SetHedge records the request's hedge result (HedgeWon, HedgeLost,
// HedgeDenied): X-Firstbyte-Hedged and the request span carry it.
func (r *Route) SetHedge(result string) { r.hedge = result }

// HedgeResult is the request's hedge result ("" : none was due).
func (r *Route) HedgeResult() string { return r.hedge }

// prepared is c's exchange for the request, built from it unless
// it was built last (a retry reuses its candidate's); an error is why the
// request cannot be carried in c's wire format.
func (r *Route) prepared(c *mode.Candidate) (exchange, error) {
	if r.req == nil || r.built.cand == c {
		return r.built.x, nil
	}
	x, err := r.req.exchange(c)
	if err != nil {
		r.untranslatable = err
		return exchange{}, err
	}
	r.built.cand, r.built.x = c, x
	return x, nil
}

// turn hands out an attempt of c, which sends x (built for c).
func (r *Route) turn(c *mode.Candidate, x exchange, adm upstream.Admission, probe bool) Turn {
	r.attempts++
	t := Turn{Cand: c, Attempt: r.attempts, Selection: r.selection, x: x, pos: r.pos, try: r.try, adm: adm, probe: probe,
		inflight: c.Upstream.Started()}
	if r.attempts > 1 {
		t.Selection = telemetry.SelectionFailover
	}
	return t
}

// passOver moves the cursor past c without an attempt, listing it as a
// skip for reason ("" : already listed); a probe passed over is given back.
func (r *Route) passOver(c *mode.Candidate, reason string, probe bool) {
	if reason != "" {
		r.skip(c.Target, reason)
	}
	if probe {
		c.Guard.DisabledProbeDone()
		r.probe = nil
	}
	r.pos, r.try = r.pos+1, 0
}

// blackout is the candidate to try when the route was passed over whole
// without an attempt, every candidate away, at least one of them open or
// disabled (when every one is only cooled, the providers said when to come
// back: the client is told so instead): the one available soonest, ties to
// the earlier in the order (the mode's best history). nil when the rule
// does not apply or has been used.
func (r *Route) blackout() *mode.Candidate {
	if r.forced || r.attempts > 0 || len(r.skipped) < len(r.order) {
		return nil
	}
	hard := false
	for _, s := range r.skipped {
		switch s.Reason {
		case SkipCircuitOpen, SkipDisabled:
			hard = true
		case SkipRateLimited:
		default:
			return nil
		}
	}
	if !hard {
		return nil
	}
	var best *mode.Candidate
	var bestAt time.Time
	for _, c := range r.order {
		at := c.Guard.AvailableAt(c.Upstream.Now())
		if best == nil || at.Before(bestAt) {
			best, bestAt = c, at
		}
	}
	return best
}

// Skip passes t's candidate over without an attempt, for reason: its
// admission is resolved as saying nothing of the provider, the attempt it
// was counted as is given back, and the cursor moves past the candidate.
// Only a first try is listed as a skip (a retry's refusal is not).
func (r *Route) Skip(t *Turn, reason string) {
	r.Abandon(t)
	if t.try == 0 {
		r.skip(t.Cand.Target, reason)
	}
	if r.pos == t.pos {
		r.pos, r.try = r.pos+1, 0
	}
}

// Abandon drops t without an attempt: the client left while it waited
// (for a concurrency slot). The admission says nothing of the provider.
func (r *Route) Abandon(t *Turn) {
	t.resolve(upstream.Neutral)
	if t.probe {
		t.Cand.Guard.DisabledProbeDone()
	}
	r.attempts--
}

// End records how t's attempt ended (Settle) and ends its span now, at
// ts. done is true when the request needs no further attempt.
func (r *Route) End(t *Turn, res Result, ts trace.SpanEndOption) (done bool) {
	done, end := r.Settle(t, res, ts)
	end.End()
	return done
}

// Settle records how t's attempt ended, all the next request must see:
// its admission is resolved, its provider's guards told, the affinity
// taught, and a failover-safe failure kept for the all-failed answer. Its
// span's end (stamped ts, the tracker's sample) is handed back to end
// later: the gateway ends it once the client has its answer. done is true
// when the request needs no further attempt: it was served, the client
// got the upstream's own error, or the client left.
func (r *Route) Settle(t *Turn, res Result, ts trace.SpanEndOption) (done bool, end attemptspan.End) {
	if t.span != nil {
		// Still in flight there as this attempt ends, itself not counted.
		end = attemptspan.Hold(t.span, res, ts, t.Cand.Upstream.Inflight()-1, r.maxTokens)
		t.span = nil
	}
	t.resolve(res.Verdict())
	t.Cand.Guard.Settle(res.Report(), t.probe, t.adm.Seq())
	if t.adm.Forced() && res.Outcome == telemetry.OutcomeSuccess {
		// The blackout rule's try was served: the outage is over, as far as
		// one provider can say. The others' circuits end their cooldown, so
		// the next requests probe them (one probe each, from real traffic)
		// rather than stay on this one until their cooldowns run out.
		for _, c := range r.order {
			if c != t.Cand {
				c.Upstream.Breaker.EndCooldown()
			}
		}
	}
	if r.affinity != nil && res.Outcome == telemetry.OutcomeSuccess {
		r.affinity.Record(r.model, r.prefix, t.Cand.Target, t.Cand.Upstream.Now())
	}
	if res.Outcome != telemetry.OutcomeHedgeLost {
		r.lastEnd = requestlog.End{ErrorType: res.ErrorType, Detail: res.Detail, Status: res.Status}
	}
	if res.Outcome != telemetry.OutcomeFailover {
		return true, end
	}
	r.failures = append(r.failures, Failure{Target: t.Cand.Target, Attempt: t.Attempt, Status: res.ClientStatus(), Reason: res.ErrorType, Detail: res.Detail})
	return false, end
}

// skip records a candidate passed over, once per target.
func (r *Route) skip(target, reason string) {
	for _, s := range r.skipped {
		if s.Target == target {
			return
		}
	}
	s := Skip{Target: target, Reason: reason}
	r.skipped = append(r.skipped, s)
	if r.span != nil {
		r.span.AddEvent(telemetry.EventSkip, skipEvent(s))
	}
}

// onlySkipped reports whether every candidate passed over was for reason.
func (r *Route) onlySkipped(reason string) bool {
	for _, s := range r.skipped {
		if s.Reason != reason {
			return false
		}
	}
	return true
}

// StartSpan starts t's attempt span, a CLIENT child of ctx's span, with
// the attributes every attempt starts with; opts add the start time.
// Route.End ends it, or Route.Settle hands its end to the driver.
func (t *Turn) StartSpan(ctx context.Context, tracer trace.Tracer, operation, requestedModel string, opts ...trace.SpanStartOption) context.Context {
	opts = append(opts, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attemptspan.Attributes(t.Cand, operation, requestedModel, t.Attempt, t.Selection, t.inflight)...))
	ctx, t.span = tracer.Start(ctx, attemptspan.Name(t.Cand, operation), opts...)
	return ctx
}

// resolve tells the breaker how the admitted attempt ended, once.
func (t *Turn) resolve(r upstream.Verdict) {
	if !t.resolved {
		t.resolved = true
		t.adm.Resolve(r)
		t.Cand.Upstream.Ended()
	}
}
