package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The -compare run is the regression guard (make bench-compare REF=...):
// two gateway binaries, the one under test and a reference (an older
// commit, built by the Makefile), against the bare proxy and direct, in
// one sitting, arms interleaved and their order rotated every round. It
// runs only the scenarios a perf change moves: unary at concurrency 1 and
// 32 on a zero-delay upstream (the added p50 and the throughput, both
// bound by CPU on a small machine) and 32 clients on a 20 ms upstream
// (scenario 2 of the full run). Every figure is a ratio to the baseline
// taken within one round, so a noisy moment hits both sides of it; the
// report gives each ratio's median and its spread over the rounds.

// comparePlan is how long each part of a -compare run is.
type comparePlan struct {
	rounds     int
	slices     int           // each round's work is cut into this many slices, arms alternating
	warmup     int           // unary requests per arm before measuring
	c1Requests int           // concurrency 1, zero delay: requests per round per arm
	c32Dur     time.Duration // concurrency 32, zero delay: per round per arm
	slowDur    time.Duration // concurrency 32, 20 ms upstream: per round per arm
}

var compareFull = comparePlan{rounds: 5, slices: 6, warmup: 1000, c1Requests: 3000, c32Dur: 3 * time.Second, slowDur: 3 * time.Second}
var compareQuick = comparePlan{rounds: 1, slices: 2, warmup: 200, c1Requests: 500, c32Dur: time.Second, slowDur: time.Second}

// armRef is the reference gateway's arm.
const armRef = "ref"

// compareScenario is one part of a -compare run: its arms' figures round
// by round.
type compareScenario struct {
	title string
	model string
	conc  int
	// per arm, one result a round
	runs map[string][]unaryResult
	goal *compareGoal // nil: none
}

// compareGoal is a scenario's goal (docs/benchmarks.md), judged on the
// median of the gateway's per-round ratios.
type compareGoal struct {
	what  string
	ratio func(s *compareScenario) ratios
	ok    func(median float64) bool
}

func (g *compareGoal) figure(s *compareScenario) ratios { return g.ratio(s) }

func (g *compareGoal) met(r ratios) bool { return len(r) > 0 && g.ok(r.median()) }

// compareResults is what a -compare run measured.
type compareResults struct {
	plan      comparePlan
	machine   machine
	ref       string // `firstbyte version` of the reference
	arms      []string
	scenarios []*compareScenario
	started   time.Time
	duration  time.Duration
}

// runCompare is the -compare run: measure, then print the ratios.
func runCompare(ctx context.Context, gateway, ref string, quick bool, rounds int, stdout, stderr io.Writer) int {
	p := compareFull
	if quick {
		p = compareQuick
	}
	if rounds > 0 {
		p.rounds = rounds
	}
	res, err := measureCompare(ctx, p, gateway, ref, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, res.text())
	return 0
}

// measureCompare starts the upstream, the sink, the baseline and each
// gateway, and runs the scenarios round by round.
func measureCompare(ctx context.Context, p comparePlan, gatewayPath, refPath string, logw io.Writer) (*compareResults, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	res := &compareResults{plan: p, started: time.Now()}
	self, err := selfExecutable()
	if err != nil {
		return nil, err
	}
	up := newUpstream()
	upURL, stopUp, err := serveLoopback(up)
	if err != nil {
		return nil, err
	}
	defer stopUp()
	sink := &otlpSink{}
	sinkURL, stopSink, err := serveLoopback(sink)
	if err != nil {
		return nil, err
	}
	defer stopSink()

	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	baseAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	base, err := startChild(armBaseline, []string{self, "-serve-baseline", baseAddr, "-upstream", upURL}, childEnv())
	if err != nil {
		return nil, err
	}
	children = append(children, base)
	if err := waitReady(ctx, base, "http://"+baseAddr+"/", 0); err != nil {
		return nil, err
	}
	arms := []*arm{
		{name: armDirect, client: newLoadClient(), body: requestBody,
			url: func(m string) string { return upURL + "/" + m + "/v1/chat/completions" }},
		{name: armBaseline, client: newLoadClient(), body: requestBody, pid: base.pid(),
			url: func(m string) string { return "http://" + baseAddr + "/" + m + "/v1/chat/completions" }},
	}
	gateways := [][2]string{{armGateway, gatewayPath}}
	if refPath != "" {
		gateways = append([][2]string{{armRef, refPath}}, gateways...)
	}
	for _, g := range gateways {
		a, c, cleanup, err := startGatewayArm(ctx, g[0], g[1], upURL, sinkURL)
		if c != nil {
			children = append(children, c)
		}
		if cleanup != nil {
			defer cleanup()
		}
		if err != nil {
			return nil, err
		}
		arms = append(arms, a)
		if g[0] == armRef {
			res.ref = describeMachine(g[1]).gateway
		}
	}
	res.machine = describeMachine(gatewayPath)
	for _, a := range arms {
		res.arms = append(res.arms, a.name)
	}
	logf("upstream %s, baseline %s, arms %s", upURL, baseAddr, strings.Join(res.arms, ", "))

	check := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, c := range children {
			if err := c.exited(); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range arms {
		if r := runUnary(ctx, a, modelZero, 1, p.warmup, 20*time.Second); r.errors > 0 {
			return nil, fmt.Errorf("warm-up through %s: %d of %d requests failed", a.name, r.errors, p.warmup)
		}
		runUnary(ctx, a, modelZero, 64, 64*8, 10*time.Second)
	}
	if err := check(); err != nil {
		return nil, err
	}

	res.scenarios = compareScenarios(p)
	if err := runCompareRounds(ctx, p, arms, res.scenarios, check, logf); err != nil {
		return nil, err
	}
	res.duration = time.Since(res.started)
	res.machine.loadEnd = loadAvg()
	return res, nil
}

// compareScenarios are the -compare run's parts, with their goals.
func compareScenarios(p comparePlan) []*compareScenario {
	c1 := &compareScenario{title: fmt.Sprintf("unary, 1 client, zero-delay upstream (%d requests a round per arm)", p.c1Requests), model: modelZero, conc: 1}
	c32 := &compareScenario{title: fmt.Sprintf("unary, 32 clients, zero-delay upstream (%v a round per arm)", p.c32Dur), model: modelZero, conc: 32}
	slow := &compareScenario{title: fmt.Sprintf("unary, 32 clients, 20 ms upstream (%v a round per arm)", p.slowDur), model: modelSlow, conc: 32}
	c1.goal = &compareGoal{what: "added p50 <= 1.25x the bare proxy's",
		ratio: func(s *compareScenario) ratios { return s.roundRatios(armGateway, s.addedP50) },
		ok:    func(m float64) bool { return m <= 1.25 }}
	c32.goal = &compareGoal{what: "req/s >= 1.00x the bare proxy's",
		ratio: func(s *compareScenario) ratios { return s.roundRatios(armGateway, s.rps) },
		ok:    func(m float64) bool { return m >= 1.00 }}
	scenarios := []*compareScenario{c1, c32, slow}
	for _, s := range scenarios {
		s.runs = map[string][]unaryResult{}
	}
	return scenarios
}

// runCompareRounds runs every scenario through every arm, round by
// round. Each round is cut into slices, the arms alternating slice by
// slice in a rotated order, so that a neighbour's burst on the shared
// cores lands on every arm of the round alike.
func runCompareRounds(ctx context.Context, p comparePlan, arms []*arm, scenarios []*compareScenario, check func() error, logf func(string, ...any)) error {
	for r := range p.rounds {
		logf("round %d/%d", r+1, p.rounds)
		for _, s := range scenarios {
			for _, a := range arms {
				s.runs[a.name] = append(s.runs[a.name], unaryResult{})
			}
		}
		for k := range p.slices {
			for i, s := range scenarios {
				n, dur := 1<<30, p.c32Dur
				switch {
				case s.conc == 1:
					n, dur = p.c1Requests/p.slices, 30*time.Second*time.Duration(p.slices)
				case s.model == modelSlow:
					dur = p.slowDur
				}
				for _, a := range rotate(arms, r+k+i) {
					addSlice(s, a.name, selfUsage(func() unaryResult {
						return runUnary(ctx, a, s.model, s.conc, n, dur/time.Duration(p.slices))
					}))
				}
			}
			if err := check(); err != nil {
				return err
			}
		}
	}
	return nil
}

// selfUsage runs run and notes what this process (the load generator and
// the upstream) spent on it, in the result's self.
func selfUsage(run func() unaryResult) unaryResult {
	u0 := procUsageOf(os.Getpid())
	r := run()
	r.self = procUsageOf(os.Getpid()).sub(u0)
	return r
}

// addSlice adds one slice's run to arm's current round in s.
func addSlice(s *compareScenario, arm string, run unaryResult) {
	runs := s.runs[arm]
	cur := &runs[len(runs)-1]
	cur.lat = append(cur.lat, run.lat...)
	cur.errors += run.errors
	cur.elapsed += run.elapsed
	cur.use.cpu += run.use.cpu
	cur.use.switches += run.use.switches
	cur.self.cpu += run.self.cpu
}

// startGatewayArm starts the gateway binary bin as arm name, with the
// full run's config (telemetry on, OTLP export to the sink).
func startGatewayArm(ctx context.Context, name, bin, upURL, sinkURL string) (*arm, *child, func(), error) {
	return startGatewayArmWith(ctx, name, bin, upURL, sinkURL, "")
}

// startGatewayArmWith is startGatewayArm with extra lines of config.
func startGatewayArmWith(ctx context.Context, name, bin, upURL, sinkURL, extra string) (*arm, *child, func(), error) {
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, nil, nil, err
	}
	adminAddr, err := freeAddr()
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := append(gatewayConfig(apiAddr, adminAddr, upURL, sinkURL, false), extra...)
	c, removeCfg, err := startGatewayChild(ctx, name, bin, cfg, adminAddr)
	if err != nil && c != nil && strings.Contains(c.out.String(), `unknown field "log"`) {
		// A gateway older than its request log (b9398f7 had none): the
		// same config without the line.
		removeCfg()
		cfg = bytes.Replace(cfg, []byte("log: {requests: false}\n"), nil, 1)
		c, removeCfg, err = startGatewayChild(ctx, name, bin, cfg, adminAddr)
	}
	if err != nil {
		return nil, c, removeCfg, err
	}
	a := &arm{name: name, client: newLoadClient(), body: requestBody, pid: c.pid(),
		url: func(string) string { return "http://" + apiAddr + "/v1/chat/completions" }}
	return a, c, removeCfg, nil
}

// startGatewayChild writes cfg and starts bin serving it, ready.
func startGatewayChild(ctx context.Context, name, bin string, cfg []byte, adminAddr string) (*child, func(), error) {
	cfgPath, removeCfg, err := writeConfig(cfg)
	if err != nil {
		return nil, func() {}, err
	}
	c, err := startChild(name, []string{bin, "serve", "-config", cfgPath}, childEnv())
	if err != nil {
		return nil, removeCfg, err
	}
	if err := waitReady(ctx, c, "http://"+adminAddr+"/readyz", http.StatusOK); err != nil {
		c.stop()
		return c, removeCfg, err
	}
	return c, removeCfg, nil
}

// ratios is one figure's ratio to the baseline, one a round.
type ratios []float64

func (r ratios) String() string {
	if len(r) == 0 {
		return "-"
	}
	s := slices.Sorted(slices.Values(r))
	return fmt.Sprintf("%.3fx (%.3f-%.3f)", r.median(), s[0], s[len(s)-1])
}

func (r ratios) median() float64 {
	s := slices.Sorted(slices.Values(r))
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// roundRatios is f(arm's run) / f(baseline's run) for every round.
func (s *compareScenario) roundRatios(arm string, f func(name string, round int) float64) ratios {
	var out ratios
	for i := range s.runs[arm] {
		if b := f(armBaseline, i); b > 0 {
			out = append(out, f(arm, i)/b)
		}
	}
	return out
}

// addedP50 is arm's p50 in round i minus direct's in the same round.
func (s *compareScenario) addedP50(arm string, i int) float64 {
	p := func(name string) time.Duration {
		return percentile(slices.Clone(s.runs[name][i].lat), 50)
	}
	return float64(p(arm) - p(armDirect))
}

func (s *compareScenario) rps(arm string, i int) float64 {
	r := s.runs[arm][i]
	return rps(len(r.lat), r.elapsed)
}

// selfCPUPerReq is the load generator's and upstream's CPU per request.
func (s *compareScenario) selfCPUPerReq(arm string, i int) float64 {
	r := s.runs[arm][i]
	if len(r.lat) == 0 {
		return 0
	}
	return float64(r.self.cpu) / float64(len(r.lat))
}

func (s *compareScenario) cpuPerReq(arm string, i int) float64 {
	r := s.runs[arm][i]
	if len(r.lat) == 0 {
		return 0
	}
	return float64(r.use.cpu) / float64(len(r.lat))
}

func (r *compareResults) text() string {
	var b strings.Builder
	m := r.machine
	fmt.Fprintf(&b, "bench-compare, %s, %d rounds, %s\n", r.started.UTC().Format("2006-01-02 15:04 MST"), r.plan.rounds, r.duration.Round(time.Second))
	fmt.Fprintf(&b, "machine: %d CPUs (%s), load average %s at start, %s at end\n", m.cpus, m.cpuModel, m.loadStart, m.loadEnd)
	fmt.Fprintf(&b, "gateway: %s\n", orUnknown(m.gateway))
	if r.ref != "" || slices.Contains(r.arms, armRef) {
		fmt.Fprintf(&b, "ref:     %s\n", orUnknown(r.ref))
	}
	b.WriteString("ratios to the bare proxy (baseline) within each round: median (min-max over the rounds)\n")
	gws := slices.DeleteFunc(slices.Clone(r.arms), func(a string) bool { return a == armDirect || a == armBaseline })
	for _, s := range r.scenarios {
		fmt.Fprintf(&b, "\n%s\n", s.title)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "arm\treq/s\tp50\tadded p50 / baseline's\treq/s / baseline's\tproxy CPU/req / baseline's\tclient+upstream CPU/req\terrors\t")
		for _, name := range r.arms {
			runs := s.runs[name]
			var lat []time.Duration
			n, errs := 0, 0
			var elapsed time.Duration
			for _, run := range runs {
				lat = append(lat, run.lat...)
				n += len(run.lat)
				errs += run.errors
				elapsed += run.elapsed
			}
			added, tput, cpu := "-", "-", "-"
			var self time.Duration
			for _, run := range runs {
				self += run.self.cpu
			}
			if name != armDirect && name != armBaseline {
				added = s.roundRatios(name, s.addedP50).String()
				tput = s.roundRatios(name, s.rps).String()
				cpu = s.roundRatios(name, s.cpuPerReq).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", name, rate(n, elapsed), dur(percentile(lat, 50)), added, tput, cpu, perReq(self, n), errs)
		}
		tw.Flush()
		if g := s.goal; g != nil {
			got := g.figure(s)
			fmt.Fprintf(&b, "goal: %s; gateway %s: %s\n", g.what, got, mark(g.met(got)))
		}
		if len(gws) == 2 {
			head := func(name string, i int) float64 { return s.rps(name, i) }
			var hr ratios
			for i := range s.runs[armGateway] {
				if v := head(armRef, i); v > 0 {
					hr = append(hr, head(armGateway, i)/v)
				}
			}
			fmt.Fprintf(&b, "gateway req/s / ref's, same round: %s\n", hr)
		}
	}
	return b.String()
}

// selfExecutable is this binary, re-executed as the baseline.
func selfExecutable() (string, error) { return os.Executable() }

// isFlagSet reports whether the flag name was given on the command line.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
