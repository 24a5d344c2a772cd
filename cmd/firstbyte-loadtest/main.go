// Command firstbyte-loadtest measures what the gateway adds to a request,
// side by side with the physical baseline, on the same machine in the same
// run. It starts on 127.0.0.1:
//
//   - a zero-overhead upstream (OpenAI-compatible chat completions, unary
//     and SSE) and an OTLP sink standing in for a collector, in process;
//   - the baseline: a bare httputil.ReverseProxy, the least any Go proxy
//     adds, as a subprocess (this binary re-executed with -serve-baseline);
//   - the gateway: the real binary (-gateway) as a subprocess, with one
//     least-latency target per scenario and telemetry fully on (spans, the
//     embedded aggregator, metrics, OTLP export to the sink).
//
// It then interleaves runs (direct, baseline, gateway, repeated in rounds,
// the order rotated each round) so that machine noise hits every arm alike,
// and reports added latency over direct, throughput, streaming overhead and
// memory. -markdown FILE writes the figures section of docs/benchmarks.md.
//
// With -routing it measures routing quality instead (routing.go): the
// routing scenarios through every latency mode, fallback and the oracle,
// each arm against a fresh gateway and fresh simulated providers;
// -markdown FILE then writes the figures section of docs/routing-e2e.md.
//
// It must not reach beyond loopback, run unbounded (every loop has a count
// and a deadline) or leave a process behind (children die with it, also on a
// signal or a panic).
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// plan is how much each scenario runs; -quick shrinks it to a smoke test.
type plan struct {
	quick       bool
	otlp        bool // the gateway exports spans to the sink
	logRequests bool // the gateway writes a log line per request (log.requests)

	warmup int // unary requests per arm before measuring

	s1Rounds, s1Requests int // scenario 1: per round, per arm

	s2Rounds, s2Conc int
	s2Dur            time.Duration // per round, per arm

	s3Rounds, s3Conc, s3PerWorker int

	s4Streams int
}

var fullPlan = plan{
	warmup:   1000,
	s1Rounds: 8, s1Requests: 4000,
	s2Rounds: 3, s2Conc: 32, s2Dur: 3 * time.Second,
	s3Rounds: 3, s3Conc: 16, s3PerWorker: 3,
	s4Streams: 1000,
}

var quickPlan = plan{
	quick:    true,
	warmup:   200,
	s1Rounds: 2, s1Requests: 500,
	s2Rounds: 1, s2Conc: 32, s2Dur: time.Second,
	s3Rounds: 1, s3Conc: 8, s3PerWorker: 1,
	s4Streams: 100,
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("firstbyte-loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gateway := fs.String("gateway", "bin/firstbyte", "the gateway binary to measure (make build)")
	markdown := fs.String("markdown", "", "write the figures section of this markdown file (docs/benchmarks.md)")
	quick := fs.Bool("quick", false, "a short run, to smoke-test the load test itself")
	otlp := fs.Bool("otlp", true, "the gateway exports its spans over OTLP (false: to see what export costs)")
	logRequests := fs.Bool("log-requests", false, "the gateway writes a log line per request, as log.requests does by default (the baseline logs nothing)")
	routing := fs.Bool("routing", false, "measure routing quality instead: every scenario through every mode and the oracle (about 21 min a round; -markdown docs/routing-e2e.md)")
	rounds := fs.Int("rounds", 1, "with -routing or -compare: how many times each scenario runs through each arm (the order rotated each round; -compare: 5 unless given)")
	scenarios := fs.String("scenarios", "", "with -routing: only these scenarios, comma-separated (a, b, c, c2, d, d-breaker, g, h, i, tail, tail-spikes, capacity, fleet, cache)")
	otelcol := fs.String("otelcol", "bin/firstbyte-otelcol", "with -routing: the collector (fleet) shares spans through (make otelcol)")
	raw := fs.String("raw", "", "with -routing: write every arm run's requests as CSV into this directory")
	modes := addModes(fs) // -compare, -streams, -callgrind (modes.go)
	// The baseline subprocess: this binary re-executed. Not for people.
	baselineAddr := fs.String("serve-baseline", "", "")
	upstreamURL := fs.String("upstream", "", "")
	upstreamCA := fs.String("upstream-ca", "", "")
	proto := fs.String("upstream-proto", protoH1, "with -streams: how the upstream speaks: h1 (HTTP/1.1), h2 (HTTP/2 over TLS, a generated certificate the proxies trust) or h2c")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: firstbyte-loadtest [-gateway PATH] [-quick] [-markdown FILE] [-otlp=false]\n"+
			"       firstbyte-loadtest -routing [-gateway PATH] [-otelcol PATH] [-quick] [-rounds N] [-scenarios LIST] [-markdown FILE] [-raw DIR]\n"+
			"       firstbyte-loadtest -compare [-gateway PATH] [-ref PATH] [-quick] [-rounds N]\n"+
			"       firstbyte-loadtest -streams N [-streams-spread D] [-upstream-proto h1|h2|h2c] [-gateway PATH]\n"+
			"       firstbyte-loadtest -callgrind [-callgrind-baseline] [-requests N] [-concurrency C] [-callgrind-out FILE] [-gateway PATH]\n")
		fs.VisitAll(func(f *flag.Flag) {
			if f.Usage != "" {
				fmt.Fprintf(stderr, "  -%s\t%s (default %q)\n", f.Name, f.Usage, f.DefValue)
			}
		})
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	removeCA, err := setUpstreamProto(*proto, *upstreamCA)
	defer removeCA()
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 2
	}
	if *baselineAddr != "" {
		if err := serveBaseline(*baselineAddr, *upstreamURL); err != nil {
			fmt.Fprintf(stderr, "baseline: %v\n", err)
			return 1
		}
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code, ok := modes.run(ctx, fs, *gateway, *quick, *rounds, stdout, stderr); ok {
		return code
	}
	if *routing {
		return runRouting(ctx, routingFlags{*gateway, *otelcol, *quick, *rounds, *scenarios, *markdown, *raw}, stdout, stderr)
	}

	p := fullPlan
	if *quick {
		p = quickPlan
	}
	p.otlp = *otlp
	p.logRequests = *logRequests
	res, err := measure(ctx, p, *gateway, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	rep := buildReport(res)
	fmt.Fprint(stdout, rep.text())
	if *markdown != "" {
		if err := updateMarkdown(*markdown, rep.markdown()); err != nil {
			fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "wrote the figures section of %s\n", *markdown)
	}
	return 0
}

// routingFlags are the flags of a -routing run.
type routingFlags struct {
	gateway       string
	otelcol       string
	quick         bool
	rounds        int
	scenarios     string
	markdown, raw string
}

// runRouting is the -routing run: measure, print, and write the figures
// section of the markdown file when one is named.
func runRouting(ctx context.Context, f routingFlags, stdout, stderr io.Writer) int {
	all := append(routinge2e.Standard(), routinge2e.Reacting()...)
	if f.quick {
		all = quickScenarios()
	}
	picked, err := pickScenarios(all, f.scenarios)
	if err != nil || f.rounds < 1 {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", cmp.Or(err, errors.New("-rounds must be at least 1")))
		return 2
	}
	p := routingPlan{quick: f.quick, rounds: f.rounds, scenarios: picked, rawDir: f.raw}
	otelcol := f.otelcol
	if !slices.ContainsFunc(picked, func(s routinge2e.Scenario) bool { return s.Gateways() > 1 }) {
		otelcol = "" // not needed
	}
	res, err := measureRouting(ctx, p, f.gateway, otelcol, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	rep := buildRoutingReport(res)
	fmt.Fprint(stdout, rep.text())
	if f.markdown != "" {
		if err := updateSection(f.markdown, routingMarkers, "# Routing quality, end to end", rep.markdown()); err != nil {
			fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "wrote the figures section of %s\n", f.markdown)
	}
	return 0
}

// results is everything measure found, for the report.
type results struct {
	plan     plan
	machine  machine
	started  time.Time
	duration time.Duration

	idle map[string]int64 // arm -> RSS bytes after start, before any request

	s1 map[string]*unaryAgg
	s2 map[string]*unaryAgg
	s3 map[string]*streamAgg
	s4 map[string]*holdResult

	sinkRequests, sinkBytes int64
}

// unaryAgg pools one arm's unary runs over the rounds.
type unaryAgg struct {
	lat      []time.Duration
	roundP50 []time.Duration
	n        int
	errors   int
	elapsed  time.Duration
	use      usage
}

func (a *unaryAgg) add(r unaryResult) {
	a.lat = append(a.lat, r.lat...)
	a.roundP50 = append(a.roundP50, percentile(append([]time.Duration(nil), r.lat...), 50))
	a.n += len(r.lat)
	a.errors += r.errors
	a.elapsed += r.elapsed
	a.use.cpu += r.use.cpu
	a.use.switches += r.use.switches
}

// streamAgg pools one arm's streams over the rounds.
type streamAgg struct {
	samples  []streamSample
	chunkLat []time.Duration // upstream write -> client read, chunks after the first
	errors   int
}

// holdResult is scenario 4 for one proxy.
type holdResult struct {
	before, peak int64 // RSS bytes
	ok, errors   int
	concurrent   int64 // most streams open at the upstream at once
}

// Arm names, in report order.
const (
	armDirect   = "direct"
	armBaseline = "baseline"
	armGateway  = "gateway"
)

// measure starts everything, runs the scenarios and stops everything.
func measure(ctx context.Context, p plan, gatewayPath string, logw io.Writer) (*results, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	res := newResults(p)
	if runtime.GOOS != "linux" {
		return nil, errors.New("it reads /proc for CPU and memory figures: Linux only")
	}
	gatewayBin, err := exec.LookPath(gatewayPath)
	if err != nil {
		return nil, fmt.Errorf("-gateway %s: %w (run make build first)", gatewayPath, err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res.machine = describeMachine(gatewayBin)

	b, err := startBench(ctx, p, self, gatewayBin, logf)
	if err != nil {
		return nil, err
	}
	defer b.stop()

	// Scenario 5 first: idle means before any request.
	time.Sleep(time.Second) // let start-up garbage settle as it would in service
	for _, a := range b.arms[1:] {
		rss, _, err := procStatus(a.pid)
		if err != nil {
			return nil, err
		}
		res.idle[a.name] = rss
	}
	if err := b.warmUp(ctx, p.warmup, logf); err != nil {
		return nil, err
	}
	if err := b.runScenarios(ctx, p, res, logf); err != nil {
		return nil, err
	}

	// Give the batcher its export interval (5 s) to show export reached the sink.
	for range 60 {
		if b.sink.requests.Load() > 0 || !sleepCtx(ctx, 100*time.Millisecond) {
			break
		}
	}
	res.sinkRequests, res.sinkBytes = b.sink.requests.Load(), b.sink.bytes.Load()
	res.duration = time.Since(res.started)
	res.machine.loadEnd = loadAvg()
	return res, nil
}

// newResults is an empty results for p, started now, with an aggregate per
// arm for every scenario that runs through all three.
func newResults(p plan) *results {
	res := &results{plan: p, started: time.Now(), idle: map[string]int64{},
		s1: map[string]*unaryAgg{}, s2: map[string]*unaryAgg{}, s3: map[string]*streamAgg{}, s4: map[string]*holdResult{}}
	for _, name := range []string{armDirect, armBaseline, armGateway} {
		res.s1[name], res.s2[name], res.s3[name] = &unaryAgg{}, &unaryAgg{}, &streamAgg{}
	}
	return res
}

// outputOf is the output of the child named name, for error messages.
func outputOf(children []*child, name string) string {
	for _, c := range children {
		if c.name == name {
			return c.out.String()
		}
	}
	return ""
}

// machine describes where the figures were taken.
type machine struct {
	cpus      int
	cpuModel  string
	goVersion string
	gateway   string // `firstbyte version`
	loadStart string // /proc/loadavg
	loadEnd   string
}

func describeMachine(gatewayBin string) machine {
	m := machine{cpus: runtime.NumCPU(), cpuModel: "unknown", goVersion: runtime.Version(), loadStart: loadAvg()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command(gatewayBin, "version").Output(); err == nil {
		m.gateway = strings.TrimSpace(string(out))
	}
	return m
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
