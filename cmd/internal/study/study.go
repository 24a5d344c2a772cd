package study

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/mode"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// HedgeSuffix names a mode run with hedging on (strategy.hedge with the
// study's HedgeAfter, HedgeBudget and HedgeMax): "least-latency+hedge".
const HedgeSuffix = "+hedge"

// The hedging the "+hedge" runs use: the adaptive delay (the default,
// p95, spends the budget worse: see router/mode/hedge.go), a budget of 0.1
// (twice the default: at 0.05 no delay rule reaches (tail)'s 0.7x, see
// docs/routing-study.md) and the default max.
const (
	HedgeAfter  = "adaptive"
	HedgeBudget = 0.1
	HedgeMax    = 1
)

// HedgedModes are the latency modes run with hedging on.
var HedgedModes = func() []string {
	var out []string
	for _, m := range LatencyModes {
		out = append(out, m+HedgeSuffix)
	}
	return out
}()

// AllModes are the modes a study runs by default: every registered mode,
// then the latency modes with hedging on.
func AllModes() []string { return append(mode.Names(), HedgedModes...) }

// baseMode is the registered mode a study mode runs, and whether it hedges.
func baseMode(mode string) (string, bool) { return strings.CutSuffix(mode, HedgeSuffix) }

// LatencyModes are the modes that rank on measured latency (the router
// says which): the ones the goals hold to adaptation, recovery and service.
var LatencyModes = func() []string {
	var out []string
	for _, m := range mode.Names() {
		if mode.RanksOnLatency(m) {
			out = append(out, m)
		}
	}
	return out
}()

// Options choose what a study runs. The zero value runs everything.
type Options struct {
	// Seed drives every random draw; the same seed gives byte-identical
	// output.
	Seed uint64
	// Duration is each scenario's measured time, after the warm-up. Zero:
	// DefaultDuration. Phase times are absolute, so a shorter one cuts the
	// later phases (and their goals) off.
	Duration time.Duration
	// Scenarios by name (ScenarioNames). Empty: all.
	Scenarios []string
	// Modes by name (mode.Names). Empty: all. The oracle always
	// runs: every ratio is to it.
	Modes []string
	// Parallel is how many runs go at once (each is independent and
	// single-threaded, so the output does not depend on it). Zero:
	// GOMAXPROCS.
	Parallel int
}

// Deps are what a study needs from outside package router: for every run
// a fresh statistics source reading the run's virtual clock, and the span
// consumer that teaches it (in the product, the collector's tracker and its
// aggregator).
type Deps struct {
	NewStats func(now func() time.Time) (mode.StatsSource, telemetry.TracesConsumer)
	// NewReplica is NewStats for one gateway replica of a fleet, whose
	// spans carry service.instance.id instance: the consumer takes the
	// replica's own spans (ConsumeTraces) and every replica's as a
	// collector fans them out (ConsumePeerTraces, skipping its own by
	// instance). Needed by scenarios with replicas.
	NewReplica func(now func() time.Time, instance string) (mode.StatsSource, PeerConsumer)
}

// Study is every run's result.
type Study struct {
	Options   Options // as run, defaults filled in
	Scenarios []*Scenario
	Modes     []string // the modes run, then Oracle
	// Results[i][j] is scenario i under Modes[j].
	Results [][]*Result
}

// Run runs every (scenario, mode) the options ask for, and the oracle in
// every scenario.
func Run(ctx context.Context, o Options, deps Deps) (*Study, error) {
	if deps.NewStats == nil {
		return nil, fmt.Errorf("study: Deps.NewStats is required")
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Duration < Bucket {
		return nil, fmt.Errorf("-duration: %s is shorter than one %s bucket", o.Duration, Bucket)
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	st := &Study{Options: o}
	all := Scenarios()
	if len(o.Scenarios) == 0 {
		st.Scenarios = all
	}
	for _, name := range o.Scenarios {
		i := slices.IndexFunc(all, func(s *Scenario) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", name, strings.Join(ScenarioNames(), ","))
		}
		st.Scenarios = append(st.Scenarios, all[i])
	}
	st.Modes = o.Modes
	if len(st.Modes) == 0 {
		st.Modes = AllModes()
	}
	for _, m := range st.Modes {
		if !slices.Contains(AllModes(), m) {
			return nil, fmt.Errorf("-modes: unknown mode %q (known: %s)", m, strings.Join(AllModes(), ","))
		}
	}
	st.Modes = append(slices.Clone(st.Modes), Oracle)
	if deps.NewReplica == nil && needsReplicas(st.Scenarios) {
		return nil, fmt.Errorf("study: Deps.NewReplica is required by scenarios with replicas")
	}

	type job struct{ i, j int }
	jobs := make(chan job)
	st.Results = make([][]*Result, len(st.Scenarios))
	errs := make([][]error, len(st.Scenarios))
	for i := range st.Scenarios {
		st.Results[i] = make([]*Result, len(st.Modes))
		errs[i] = make([]error, len(st.Modes))
	}
	var wg sync.WaitGroup
	for range min(o.Parallel, len(st.Scenarios)*len(st.Modes)) {
		wg.Go(func() {
			for jb := range jobs {
				st.Results[jb.i][jb.j], errs[jb.i][jb.j] = runOne(ctx, st.Scenarios[jb.i], st.Modes[jb.j], o.Seed, o.Duration, deps)
			}
		})
	}
	for i := range st.Scenarios {
		for j := range st.Modes {
			jobs <- job{i, j}
		}
	}
	close(jobs)
	wg.Wait()
	for i := range errs {
		for _, err := range errs[i] {
			if err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// Result is the run of scenario under mode, or nil if it did not run.
func (st *Study) Result(scenario, mode string) *Result {
	for i, s := range st.Scenarios {
		if s.Name != scenario {
			continue
		}
		for j, m := range st.Modes {
			if m == mode {
				return st.Results[i][j]
			}
		}
	}
	return nil
}

// Ratio is r's mean TTFB over the oracle's in the same scenario.
func (st *Study) Ratio(r *Result) float64 {
	o := st.Result(r.Scenario.Name, Oracle)
	if o == nil || o.Mean() == 0 {
		return 0
	}
	return float64(r.Mean()) / float64(o.Mean())
}

// WindowRatio is r's mean TTFB in the scenario's window over the oracle's
// (0 without a window).
func (st *Study) WindowRatio(r *Result) float64 {
	o := st.Result(r.Scenario.Name, Oracle)
	if o == nil || o.WindowTTFB == 0 {
		return 0
	}
	return float64(r.WindowTTFB) / float64(o.WindowTTFB)
}
