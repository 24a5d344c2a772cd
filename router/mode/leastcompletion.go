package mode

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// LeastCompletion orders by the lowest predicted time to the last token
// (Predict): p50 time to first byte, scaled by the load a new request
// would meet, plus the request's expected output tokens (ExpectedTokens)
// over the p50 output rate. What a caller of a long answer waits for: a
// target that starts in 100 ms at 30 tokens/s finishes 600 tokens in 20 s,
// one that starts in 400 ms at 150 tokens/s in 4.4 s; for a short answer it
// ranks as least-latency does.
//
// The rest is least-latency's: targets without a prediction (no time to
// first byte sample, or no output-rate sample: a unary answer gives none)
// first, shuffled, so each gets one; then by ascending prediction, ties in
// declaration order; then targets that only faulted or were tried
// stats.ColdTries times without a sample. A random measured non-leader
// leads one request in ten times the share of the leader's predicted time
// that is its first byte (explores), and near ties under load are spread.
type LeastCompletion struct {
	// immutable after New
	stats StatsSource
	out   CompletionSource
	now   func() time.Time // the clock stats reads
	rand  Rand             // must be goroutine-safe
}

var (
	_ Strategy    = (*LeastCompletion)(nil)
	_ LengthAware = (*LeastCompletion)(nil)
)

func init() {
	register("least-completion", true, func(d Deps) Strategy { return NewLeastCompletion(d) })
}

// NewLeastCompletion is the least-completion mode over d (as New fills
// it: d.Stats must also be a CompletionSource, or d.Completion set). Other
// code (a per-request sort on the time to the last token) may build one to
// rank with.
func NewLeastCompletion(d Deps) *LeastCompletion {
	out := d.Completion
	if out == nil {
		out, _ = d.Stats.(CompletionSource)
	}
	return &LeastCompletion{stats: d.Stats, out: out, now: d.Now, rand: d.Rand}
}

// Predictions appends to dst each eligible candidate's prediction for a
// request for model that set maxTokens (0: none), as of now.
func (l *LeastCompletion) Predictions(dst []Prediction, model string, maxTokens int, eligible []*Candidate, now time.Time) []Prediction {
	tokens := float64(maxTokens)
	if l.out != nil {
		tokens = ExpectedTokens(l.out.OutputTokensAt(model, maxTokens, now), maxTokens)
	}
	for _, c := range eligible {
		st := l.stats.StatsAt(c.Target, c.Model, now)
		p := Prediction{Tokens: tokens}
		if l.out != nil {
			p = Predict(c, &st, l.out.RateAt(c.Target, c.Model, now), tokens)
		}
		if !p.Measured && st.Samples == 0 && st.RanksLast() {
			p.Seconds = unscoredLast // only faults: the worst known
		}
		dst = append(dst, p)
	}
	return dst
}

// scores fills one score per prediction (seconds; noScore when
// unmeasured, unscoredLast when it ranks last) and returns how many are
// measured.
func scoresOf(dst []float64, ps []Prediction) ([]float64, int) {
	measured := 0
	for _, p := range ps {
		switch {
		case p.Measured:
			dst = append(dst, p.Seconds)
			measured++
		case p.Seconds == unscoredLast:
			dst = append(dst, unscoredLast)
			measured++
		default:
			dst = append(dst, noScore)
		}
	}
	return dst, measured
}

// Order implements Strategy: a request that set no output limit.
func (l *LeastCompletion) Order(dst []*Candidate, model string, eligible []*Candidate) ([]*Candidate, string) {
	return l.OrderFor(dst, model, 0, eligible)
}

// OrderFor implements LengthAware.
func (l *LeastCompletion) OrderFor(dst []*Candidate, model string, maxTokens int, eligible []*Candidate) ([]*Candidate, string) {
	n := len(eligible)
	if n == 0 {
		return dst, telemetry.SelectionCold
	}
	var predBuf [RankedCap]Prediction
	var scoreBuf, sortBuf [RankedCap]float64
	preds, scores, scratch := predBuf[:0], scoreBuf[:0], sortBuf[:0]
	if n > RankedCap {
		preds, scores, scratch = make([]Prediction, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	}
	now := l.now()
	preds = l.Predictions(preds, model, maxTokens, eligible, now)
	scores, measured := scoresOf(scores, preds)
	base := len(dst)
	dst, cold := rankByScore(dst, eligible, scores, scratch)
	out := dst[base:]
	if cold > 0 {
		shuffle(out[:cold], l.rand)
		return dst, telemetry.SelectionCold
	}
	if measured >= 2 && l.explores(preds[indexOf(eligible, out[0])]) {
		Lead(out, 1+l.rand.IntN(measured-1))
		return dst, telemetry.SelectionExplore
	}
	spreadNearTie(out, scratch[:n], l.stats, now, l.rand)
	return dst, telemetry.SelectionLeader
}

// explores draws whether this request explores, when the leader's
// prediction is lead: least-latency's one request in ten, times the share
// of the leader's predicted time that is its time to first byte. A request
// that explores is led by a runner-up for the whole of its answer: on a
// 600-token answer that can cost seconds where it costs milliseconds on a
// short one, so long answers rarely explore, short ones (whose time is
// mostly the first byte) as often as under least-latency, and every target
// still gets a time-to-first-byte and an output-rate sample from them.
func (l *LeastCompletion) explores(lead Prediction) bool {
	share := 1.0
	if lead.Measured && lead.Seconds > 0 {
		share = lead.TTFB / lead.Seconds
	}
	return l.rand.Float64()*exploreEvery < share
}

// Rank implements Strategy for a request that sets no output limit:
// by predicted seconds, unmeasured first, each with its prediction.
func (l *LeastCompletion) Rank(dst []Ranked, model string, eligible []*Candidate) ([]Ranked, int) {
	return l.RankFor(dst, model, 0, eligible)
}

// RankFor is Rank for a request that set maxTokens (0: none): no
// exploration or randomness, each Ranked with its Prediction.
func (l *LeastCompletion) RankFor(dst []Ranked, model string, maxTokens int, eligible []*Candidate) ([]Ranked, int) {
	preds := l.Predictions(make([]Prediction, 0, len(eligible)), model, maxTokens, eligible, l.now())
	scores, _ := scoresOf(make([]float64, 0, len(eligible)), preds)
	base := len(dst)
	dst, leader := rankedFromScores(dst, eligible, scores, 1)
	for i := base; i < len(dst); i++ {
		p := preds[indexOf(eligible, dst[i].Candidate)]
		dst[i].Completion = &p
	}
	return dst, leader
}

// Sort appends eligible to dst by ascending predicted time to the last
// token for a request for model that set maxTokens (0: none), without
// exploration: measured targets first, then the unmeasured, then those
// that only faulted, ties in declaration order. A per-request sort on the
// time to the last token orders with it.
func (l *LeastCompletion) Sort(dst []*Candidate, model string, maxTokens int, eligible []*Candidate) []*Candidate {
	preds := l.Predictions(make([]Prediction, 0, len(eligible)), model, maxTokens, eligible, l.now())
	scores := make([]float64, len(eligible))
	for i, p := range preds {
		switch {
		case p.Measured:
			scores[i] = p.Seconds
		case p.Seconds == unscoredLast:
			scores[i] = unscoredLast
		default:
			scores[i] = unscoredLast / 2 // unmeasured: after the measured, before only-faults
		}
	}
	dst, _ = rankByScore(dst, eligible, scores, make([]float64, 0, len(eligible)))
	return dst
}
