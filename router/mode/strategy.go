package mode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/stats"
)

// Strategy is a routing mode: it orders the eligible candidates for one
// request, and can say how it ranks them (for /debug/routing and the
// firstbyte_leader gauge), so what an operator sees is the mode's own view.
// Both must not block and must be safe for concurrent use.
type Strategy interface {
	// Order appends the order to dst (which the caller may pass with spare
	// capacity so the hot path does not allocate) and says why the first
	// one leads, as X-Firstbyte-Selection does.
	Order(dst []*Candidate, model string, eligible []*Candidate) ([]*Candidate, string)
	// Rank appends eligible to dst in the order the mode gives them now
	// without exploration or randomness, each with the figure it ranks on,
	// and returns the index in the appended part of the leader (the target
	// the mode prefers now), or -1 when the mode has none (it rotates, draws
	// at random, or has not measured anything yet).
	Rank(dst []Ranked, model string, eligible []*Candidate) ([]Ranked, int)
}

// Ranked is one candidate as a mode ranks it.
type Ranked struct {
	Candidate *Candidate
	// Score is what the mode ranks on, in its own unit (seconds for the
	// latency modes, USD per million tokens for cost-optimized, the
	// declaration index for fallback); NaN when the candidate has none
	// (unmeasured, unpriced).
	Score float64
	// Note says why it is where it is: "cold", "only_faults", "unpriced", ...
	Note string
	// Completion is the predicted time to the last token and its parts
	// (least-completion); nil in the other modes.
	Completion *Prediction
}

// StatsSource is how the router reads what the spans taught: the
// collector's tracker satisfies it, and cmd/firstbyte wires the two. now
// comes from the source's own clock (Deps.Now), read once per
// request.
type StatsSource interface {
	StatsAt(target, model string, now time.Time) stats.Target
}

// Rand is the randomness a strategy draws from. Tests inject a seeded one;
// the default is the goroutine-safe runtime source.
type Rand interface {
	IntN(n int) int
	Float64() float64
}

type runtimeRand struct{}

func (runtimeRand) IntN(n int) int   { return rand.IntN(n) }
func (runtimeRand) Float64() float64 { return rand.Float64() }

// defaultRand draws from math/rand/v2's goroutine-safe global source.
var defaultRand Rand = runtimeRand{}

// Deps are what a strategy may need; each takes what it uses. New is the
// one place their defaults are filled: the strategies' own constructors
// take them as they are.
type Deps struct {
	Stats StatsSource      // nil: only the modes that measure nothing
	Rand  Rand             // nil: math/rand/v2's goroutine-safe global source
	Now   func() time.Time // the clock Stats also reads; nil: time.Now
	// Completion is what least-completion reads of output rates and answer
	// lengths; nil: Stats, when it is one.
	Completion CompletionSource
}

// registration is a mode: how to build it and whether it ranks on measured
// statistics (then it refuses to start without a StatsSource rather than
// quietly routing blind).
type registration struct {
	build      func(Deps) Strategy
	needsStats bool
}

// strategies are the modes by name; each strategy file registers itself.
var strategies = map[string]registration{}

func register(mode string, needsStats bool, build func(Deps) Strategy) {
	strategies[mode] = registration{build: build, needsStats: needsStats}
}

// RanksOnLatency reports whether mode ranks on measured latency (it needs a
// statistics source).
func RanksOnLatency(mode string) bool { return strategies[mode].needsStats }

// Names lists the registered modes, sorted.
func Names() []string {
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the mode registered under mode. A latency mode without
// deps.Stats is an error: it would route blind.
func New(mode string, deps Deps) (Strategy, error) {
	reg, ok := strategies[mode]
	if !ok {
		return nil, fmt.Errorf("strategy.mode: unknown mode %q", mode)
	}
	if reg.needsStats && deps.Stats == nil {
		return nil, fmt.Errorf("strategy.mode: %s ranks on measured latency and needs a statistics source (none was wired)", mode)
	}
	if mode == "least-completion" && deps.Completion == nil {
		if _, ok := deps.Stats.(CompletionSource); !ok {
			return nil, fmt.Errorf("strategy.mode: %s needs output rates and answer lengths (the statistics source gives none)", mode)
		}
	}
	if deps.Rand == nil {
		deps.Rand = defaultRand
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return reg.build(deps), nil
}

// RankedCap is how many candidates a strategy ranks without allocating.
const RankedCap = 16

// probeScratch is the working memory of a mode that ranks by score and
// probes stale targets, on the caller's stack for up to RankedCap
// candidates: declare one in Order and take its slices.
type probeScratch struct {
	score, sort [RankedCap]float64
	seen, oseen [RankedCap]time.Time
	every       [RankedCap]time.Duration
}

// slices returns empty slices with room for n candidates: b's arrays, or
// fresh ones past RankedCap.
func (b *probeScratch) slices(n int) (scores, scratch []float64, seen, oseen []time.Time, every []time.Duration) {
	if n > RankedCap {
		return make([]float64, 0, n), make([]float64, 0, n), make([]time.Time, 0, n), make([]time.Time, 0, n), make([]time.Duration, 0, n)
	}
	return b.score[:0], b.sort[:0], b.seen[:0], b.oseen[:0], b.every[:0]
}

// Scores below 0 mean "no score" to rankByScore; unscoredLast ranks after
// every real score.
const (
	noScore      = -1.0
	unscoredLast = math.MaxFloat64
)

// rankByScore appends eligible to dst ordered for a ranking mode: the
// candidates without a score (scores[i] < 0) first, in declaration order,
// then the scored ones by ascending score, ties in declaration order. It
// returns the extended dst and how many unscored candidates lead it.
// scratch (len 0, enough capacity) holds the scored part's scores while they
// are sorted, so the caller decides whether that allocates; on return
// scratch[:n-unscored] (the caller's backing array) holds them in order.
func rankByScore(dst, eligible []*Candidate, scores, scratch []float64) ([]*Candidate, int) {
	base := len(dst)
	dst = append(dst, eligible...)
	out := dst[base:]
	w := 0
	for i, c := range eligible {
		if scores[i] < 0 {
			out[w] = c
			w++
		}
	}
	unscored := w
	for i, c := range eligible {
		if scores[i] >= 0 {
			out[w] = c
			scratch = append(scratch, scores[i])
			w++
		}
	}
	scored := out[unscored:]
	for i := 1; i < len(scored); i++ { // insertion sort: stable, tiny n
		for j := i; j > 0 && scratch[j] < scratch[j-1]; j-- {
			scored[j], scored[j-1] = scored[j-1], scored[j]
			scratch[j], scratch[j-1] = scratch[j-1], scratch[j]
		}
	}
	return dst, unscored
}

// rankedFromScores builds a Rank answer from per-candidate scores as
// rankByScore orders them: unscored first (Note cold), then by score (times
// unit); a score of unscoredLast is shown as NaN with Note only_faults. The
// leader is the first scored one: the mode's choice among the measured.
func rankedFromScores(dst []Ranked, eligible []*Candidate, scores []float64, per float64) ([]Ranked, int) {
	order, _ := rankByScore(nil, eligible, scores, make([]float64, 0, len(eligible)))
	leader := -1
	for i, c := range order {
		idx := indexOf(eligible, c)
		r := Ranked{Candidate: c, Score: math.NaN()}
		switch s := scores[idx]; {
		case s < 0:
			r.Note = "cold"
		case s == unscoredLast:
			r.Note = "only_faults"
		default:
			r.Score = s / per
			if leader < 0 {
				leader = i
			}
		}
		dst = append(dst, r)
	}
	return dst, leader
}

func indexOf(cs []*Candidate, c *Candidate) int {
	for i, x := range cs {
		if x == c {
			return i
		}
	}
	return -1
}

// shuffle is Fisher-Yates with the injected source.
func shuffle(cs []*Candidate, r Rand) {
	for i := len(cs) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		cs[i], cs[j] = cs[j], cs[i]
	}
}

// Lead moves out[k] to the front, the others keeping their order.
func Lead(out []*Candidate, k int) {
	pick := out[k]
	copy(out[1:k+1], out[:k])
	out[0] = pick
}
