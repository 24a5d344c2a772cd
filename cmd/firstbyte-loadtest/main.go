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
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
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
	routing := fs.Bool("routing", false, "measure routing quality instead: every scenario through every mode and the oracle (about 7 min a round; -markdown docs/routing-e2e.md)")
	rounds := fs.Int("rounds", 1, "with -routing or -compare: how many times each scenario runs through each arm (the order rotated each round; -compare: 5 unless given)")
	scenarios := fs.String("scenarios", "", "with -routing: only these scenarios, comma-separated (a, b, c, c2, d, d-breaker)")
	raw := fs.String("raw", "", "with -routing: write every arm run's requests as CSV into this directory")
	modes := addModes(fs) // -compare, -streams, -callgrind (modes.go)
	// The baseline subprocess: this binary re-executed. Not for people.
	baselineAddr := fs.String("serve-baseline", "", "")
	upstreamURL := fs.String("upstream", "", "")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: firstbyte-loadtest [-gateway PATH] [-quick] [-markdown FILE] [-otlp=false]\n"+
			"       firstbyte-loadtest -routing [-gateway PATH] [-quick] [-rounds N] [-scenarios LIST] [-markdown FILE] [-raw DIR]\n"+
			"       firstbyte-loadtest -compare [-gateway PATH] [-ref PATH] [-quick] [-rounds N]\n"+
			"       firstbyte-loadtest -streams N [-streams-spread D] [-gateway PATH]\n"+
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
		return runRouting(ctx, routingFlags{*gateway, *quick, *rounds, *scenarios, *markdown, *raw}, stdout, stderr)
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
	quick         bool
	rounds        int
	scenarios     string
	markdown, raw string
}

// runRouting is the -routing run: measure, print, and write the figures
// section of the markdown file when one is named.
func runRouting(ctx context.Context, f routingFlags, stdout, stderr io.Writer) int {
	all := routinge2e.Standard()
	if f.quick {
		all = quickScenarios()
	}
	picked, err := pickScenarios(all, f.scenarios)
	if err != nil || f.rounds < 1 {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", cmp.Or(err, errors.New("-rounds must be at least 1")))
		return 2
	}
	p := routingPlan{quick: f.quick, rounds: f.rounds, scenarios: picked, rawDir: f.raw}
	res, err := measureRouting(ctx, p, f.gateway, stderr)
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
	res := &results{plan: p, started: time.Now(), idle: map[string]int64{},
		s1: map[string]*unaryAgg{}, s2: map[string]*unaryAgg{}, s3: map[string]*streamAgg{}, s4: map[string]*holdResult{}}
	for _, name := range []string{armDirect, armBaseline, armGateway} {
		res.s1[name], res.s2[name], res.s3[name] = &unaryAgg{}, &unaryAgg{}, &streamAgg{}
	}

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

	// In-process: the upstream and the OTLP sink.
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

	// Subprocesses: the baseline and the gateway.
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
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	adminAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	exportTo := sinkURL
	if !p.otlp {
		exportTo = ""
	}
	cfgPath, removeCfg, err := writeConfig(gatewayConfig(apiAddr, adminAddr, upURL, exportTo, p.logRequests))
	if err != nil {
		return nil, err
	}
	defer removeCfg()
	gw, err := startChild(armGateway, []string{gatewayBin, "serve", "-config", cfgPath}, childEnv())
	if err != nil {
		return nil, err
	}
	children = append(children, gw)
	if err := waitReady(ctx, base, "http://"+baseAddr+"/", 0); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, gw, "http://"+adminAddr+"/readyz", http.StatusOK); err != nil {
		return nil, err
	}
	logf("upstream %s, baseline %s (pid %d), gateway %s (pid %d), otlp sink %s", upURL, baseAddr, base.pid(), apiAddr, gw.pid(), sinkURL)

	arms := []*arm{
		{name: armDirect, client: newLoadClient(), body: requestBody,
			url: func(m string) string { return upURL + "/" + m + "/v1/chat/completions" }},
		{name: armBaseline, client: newLoadClient(), body: requestBody, pid: base.pid(),
			url: func(m string) string { return "http://" + baseAddr + "/" + m + "/v1/chat/completions" }},
		{name: armGateway, client: newLoadClient(), body: requestBody, pid: gw.pid(),
			url: func(string) string { return "http://" + apiAddr + "/v1/chat/completions" }},
	}
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

	// Scenario 5 first: idle means before any request.
	time.Sleep(time.Second) // let start-up garbage settle as it would in service
	for _, a := range arms[1:] {
		rss, _, err := procStatus(a.pid)
		if err != nil {
			return nil, err
		}
		res.idle[a.name] = rss
	}

	logf("warm-up: %d requests per arm, then 64 connections and 4 streams each", p.warmup)
	for _, a := range arms {
		if r := runUnary(ctx, a, modelZero, 1, p.warmup, 20*time.Second); r.errors > 0 {
			return nil, fmt.Errorf("warm-up through %s: %d of %d requests failed", a.name, r.errors, p.warmup)
		}
		runUnary(ctx, a, modelZero, 64, 64*8, 10*time.Second)
		if r := runStreams(ctx, a, modelStream, streamChunks, streamGap, 4, 1, 10*time.Second); r.errors > 0 {
			return nil, fmt.Errorf("warm-up streams through %s: %d failed (first: %v); its output:\n%s", a.name, r.errors, r.firstErr, outputOf(children, a.name))
		}
		if err := check(); err != nil {
			return nil, err
		}
	}

	for r := range p.s1Rounds {
		logf("scenario 1 (unary, concurrency 1, zero delay): round %d/%d", r+1, p.s1Rounds)
		for _, a := range rotate(arms, r) {
			res.s1[a.name].add(runUnary(ctx, a, modelZero, 1, p.s1Requests, 30*time.Second))
		}
		if err := check(); err != nil {
			return nil, err
		}
	}
	for r := range p.s2Rounds {
		logf("scenario 2 (unary, concurrency %d, 20 ms upstream): round %d/%d", p.s2Conc, r+1, p.s2Rounds)
		for _, a := range rotate(arms, r) {
			// The count bound is far above what 64 workers can send in
			// s2Dur at 20 ms each: the time bound ends the run.
			res.s2[a.name].add(runUnary(ctx, a, modelSlow, p.s2Conc, p.s2Conc*int(p.s2Dur/(10*time.Millisecond)), p.s2Dur))
		}
		if err := check(); err != nil {
			return nil, err
		}
	}
	for r := range p.s3Rounds {
		logf("scenario 3 (streams of %d chunks %v apart, %d at once): round %d/%d", streamChunks, streamGap, p.s3Conc, r+1, p.s3Rounds)
		for _, a := range rotate(arms, r) {
			sr := runStreams(ctx, a, modelStream, streamChunks, streamGap, p.s3Conc, p.s3PerWorker, 60*time.Second)
			agg := res.s3[a.name]
			agg.samples = append(agg.samples, sr.samples...)
			agg.chunkLat = append(agg.chunkLat, sr.chunkLat...)
			agg.errors += sr.errors
		}
		if err := check(); err != nil {
			return nil, err
		}
	}
	for _, a := range arms[1:] {
		logf("scenario 4 (%d concurrent streams through %s)", p.s4Streams, a.name)
		h, err := holdStreams(ctx, a, up, p.s4Streams, logf)
		if err != nil {
			return nil, err
		}
		res.s4[a.name] = h
		if err := check(); err != nil {
			return nil, err
		}
	}

	// Give the batcher its export interval (5 s) to show export reached the sink.
	for range 60 {
		if sink.requests.Load() > 0 || !sleepCtx(ctx, 100*time.Millisecond) {
			break
		}
	}
	res.sinkRequests, res.sinkBytes = sink.requests.Load(), sink.bytes.Load()
	res.duration = time.Since(res.started)
	res.machine.loadEnd = loadAvg()
	return res, nil
}

// holdStreams opens n streams through a at once (starts spread over 250 ms)
// on the slow-paced upstream, so all are open together, and records the
// proxy's peak RSS: VmHWM reset before, and VmRSS sampled every 20 ms.
func holdStreams(ctx context.Context, a *arm, up *upstream, n int, logf func(string, ...any)) (*holdResult, error) {
	h := &holdResult{}
	rss, _, err := procStatus(a.pid)
	if err != nil {
		return nil, err
	}
	h.before, h.peak = rss, rss
	hwmReset := resetPeakRSS(a.pid) == nil
	up.resetPeak()

	// A client of its own: n connections at once, dropped afterwards.
	hold := &arm{name: a.name, client: newLoadClient(), url: a.url, body: a.body, pid: a.pid}
	defer hold.client.CloseIdleConnections()
	done := make(chan struct{})
	sampled := make(chan int64, 1)
	go func() {
		peak := int64(0)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := procStatus(a.pid); err == nil {
				peak = max(peak, rss)
			}
			select {
			case <-done:
				sampled <- peak
				return
			case <-t.C:
			}
		}
	}()
	sr := runStreams(ctx, hold, modelHold, streamChunks, 250*time.Millisecond, n, 1, 60*time.Second)
	close(done)
	h.peak = max(h.peak, <-sampled)
	if _, hwm, err := procStatus(a.pid); err == nil && hwmReset {
		h.peak = max(h.peak, hwm)
	}
	h.ok, h.errors = len(sr.samples), sr.errors
	h.concurrent = up.peak.Load()
	if sr.errors > 0 {
		logf("  %d of %d streams through %s failed (%d cut short at the upstream); first: %v", sr.errors, n, a.name, up.cut.Load(), sr.firstErr)
	}
	if h.ok == 0 {
		return nil, fmt.Errorf("scenario 4 through %s: all %d streams failed", a.name, n)
	}
	return h, nil
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

// rotate returns arms starting at round mod len(arms), so no arm always
// runs first (right after the previous round's last) or last.
func rotate[T any](arms []T, round int) []T {
	k := round % len(arms)
	return append(append([]T(nil), arms[k:]...), arms[:k]...)
}

// serveLoopback serves h on a fresh loopback port and returns its URL and
// a stop func.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "firstbyte-loadtest: serve %s: %v\n", ln.Addr(), err)
		}
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
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
