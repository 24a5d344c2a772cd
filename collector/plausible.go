package collector

import (
	"math"
	"time"
)

// What a span's time to first chunk must be to become a sample: more than
// zero, finite, and no longer than the target's first-byte timeout
// (providers.X.timeout.first_byte: the gateway would have given up on the
// attempt by then, so no attempt of its can have taken longer). Anything
// else is a broken clock or unit (milliseconds sent as seconds), or a lie:
// 100 spans claiming a 1000 s first chunk would otherwise fill the fastest
// target's window, and one claiming 0 would make any target the leader.
//
// An implausible span teaches nothing at all: no sample, and not the
// success its outcome claims either (a sample is also a success towards the
// fault rate; a span whose one number is impossible is not believed about
// the rest). It is counted in firstbyte_ingest_rejected_total{reason=
// "implausible"}, not as consumed.
//
// The rule holds for peers' and applications' spans alike. This process's
// own spans are measured here, on the monotonic clock, under the timeout
// in force when their attempt began: they are held to the value checks
// (more than zero, finite, at most maxTTFB), which only a bug could fail,
// but not to the target's timeout, which a reload may have shortened while
// the attempt ran, making a true measurement look too long.

// maxTTFB bounds a time to first chunk where no first-byte timeout is
// known: a key with none configured, an aggregator with no targets set, and
// this process's own spans.
const maxTTFB = time.Hour

// sampleVerdict is what a span's latency value says.
type sampleVerdict int

const (
	noSample    sampleVerdict = iota // the span carries no sample (a failure, no time to first chunk, ...)
	sampled                          // a plausible sample
	implausible                      // a sample that cannot be a latency of this target
)

// plausibleTTFB converts a time to first chunk in seconds, and reports
// whether it is plausible: more than zero (even once rounded to the
// nanosecond), finite, at most bound.
func plausibleTTFB(seconds float64, bound time.Duration) (time.Duration, bool) {
	// NaN fails every comparison, and +Inf is above any bound.
	if !(seconds > 0 && seconds <= bound.Seconds()) {
		return 0, false
	}
	// Round, not truncate: 0.3 s is 299999999.99999994 ns as a float.
	d := time.Duration(math.Round(seconds * float64(time.Second)))
	return d, d > 0
}

// sample is the latency sample the span gives, if it claims to give one:
// it names a target and an upstream model, carries a time to first chunk,
// succeeded (see succeeded) and is not a count_tokens call. The verdict is
// implausible when that time is not plausible within bound. The span kind
// does not matter, so spans from any GenAI-instrumented client count.
func (f *attemptFacts) sample(bound time.Duration) (time.Duration, sampleVerdict) {
	if f.countTokens || f.target == "" || f.model == "" || !f.haveTTFB || !f.succeeded() {
		return 0, noSample
	}
	d, ok := plausibleTTFB(f.seconds, bound)
	if !ok {
		return 0, implausible
	}
	return d, sampled
}

// firstByteBound is the longest plausible time to first chunk of a peer's
// or an application's span for (target, model): the target's first-byte
// timeout, or maxTTFB when none is known.
func (tt *targetTable) firstByteBound(target, model string) time.Duration {
	if tt == nil {
		return maxTTFB
	}
	if d := tt.keys[seriesKey{target, model}]; d > 0 && d < maxTTFB {
		return d
	}
	return maxTTFB
}
