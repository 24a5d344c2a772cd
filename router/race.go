package router

import "time"

// The hedged race: a request's attempt runs; if it has produced no first
// byte when the hedge's delay (mode.Hedging) passes and the budget allows, the
// route's next candidate starts beside it (up to strategy.hedge.max of
// them). The first racer to reach a first byte the client could be given
// (a stream's first event, a unary answer whole and checked) wins: every
// other is cancelled at once (ended as hedge_lost) before a byte of the
// winner is written, so a client only ever gets one answer. A racer that
// fails before its first byte leaves the others running; when all have
// failed, the driver goes on as it would after one failure (Route.Next).
//
// A racer whose answer is the upstream's own error for the client (a 400,
// a 404: not failover-safe) does not win while another is still running:
// that answer says only what one provider made of the request, and the
// request without a hedge would have had the other's. It is held, and
// served only if every other racer fails.
//
// Race is that rule, once: the gateway runs it with real attempts
// (race_gateway.go), firstbyte study with simulated ones on a virtual
// clock. The race decides; its driver starts attempts, times the hedge
// delay and reports each attempt's end.

// Attempts is what a race drives: the attempts of one request.
type Attempts interface {
	// Start starts an attempt of t and returns where the driver keeps t
	// (the race and the driver's reports name it by that pointer); nil
	// when it cannot start now (the driver passed t over, Route.Skip).
	// Its end comes back through Race.Ended.
	Start(t Turn) *Turn
	// Wake asks for Race.HedgeDue after d, in place of an earlier call.
	Wake(d time.Duration)
}

// RacerEnd is how a racer's attempt ended, as its race needs to know.
type RacerEnd uint8

const (
	RacerFailedOver  RacerEnd = iota // failed before its first byte, failover-safe: the others race on
	RacerAnswered                    // a first byte the client can be given: it wins
	RacerClientError                 // the upstream's own error for the client: held while another runs
	RacerFinal                       // the request ends here (the client left, the gateway stops, a panic)
)

// RaceStep is what the driver does after a racer's end.
type RaceStep uint8

const (
	RaceOn     RaceStep = iota // the others race on (the ended racer is done with: report it)
	RaceHold                   // the racer's answer is held; keep it, unreported, for now
	RaceLose                   // a second client error: end the racer as hedge_lost
	RaceFinish                 // the race ends with Winner: cancel and end every other racer (Others)
	RaceFailed                 // every racer failed over: the route's next candidate (Route.Next)
)

// Race is one hedged race of a request's route, driven by one goroutine
// at a time.
type Race struct {
	route   *Route
	at      Attempts
	delay   time.Duration // how late the first racer may be before a hedge starts
	running []*Turn
	last    *Turn // the newest racer: a next hedge goes past it
	held    *Turn // a client error, kept while another racer runs
	winner  *Turn
}

// Race starts t's attempt through at and races it: a hedge is due (Wake)
// after HedgeAfter(t) when hedging is on and t's target can say how late
// is late.
func (r *Route) Race(t Turn, at Attempts) *Race {
	delay, hedges := r.HedgeAfter(&t)
	return r.race(t, at, delay, hedges)
}

// race is Race with t's hedge delay known (hedges: one may be due).
func (r *Route) race(t Turn, at Attempts, delay time.Duration, hedges bool) *Race {
	x := &Race{route: r, at: at, delay: delay}
	x.raceWith(t, hedges)
	return x
}

// raceWith starts t's attempt, the newest racer, and asks for a hedge
// after the delay when wake.
func (x *Race) raceWith(t Turn, wake bool) {
	p := x.at.Start(t)
	if p == nil {
		return
	}
	x.running = append(x.running, p)
	x.last = p
	if wake {
		x.at.Wake(x.delay)
	}
}

// Running is how many racers are still running.
func (x *Race) Running() int { return len(x.running) }

// HedgeDue starts a hedge beside the newest racer, as the hedge delay has
// passed without a first byte: when fewer than 1 + strategy.hedge.max run,
// the route has a candidate left and the model's budget allows; another
// is due after the delay while more may run.
func (x *Race) HedgeDue() {
	max := x.route.HedgeMax()
	if len(x.running) == 0 || len(x.running) > max {
		return
	}
	h, ok := x.route.TryHedge(x.last)
	if !ok {
		return
	}
	x.raceWith(h, len(x.running)+1 <= max)
}

// Ended takes t's end and says what the driver does next. After
// RaceFinish, Winner is the racer whose end ends the race (t, or a held
// client error) and Others those to cancel and end as hedge_lost.
func (x *Race) Ended(t *Turn, how RacerEnd) RaceStep {
	for i, p := range x.running {
		if p == t {
			x.running = append(x.running[:i], x.running[i+1:]...)
			break
		}
	}
	switch how {
	case RacerClientError:
		if len(x.running) > 0 {
			if x.held == nil {
				x.held = t
				return RaceHold
			}
			return RaceLose // the first client error is the one kept
		}
		return x.finish(t)
	case RacerAnswered, RacerFinal:
		return x.finish(t)
	}
	if len(x.running) == 0 {
		if x.held != nil { // every other racer failed: the client error is the answer
			return x.finish(x.held)
		}
		return RaceFailed
	}
	return RaceOn
}

// finish ends the race with w.
func (x *Race) finish(w *Turn) RaceStep {
	x.winner = w
	return RaceFinish
}

// Winner is the racer that ended the race (nil before RaceFinish).
func (x *Race) Winner() *Turn { return x.winner }

// Others are the racers still running when the race ended, to cancel
// and end as hedge_lost.
func (x *Race) Others() []*Turn { return x.running }

// Beaten is a held client error the winner beat, to end as hedge_lost
// (nil: none).
func (x *Race) Beaten() *Turn {
	if x.held != x.winner {
		return x.held
	}
	return nil
}

// Served records the race's hedge result as the winner's answer goes to
// a client still there: won when a hedge served, lost when the first
// attempt did. A race that served nothing was neither.
func (x *Race) Served() {
	if x.route.hedges > 0 && x.winner != nil {
		x.route.SetHedge(HedgeLost)
		if x.winner.hedge {
			x.route.SetHedge(HedgeWon)
		}
	}
}
