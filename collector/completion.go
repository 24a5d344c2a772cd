package collector

import (
	"cmp"
	"math"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// What least-completion predicts the time to the last token from, beside
// the time to first byte the series keep: each (target, upstream model)'s
// output rates, and each client model's answer lengths with the max_tokens
// their requests asked for. Same window and lifetime as the latency
// samples.

// completionMemory keeps the output rates and the answer lengths.
type completionMemory struct {
	// immutable after newCompletionMemory
	window, maxKeys int
	maxAge          int64 // nanoseconds

	mu      sync.Mutex               // guards both maps and every ring in them
	rates   map[seriesKey]*valueRing // tokens per second, by (target, upstream model)
	lengths map[string]*valueRing    // output tokens, by client model; bucket set
}

// valueSample is one figure taken at takenAt (unix ns); bucket is the
// power-of-two bucket of the max_tokens its request asked for (lengths
// only; 0: none asked).
type valueSample struct {
	v       float64
	takenAt int64
	bucket  int
}

func (x valueSample) when() int64 { return x.takenAt }

type valueRing = timeRing[valueSample]

func newCompletionMemory(window, maxKeys int, maxAge int64) *completionMemory {
	return &completionMemory{
		window: window, maxKeys: maxKeys, maxAge: maxAge,
		rates: map[seriesKey]*valueRing{}, lengths: map[string]*valueRing{},
	}
}

// TokenBucket is the power-of-two bucket of a request's max_tokens: 0 when
// it sets none, else k for 2^(k-1) <= maxTokens < 2^k.
func TokenBucket(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	return bits.Len(uint(maxTokens))
}

// add puts x in ring, evicting the oldest when full; ring is created under
// its key when new and there is room for another key.
func (m *completionMemory) add(ring *valueRing, x valueSample, now int64) {
	expireValues(ring, now, m.maxAge)
	if _, _, ok := ring.makeRoom(x); ok {
		ring.insertByTime(x)
	}
}

func (m *completionMemory) newRing() *valueRing {
	return &valueRing{buf: make([]valueSample, m.window)}
}

// expireValues drops the samples that have expired by now.
func expireValues(r *valueRing, now, maxAge int64) {
	for r.n > 0 && expired(r.front().takenAt, now, maxAge) {
		r.popFront()
	}
}

func (m *completionMemory) recordRate(k seriesKey, rate float64, now, at int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rates[k]
	if r == nil {
		if len(m.rates) >= m.maxKeys {
			return
		}
		r = m.newRing()
		m.rates[k] = r
	}
	m.add(r, valueSample{v: rate, takenAt: at}, now)
}

func (m *completionMemory) recordLength(model string, tokens float64, bucket int, now, at int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.lengths[model]
	if r == nil {
		if len(m.lengths) >= m.maxKeys {
			return
		}
		r = m.newRing()
		m.lengths[model] = r
	}
	m.add(r, valueSample{v: tokens, takenAt: at, bucket: bucket}, now)
}

// sortedValues appends to dst the live values of r (those of bucket only
// when bucket >= 0), ascending.
func sortedValues(dst []float64, r *valueRing, now, maxAge int64, bucket int) []float64 {
	a, b := r.segments()
	for _, seg := range [2][]valueSample{a, b} {
		for _, x := range seg {
			if !expired(x.takenAt, now, maxAge) && (bucket < 0 || x.bucket == bucket) {
				dst = append(dst, x.v)
			}
		}
	}
	slices.Sort(dst)
	return dst
}

func (m *completionMemory) rateAt(k seriesKey, now int64) stats.Rate {
	var buf [DefaultWindow]float64
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rates[k]
	if r == nil {
		return stats.Rate{}
	}
	v := sortedValues(buf[:0], r, now, m.maxAge, -1)
	return stats.Rate{
		Samples: len(v),
		P50:     Percentile(v, 0.50), P75: Percentile(v, 0.75),
		P90: Percentile(v, 0.90), P99: Percentile(v, 0.99),
	}
}

func (m *completionMemory) outputTokensAt(model string, bucket int, now int64) stats.OutputTokens {
	var buf [DefaultWindow]float64
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.lengths[model]
	if r == nil {
		return stats.OutputTokens{}
	}
	if v := sortedValues(buf[:0], r, now, m.maxAge, bucket); len(v) >= stats.MinPercentileSamples {
		return stats.OutputTokens{Median: v[medianIndex(len(v))], Samples: len(v), Bucketed: true}
	}
	v := sortedValues(buf[:0], r, now, m.maxAge, -1)
	if len(v) == 0 {
		return stats.OutputTokens{}
	}
	return stats.OutputTokens{Median: v[medianIndex(len(v))], Samples: len(v)}
}

// retain forgets the rates of the (target, model) keys keep refuses.
func (m *completionMemory) retain(keep func(target, model string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.rates {
		if !keep(k.target, k.model) {
			delete(m.rates, k)
		}
	}
}

// RecordRate adds an output-rate sample (tokens per second after the first
// chunk) of a streamed answer from (target, model), taken at takenAt; the
// same handling of takenAt as RecordSample. A rate of 0 or less, or one
// for a name no target could have, is dropped.
func (t *Tracker) RecordRate(target, model string, rate float64, takenAt time.Time) {
	if !(rate > 0) || len(target) > maxKeyLen || len(model) > maxKeyLen {
		return
	}
	if now, at, ok := t.sampleTime(takenAt); ok {
		t.completion.recordRate(seriesKey{target, model}, rate, now, at)
	}
}

// RecordOutputLength adds the length (output tokens) of an answer to a
// request for the client model that asked for at most maxTokens (0: it set
// no limit), taken at takenAt.
func (t *Tracker) RecordOutputLength(model string, tokens int64, maxTokens int, takenAt time.Time) {
	if tokens <= 0 || model == "" || len(model) > maxKeyLen {
		return
	}
	if now, at, ok := t.sampleTime(takenAt); ok {
		t.completion.recordLength(model, float64(tokens), TokenBucket(maxTokens), now, at)
	}
}

// RateAt is the output rate of (target, model) as of now (the tracker's
// clock, as StatsAt).
func (t *Tracker) RateAt(target, model string, now time.Time) stats.Rate {
	return t.completion.rateAt(seriesKey{target, model}, now.UnixNano())
}

// OutputTokensAt is how long the client model's answers are, for a request
// asking for at most maxTokens (0: no limit), as of now.
func (t *Tracker) OutputTokensAt(model string, maxTokens int, now time.Time) stats.OutputTokens {
	return t.completion.outputTokensAt(model, TokenBucket(maxTokens), now.UnixNano())
}

// learnOutput teaches the tracker what a served attempt says of its answer:
// a streamed answer's output rate, and its length under the client model
// it was asked for (the upstream model for a span that names none), with
// the max_tokens its request set.
func (a *Aggregator) learnOutput(span ptrace.Span, at *attemptFacts) {
	if at.haveRate {
		a.tracker.RecordRate(at.target, at.model, at.outputRate, endTime(span))
	}
	if at.haveOutput {
		model := cmp.Or(at.requestedModel, at.model)
		a.tracker.RecordOutputLength(model, at.outputTokens, int(min(at.maxTokens, math.MaxInt32)), endTime(span))
	}
}
