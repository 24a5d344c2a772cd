package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/mdsection"
)

// report is the measured figures laid out once and rendered twice: as text
// for the terminal and as markdown for docs/benchmarks.md.
type report struct {
	header []string // lines about the machine and the run
	tables []table
	goals  []goal
}

type table struct {
	title string
	head  []string
	rows  [][]string
	notes []string
}

type goal struct {
	what     string
	measured string
	met      bool
}

// The performance goals the gateway is held to (docs/benchmarks.md, "Goals").
const (
	goalAddedP50Ratio = 1.2                    // scenario 1: gateway added p50 / baseline added p50
	goalAddedP99      = 200 * time.Microsecond // scenario 1
	goalThroughput    = 1.00                   // scenario 2: gateway rps / baseline rps
	goalTTFC          = 250 * time.Microsecond // scenario 3: added time to first chunk
	goalPerChunk      = 10 * time.Microsecond  // scenario 3
	goalIdleRSS       = 40e6                   // bytes
	goalStreamsRSS    = 200e6                  // bytes, 1,000 streams
)

// buildReport lays out res: the run's header, one table per scenario and
// the goals, judged on the gateway's figures the tables found.
func buildReport(res *results) *report {
	r := &report{header: reportHeader(res)}
	t1, s1 := latencyTable(res)
	t2, share := throughputTable(res)
	t3, s3 := streamTable(res)
	r.tables = []table{t1, t2, t3, holdTable(res), idleTable(res)}
	r.goals = judge(res, s1, share, s3)
	return r
}

// reportHeader is the lines about the machine and the run.
func reportHeader(res *results) []string {
	p, m := res.plan, res.machine
	kind := "full run"
	if p.quick {
		kind = "QUICK run (-quick: too short for figures to quote)"
	}
	header := []string{
		fmt.Sprintf("%s, %s, %s", res.started.UTC().Format("2006-01-02 15:04 MST"), kind, res.duration.Round(time.Second)),
		fmt.Sprintf("machine: %d CPUs (%s), load average %s at start, %s at end; load generator, upstream, baseline and gateway share them", m.cpus, m.cpuModel, m.loadStart, m.loadEnd),
		fmt.Sprintf("go: %s; gateway: %s", m.goVersion, orUnknown(m.gateway)),
		fmt.Sprintf("gateway telemetry: spans, aggregator, metrics, OTLP/HTTP export (%d exports, %d bytes reached the sink)", res.sinkRequests, res.sinkBytes),
	}
	if !p.otlp {
		header[3] = "gateway telemetry: spans, aggregator, metrics; OTLP export OFF (-otlp=false): not the configuration the goals are for"
	}
	if p.logRequests {
		header = append(header, "gateway request log: one line per request to stderr (-log-requests), as log.requests does by default")
	} else {
		header = append(header, "gateway request log: off (log.requests: false; -log-requests turns it on), as the baseline logs nothing")
	}
	return header
}

// addedLatency is scenario 1's figures the goals are judged on: what each
// proxy adds over direct.
type addedLatency struct {
	gatewayP50, gatewayP99, baselineP50 time.Duration
	p50Ratio                            float64 // gateway added p50 / baseline added p50
}

// latencyTable is scenario 1: unary requests one at a time.
func latencyTable(res *results) (table, addedLatency) {
	p := res.plan
	d1 := res.s1[armDirect]
	d1p50, d1p99 := percentile(d1.lat, 50), percentile(d1.lat, 99)
	t1 := table{
		title: fmt.Sprintf("Scenario 1: unary, concurrency 1, zero-delay upstream (%d rounds x %d requests per arm)", p.s1Rounds, p.s1Requests),
		head:  []string{"arm", "p50", "p99", "added p50", "added p99", "req/s", "proxy CPU/req", "switches/req", "errors"},
	}
	added1 := map[string][2]time.Duration{}
	for _, name := range []string{armDirect, armBaseline, armGateway} {
		a := res.s1[name]
		p50, p99 := percentile(a.lat, 50), percentile(a.lat, 99)
		row := []string{name, dur(p50), dur(p99), "-", "-", rate(a.n, a.elapsed), "-", "-", fmt.Sprint(a.errors)}
		if name != armDirect {
			added1[name] = [2]time.Duration{p50 - d1p50, p99 - d1p99}
			row[3], row[4] = dur(p50-d1p50), dur(p99-d1p99)
			row[6], row[7] = perReq(a.use.cpu, a.n), switchesPerReq(a.use.switches, a.n)
		}
		t1.rows = append(t1.rows, row)
	}
	ratio1 := ratio(added1[armGateway][0], added1[armBaseline][0])
	t1.notes = append(t1.notes,
		fmt.Sprintf("gateway added p50 = %.2fx the baseline's; per-round added p50: baseline %s, gateway %s", ratio1,
			spread(res.s1[armBaseline].roundP50, d1.roundP50), spread(res.s1[armGateway].roundP50, d1.roundP50)),
		fmt.Sprintf("gateway CPU per request = %.2fx the baseline's (CPU of the proxy process over the run / requests; "+
			"switches: times its threads were put on a CPU, per request)",
			ratio(perReqDur(res.s1[armGateway].use.cpu, res.s1[armGateway].n), perReqDur(res.s1[armBaseline].use.cpu, res.s1[armBaseline].n))))
	return t1, addedLatency{gatewayP50: added1[armGateway][0], gatewayP99: added1[armGateway][1],
		baselineP50: added1[armBaseline][0], p50Ratio: ratio1}
}

// throughputTable is scenario 2: unary requests many at a time. Its second
// result is the gateway's throughput as a share of the baseline's.
func throughputTable(res *results) (table, float64) {
	p := res.plan
	d2 := res.s2[armDirect]
	d2p50, d2p99 := percentile(d2.lat, 50), percentile(d2.lat, 99)
	t2 := table{
		title: fmt.Sprintf("Scenario 2: unary, concurrency %d, 20 ms upstream (%d rounds x %v per arm)", p.s2Conc, p.s2Rounds, p.s2Dur),
		head:  []string{"arm", "req/s", "vs baseline", "p50", "p99", "added p50", "added p99", "proxy CPU/req", "switches/req", "errors"},
	}
	baseRPS := rps(res.s2[armBaseline].n, res.s2[armBaseline].elapsed)
	for _, name := range []string{armDirect, armBaseline, armGateway} {
		a := res.s2[name]
		p50, p99 := percentile(a.lat, 50), percentile(a.lat, 99)
		row := []string{name, rate(a.n, a.elapsed), pct(rps(a.n, a.elapsed) / baseRPS), dur(p50), dur(p99), "-", "-", "-", "-", fmt.Sprint(a.errors)}
		if name != armDirect {
			row[5], row[6], row[7], row[8] = dur(p50-d2p50), dur(p99-d2p99), perReq(a.use.cpu, a.n), switchesPerReq(a.use.switches, a.n)
		}
		t2.rows = append(t2.rows, row)
	}
	return t2, rps(res.s2[armGateway].n, res.s2[armGateway].elapsed) / baseRPS
}

// streamOverhead is scenario 3's figures the goals are judged on: what the
// gateway adds to a stream over direct.
type streamOverhead struct {
	ttfc50, ttfc99 time.Duration // added time to first chunk
	perChunk       time.Duration // (total-direct)/64
	chunk50        time.Duration // added chunk latency, p50
}

// streamTable is scenario 3: streams, several at a time.
func streamTable(res *results) (table, streamOverhead) {
	p := res.plan
	d3 := res.s3[armDirect]
	dTTFC50, dTTFC99 := percentile(field(d3.samples, ttfcOf), 50), percentile(field(d3.samples, ttfcOf), 99)
	dTotal := percentile(field(d3.samples, totalOf), 50)
	dChunk50, dChunk99 := percentile(d3.chunkLat, 50), percentile(d3.chunkLat, 99)
	t3 := table{
		title: fmt.Sprintf("Scenario 3: streams of %d chunks %v apart, %d at once (%d rounds x %d streams per arm)",
			streamChunks, streamGap, p.s3Conc, p.s3Rounds, p.s3Conc*p.s3PerWorker),
		head: []string{"arm", "TTFC p50", "TTFC p99", "added TTFC p50", "added TTFC p99",
			"chunk latency p50", "p99", "added p50", "added p99", "(total-direct)/64", "streams", "errors"},
	}
	var gw streamOverhead
	for _, name := range []string{armDirect, armBaseline, armGateway} {
		a := res.s3[name]
		t50, t99 := percentile(field(a.samples, ttfcOf), 50), percentile(field(a.samples, ttfcOf), 99)
		c50, c99 := percentile(a.chunkLat, 50), percentile(a.chunkLat, 99)
		total := percentile(field(a.samples, totalOf), 50)
		row := []string{name, dur(t50), dur(t99), "-", "-", dur(c50), dur(c99), "-", "-", "-", fmt.Sprint(len(a.samples)), fmt.Sprint(a.errors)}
		if name != armDirect {
			perChunk := (total - dTotal) / streamChunks
			row[3], row[4], row[7], row[8], row[9] = dur(t50-dTTFC50), dur(t99-dTTFC99), dur(c50-dChunk50), dur(c99-dChunk99), dur(perChunk)
			if name == armGateway {
				gw = streamOverhead{ttfc50: t50 - dTTFC50, ttfc99: t99 - dTTFC99, perChunk: perChunk, chunk50: c50 - dChunk50}
			}
		}
		t3.rows = append(t3.rows, row)
	}
	t3.notes = append(t3.notes,
		"chunk latency: from the upstream writing a chunk to the client reading it, every chunk after the first "+
			"(upstream and client share one process and clock); its excess over direct is the relay's delay per chunk",
		"(total-direct)/64: median stream duration over direct's, per chunk; nothing accumulates over a relayed stream, "+
			"so this is mostly the added TTFC spread over 64 chunks")
	return t3, gw
}

// holdTable is scenario 4: the memory of many streams open at once.
func holdTable(res *results) table {
	t4 := table{
		title: fmt.Sprintf("Scenario 4: %d concurrent streams (%d chunks %v apart) through each proxy", res.plan.s4Streams, streamChunks, holdGap),
		head:  []string{"proxy", "streams ok", "errors", "open at once", "RSS before", "peak RSS", "per stream"},
	}
	for _, name := range []string{armBaseline, armGateway} {
		h := res.s4[name]
		t4.rows = append(t4.rows, []string{name, fmt.Sprint(h.ok), fmt.Sprint(h.errors), fmt.Sprint(h.concurrent),
			mb(h.before), mb(h.peak), kb((h.peak - h.before) / int64(max(h.ok, 1)))})
	}
	t4.notes = append(t4.notes, "peak RSS: the larger of VmHWM (reset through clear_refs before the scenario) and VmRSS sampled every 20 ms")
	return t4
}

// idleTable is scenario 5: the memory of a proxy that has served nothing.
func idleTable(res *results) table {
	return table{
		title: "Scenario 5: idle RSS, 1 s after start, before any request",
		head:  []string{"proxy", "RSS"},
		rows:  [][]string{{armBaseline, mb(res.idle[armBaseline])}, {armGateway, mb(res.idle[armGateway])}},
	}
}

// judge holds the gateway's figures to the goals.
func judge(res *results, s1 addedLatency, throughput float64, s3 streamOverhead) []goal {
	return []goal{
		{fmt.Sprintf("scenario 1: added p50 <= %.1fx the baseline's", goalAddedP50Ratio),
			fmt.Sprintf("%.2fx (%s vs %s)", s1.p50Ratio, dur(s1.gatewayP50), dur(s1.baselineP50)), s1.p50Ratio <= goalAddedP50Ratio},
		{"scenario 1: added p99 < " + dur(goalAddedP99), dur(s1.gatewayP99), s1.gatewayP99 < goalAddedP99},
		{fmt.Sprintf("scenario 2: throughput >= %.0f%% of the baseline's", goalThroughput*100), pct(throughput), throughput >= goalThroughput},
		{"scenario 3: added TTFC < " + dur(goalTTFC) + " (p50; p99 shown)", fmt.Sprintf("p50 %s, p99 %s", dur(s3.ttfc50), dur(s3.ttfc99)), s3.ttfc50 < goalTTFC},
		{"scenario 3: < " + dur(goalPerChunk) + " per chunk ((total-direct)/64; added chunk latency p50 shown)",
			fmt.Sprintf("%s; added chunk latency p50 %s", dur(s3.perChunk), dur(s3.chunk50)), s3.perChunk < goalPerChunk},
		{"scenario 5: idle RSS < " + mb(goalIdleRSS), mb(res.idle[armGateway]), res.idle[armGateway] < goalIdleRSS},
		{fmt.Sprintf("scenario 4: %d streams < %s", res.plan.s4Streams, mb(goalStreamsRSS)), mb(res.s4[armGateway].peak), res.s4[armGateway].peak < goalStreamsRSS},
	}
}

func (r *report) text() string {
	var b strings.Builder
	for _, h := range r.header {
		b.WriteString(h + "\n")
	}
	for _, t := range r.tables {
		fmt.Fprintf(&b, "\n%s\n", t.title)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, row := range append([][]string{t.head}, t.rows...) {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
		for _, n := range t.notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	b.WriteString("\nGoals\n")
	for _, g := range r.goals {
		fmt.Fprintf(&b, "  %s %s: %s\n", mark(g.met), g.what, g.measured)
	}
	return b.String()
}

func (r *report) markdown() string {
	var b strings.Builder
	for _, h := range r.header {
		fmt.Fprintf(&b, "- %s\n", h)
	}
	for _, t := range r.tables {
		fmt.Fprintf(&b, "\n#### %s\n\n", t.title)
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.head, " | "), strings.Repeat("---|", len(t.head)))
		for _, row := range t.rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		if len(t.notes) > 0 {
			b.WriteString("\n")
		}
		for _, n := range t.notes {
			fmt.Fprintf(&b, "%s.\n", strings.TrimSuffix(n, "."))
		}
	}
	b.WriteString("\n#### Goals\n\n| goal | measured | met |\n|---|---|---|\n")
	for _, g := range r.goals {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", g.what, g.measured, mark(g.met))
	}
	return b.String()
}

// A figures section lies between two markers; the rest of the file is
// written by people and left alone.
type markers struct{ begin, end string }

var (
	benchmarkMarkers = markers{
		"<!-- BEGIN firstbyte-loadtest figures: generated by `go run ./cmd/firstbyte-loadtest -markdown docs/benchmarks.md`; do not edit by hand -->",
		"<!-- END firstbyte-loadtest figures -->",
	}
	routingMarkers = markers{
		"<!-- BEGIN firstbyte-loadtest routing figures: generated by `go run ./cmd/firstbyte-loadtest -routing -markdown docs/routing-e2e.md`; do not edit by hand -->",
		"<!-- END firstbyte-loadtest routing figures -->",
	}
)

// updateMarkdown replaces the figures section of path with body.
func updateMarkdown(path, body string) error {
	return updateSection(path, benchmarkMarkers, "# Benchmarks", body)
}

// updateSection replaces the section between mk's markers in path with
// body, appending the section if the file has none and creating the file
// (under title) if need be.
func updateSection(path string, mk markers, title, body string) error {
	return mdsection.Replace(path, title, mk.begin, mk.end, body+"\n")
}

func ttfcOf(s streamSample) time.Duration  { return s.ttfc }
func totalOf(s streamSample) time.Duration { return s.total }

// dur prints a duration in the unit that keeps three significant figures
// readable: microseconds below a millisecond.
func dur(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	case a < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
}

func rps(n int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}

func rate(n int, elapsed time.Duration) string { return fmt.Sprintf("%.0f", rps(n, elapsed)) }

func perReqDur(cpu time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return cpu / time.Duration(n)
}

func perReq(cpu time.Duration, n int) string {
	if cpu == 0 {
		return "n/a"
	}
	return dur(perReqDur(cpu, n))
}

func switchesPerReq(switches int64, n int) string {
	if switches == 0 || n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(switches)/float64(n))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func kb(b int64) string { return fmt.Sprintf("%.1f kB", float64(b)/1e3) }

// spread is the range of per-round added p50s: arm minus direct, round by
// round. How far apart they are is the noise a single round would show.
func spread(arm, direct []time.Duration) string {
	if len(arm) == 0 || len(arm) != len(direct) {
		return "n/a"
	}
	added := make([]time.Duration, len(arm))
	for i := range arm {
		added[i] = arm[i] - direct[i]
	}
	return dur(slices.Min(added)) + " to " + dur(slices.Max(added))
}

func mark(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
