package study

import (
	"math"
	"slices"
	"time"

	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// Answers after their first byte. A success streams its answer at its
// target's Behaviour.Rate: its attempt span ends at the last token and
// carries the answer's length and rate (gen_ai.usage.output_tokens,
// firstbyte.output_tokens_per_second), as the gateway's own streams do; the
// request's time to the last token is its time to first byte plus that.
// At the first byte the race is decided (any hedge still racing is
// cancelled), as in the gateway.
//
// In a scenario without Lengths every answer is one token at the target's
// rate (ShortAnswerRate unless it says) whose generation is not simulated:
// the spans still say so, so least-completion has its rate samples and
// ranks as least-latency does, and the scenarios' timings are those of a
// first byte alone.

// ShortAnswerRate is the output rate of a target whose Behaviour sets none.
const ShortAnswerRate = 1000.0

// generation is how long a success of b takes to stream tokens after its
// first byte.
func generation(b Behaviour, tokens int) time.Duration {
	if tokens <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(tokens) / rateOf(b) * float64(time.Second)))
}

func rateOf(b Behaviour) float64 {
	if b.Rate > 0 {
		return b.Rate
	}
	return ShortAnswerRate
}

// stream puts a success's answer on end (its length and rate) and returns
// how long it streams after its first byte: 0 when lengths are not
// simulated (the answer is one token) or end is no success.
func stream(b Behaviour, simulated bool, tokens int, end *router.Result) time.Duration {
	if end.Outcome != telemetry.OutcomeSuccess {
		return 0
	}
	if !simulated || tokens <= 0 {
		end.OutputTokens, end.HasUsage, end.OutputRate = 1, true, rateOf(b)
		return 0
	}
	end.OutputTokens, end.HasUsage, end.OutputRate = int64(tokens), true, rateOf(b)
	return generation(b, tokens)
}

// firstByte handles rc's first byte when its answer streams on: the race
// is decided (the others cancelled now), the request's time to first byte
// noted, and rc's end moved to its last token. It reports whether it did.
func (r *runner) firstByte(c *client, rc *racer) bool {
	if rc.gen <= 0 || rc.streaming {
		return false
	}
	rc.streaming = true
	c.racers = slices.DeleteFunc(c.racers, func(x *racer) bool { return x == rc })
	if c.race.Ended(&rc.turn, router.RacerAnswered) == router.RaceFinish {
		r.cancelRacers(c) // the race is decided at the first byte, as in the gateway
	}
	c.ttfb = r.clock.t - c.start
	rc.endAt += rc.gen
	r.scheduleEnd(c, rc)
	return true
}
