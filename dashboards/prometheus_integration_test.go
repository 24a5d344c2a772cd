//go:build integration

package dashboards

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The dashboard against the real thing: the real gateway binary routing
// steady load over three simulated providers, scraped by a real
// Prometheus, and every panel query evaluated by that Prometheus.
//
//	8 workers ──stream──▶ firstbyte serve ──▶ sim fast   (TTFB  5 ms)
//	                       (FIRSTBYTE_BIN)  ──▶ sim steady (TTFB 15 ms)
//	                            │           ──▶ sim flaky  (TTFB 30 ms, 20% 503)
//	a few requests ─────────────┤           ──▶ down       (nothing listens; another model)
//	a peer's span ──/v1/traces──┤
//	                   admin /metrics
//	                            ▲ 1 s scrapes, exemplar storage
//	                       prometheus ◀── every query of firstbyte.json
//
// The flaky provider is there so the failure panels have something to
// show: it is only tried when explored (a runner-up), so its 503s fail over
// to the leader and no client sees them, and the first-pick shares are
// those of a steady run. The down target serves another model, so the
// panels (which show the test's model) do not see it: its open circuit is
// there so that /metrics has skips at all. The peer's span names a target
// this gateway does not have, for the ingest rejections panel.
//
// Run: make test-integration, or
//
//	make build && FIRSTBYTE_BIN=$PWD/bin/firstbyte go test -count=1 -tags integration -v ./dashboards/
const (
	itModel = "llama-3.3-70b" // the dots exercise Grafana's regex escaping of $model
	// downModel is served by the down target alone: its requests fail and
	// open its circuit, and the next ones skip it.
	downModel    = "down-model"
	downRequests = 3

	loadWorkers     = 8
	loadRate        = 250 // requests/s: enough for the shares, and leaves CPU to tests running beside this one
	loadMinRequests = 2000
	loadMinDuration = 20 * time.Second // twenty 1 s scrapes
	loadMaxDuration = 60 * time.Second

	// rateIntervalValue is what $__rate_interval (and $__interval,
	// $__range) become: longer than the run, so rates cover all of it.
	rateIntervalValue = "1m"
	// scrapeInterval replaces prometheus.yml's 5s so the run needs seconds.
	scrapeInterval = "1s"

	testDeadline = 3 * time.Minute
)

// The providers, fastest first; the leader is the first.
var itProviders = []sim.Provider{
	{Name: "fast", TTFB: sim.Dist{Median: 5 * time.Millisecond, Spread: 0.1}, Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond}},
	{Name: "steady", TTFB: sim.Dist{Median: 15 * time.Millisecond, Spread: 0.1}, Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond}},
	{Name: "flaky", TTFB: sim.Dist{Median: 30 * time.Millisecond, Spread: 0.1}, Stream: sim.Pace{Chunks: 3, Interval: time.Millisecond},
		Errors: sim.ErrorRate{Rate: 0.2, Status: http.StatusServiceUnavailable}},
}

func TestDashboardAgainstRealPrometheus(t *testing.T) {
	began := time.Now()
	tools := requireTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	dir := t.TempDir()

	cluster, err := sim.Start(ctx, &sim.Config{Seed: 42, Providers: itProviders})
	if err != nil {
		t.Fatalf("starting the simulated providers: %v", err)
	}
	t.Cleanup(func() { _ = cluster.Close() })

	gw := startGateway(ctx, t, tools.firstbyte, dir, cluster)
	prom := startPrometheus(ctx, t, tools, dir, gw.admin)
	prom.waitFor(ctx, t, `up{job="firstbyte"}`, func(v float64) bool { return v == 1 }, "Prometheus to scrape the gateway")

	load := driveLoad(ctx, t, "http://"+gw.api+"/v1/chat/completions")
	t.Logf("load: %d requests in %v (%.0f/s), first picks by reason %v, by target %v",
		load.requests, load.took.Round(time.Millisecond), float64(load.requests)/load.took.Seconds(), load.reasons, load.targets)
	if load.requests < loadMinRequests {
		t.Fatalf("only %d requests in %v, want at least %d for the shares to mean something: the machine is too slow or the gateway stalls",
			load.requests, load.took, loadMinRequests)
	}
	if load.failed > 0 {
		t.Errorf("%d of %d client requests failed (first: %s); the flaky provider's 503s must fail over to another target",
			load.failed, load.requests, load.firstFailure)
	}
	downCodes := requestDown(ctx, t, gw.api)
	t.Logf("%d requests for %s (down target only) answered %v", downRequests, downModel, downCodes)
	sendForeignSpan(ctx, t, gw.admin)

	// Every request counted in a scrape means every attempt span had ended
	// by then too (the server span ends last).
	prom.waitFor(ctx, t, fmt.Sprintf(`sum(firstbyte_requests_total{model=%q})`, itModel),
		func(v float64) bool { return v == float64(load.requests) }, fmt.Sprintf("Prometheus to have scraped all %d requests", load.requests))
	prom.waitFor(ctx, t, `sum(firstbyte_skips_total{target="down", reason="circuit_open"})`,
		func(v float64) bool { return v >= downRequests-1 }, "the down target's open circuit to be skipped")
	prom.waitFor(ctx, t, `sum(firstbyte_ingest_rejected_total{reason="unknown_target"})`,
		func(v float64) bool { return v == 1 }, "the peer's span for an unknown target to be rejected")

	results := evaluateDashboard(ctx, t, prom, gw.admin)

	t.Run("promtool accepts prometheus.yml", func(t *testing.T) {
		for _, path := range []string{scrapeConfig, prom.configPath} {
			out, err := exec.CommandContext(ctx, tools.promtool, "check", "config", path).CombinedOutput()
			if err != nil {
				t.Errorf("promtool check config %s: %v\n%s", path, err, out)
			}
		}
	})

	t.Run("every panel query returns data", func(t *testing.T) {
		var problems []string
		for _, q := range Queries() {
			r := results[q.Panel+"/"+q.RefID]
			t.Logf("%-40q %s = %s", q.Panel, q.RefID, describe(r.samples))
			switch {
			case r.err != nil:
				problems = append(problems, fmt.Sprintf("%q %s: %v\n    %s", q.Panel, q.RefID, r.err, r.expr))
			case len(r.samples) == 0:
				problems = append(problems, fmt.Sprintf("%q %s: no data\n    %s", q.Panel, q.RefID, r.expr))
			case allNaN(r.samples):
				problems = append(problems, fmt.Sprintf("%q %s: only NaN (a 0/0 ratio)\n    %s", q.Panel, q.RefID, r.expr))
			}
		}
		if len(problems) > 0 {
			t.Errorf("%d of %d panel queries fail against the live gateway's metrics:\n  %s",
				len(problems), len(Queries()), strings.Join(problems, "\n  "))
		}
	})

	t.Run("Prometheus counts the first picks clients saw", func(t *testing.T) {
		got := prom.byLabel(ctx, t, fmt.Sprintf(`sum by (reason) (firstbyte_selections_total{model=%q})`, itModel), "reason")
		for reason, n := range load.reasons {
			if got[reason] != float64(n) {
				t.Errorf("firstbyte_selections_total{reason=%q} = %v in Prometheus, clients saw X-Firstbyte-Selection: %s %d times", reason, got[reason], reason, n)
			}
		}
		if len(got) != len(load.reasons) {
			t.Errorf("reasons in Prometheus %v, in responses %v", got, load.reasons)
		}
	})

	t.Run("leader share about 0.9 and exploration about 0.1", func(t *testing.T) {
		// Counters start at 0 with the gateway, so their final values
		// give the run's exact shares; increase() would extrapolate.
		for _, tt := range []struct {
			reason string
			lo, hi float64
		}{{"leader", 0.87, 0.93}, {"explore", 0.07, 0.13}} {
			share := prom.scalar(ctx, t, fmt.Sprintf(`sum(firstbyte_selections_total{model=%q, reason=%q}) / sum(firstbyte_selections_total{model=%q})`,
				itModel, tt.reason, itModel))
			t.Logf("%s share (Prometheus, final counters): %.4f", tt.reason, share)
			if share < tt.lo || share > tt.hi {
				t.Errorf("%s share = %.4f, want %.2f..%.2f (least-latency lets a runner-up lead 1 request in 10)", tt.reason, share, tt.lo, tt.hi)
			}
		}
	})

	t.Run("panels tell the run's story", func(t *testing.T) {
		for _, c := range storyChecks() {
			r, ok := results[c.panel+"/"+c.ref]
			if !ok {
				t.Errorf("no query %s in panel %q: the dashboard changed; update storyChecks", c.ref, c.panel)
				continue
			}
			if r.err != nil {
				continue // reported by "every panel query returns data"
			}
			if err := c.check(byTarget(r.samples)); err != nil {
				t.Errorf("%q %s: %v\n    %s\n    got %v", c.panel, c.ref, err, r.expr, describe(r.samples))
			}
		}
	})

	exposition := fetch(ctx, t, "http://"+gw.admin+"/metrics", "text/plain; version=0.0.4")

	t.Run("queries use only metrics on /metrics", func(t *testing.T) {
		exposed := typedFamilies(exposition.body)
		for _, q := range Queries() {
			for _, n := range metricsIn(q.Expr) {
				if !exposed[n] {
					t.Errorf("%q %s uses %s, which the running gateway's /metrics does not expose", q.Panel, q.RefID, n)
				}
			}
		}
	})

	t.Run("promtool check metrics", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, tools.promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(exposition.body)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return
		case errors.As(err, &exit) && exit.ExitCode() == 3: // lint findings, not a parse error
		default:
			t.Fatalf("promtool check metrics could not parse /metrics: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.HasPrefix(line, "firstbyte_") {
				t.Errorf("promtool lint on our metric: %s", line)
			} else {
				t.Logf("promtool lint on a client library metric (not ours to rename): %s", line)
			}
		}
	})

	t.Run("OpenMetrics exposition carries trace_id exemplars", func(t *testing.T) {
		om := fetch(ctx, t, "http://"+gw.admin+"/metrics", "application/openmetrics-text; version=1.0.0")
		if !strings.HasPrefix(om.contentType, "application/openmetrics-text") {
			t.Fatalf("Accept: application/openmetrics-text got Content-Type %q", om.contentType)
		}
		re := regexp.MustCompile(`(?m)^firstbyte_ttfb_seconds_bucket\{[^}]*\} \S+ # \{trace_id="([0-9a-f]{32})"\} \S+`)
		m := re.FindSubmatch(om.body)
		if m == nil {
			t.Fatalf("no firstbyte_ttfb_seconds_bucket line with a # {trace_id=\"<32 hex>\"} exemplar in the OpenMetrics exposition:\n%s",
				grepLines(om.body, "firstbyte_ttfb_seconds_bucket", 5))
		}
		if strings.Trim(string(m[1]), "0") == "" {
			t.Errorf("exemplar trace_id is all zeros: spans without a trace")
		}
	})

	t.Run("Prometheus stores the exemplars", func(t *testing.T) {
		n, sample := prom.exemplars(ctx, t, fmt.Sprintf(`firstbyte_ttfb_seconds_bucket{model=%q}`, itModel), began)
		if n == 0 {
			t.Fatalf("Prometheus (--enable-feature=exemplar-storage) holds no exemplars for firstbyte_ttfb_seconds_bucket: " +
				"the scrape did not negotiate OpenMetrics, or the flag is gone")
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(sample["trace_id"]) {
			t.Errorf("stored exemplar labels %v, want a 32-hex trace_id", sample)
		}
	})

	t.Logf("integration test took %v", time.Since(began).Round(100*time.Millisecond))
}

// storyCheck is what a panel must show after the run: the numbers an
// operator would read off it.
type storyCheck struct {
	panel, ref string
	check      func(v map[string]float64) error // by target (or the one label the query keeps)
}

func storyChecks() []storyCheck {
	within := func(lo, hi float64) func(map[string]float64) error {
		return func(v map[string]float64) error {
			for k, x := range v {
				if x < lo || x > hi {
					return fmt.Errorf("%s = %.4f, want %g..%g", k, x, lo, hi)
				}
			}
			return nil
		}
	}
	increasing := func(v map[string]float64) error {
		if !(v["fast"] < v["steady"] && v["steady"] < v["flaky"]) {
			return errors.New("want fast < steady < flaky, the providers' TTFB order")
		}
		return nil
	}
	equal := func(want map[string]float64) func(map[string]float64) error {
		return func(v map[string]float64) error {
			if len(v) != len(want) {
				return fmt.Errorf("series %v, want %v", v, want)
			}
			for k, w := range want {
				if x, ok := v[k]; !ok || x != w {
					return fmt.Errorf("%s = %v, want %v", k, x, w)
				}
			}
			return nil
		}
	}
	return []storyCheck{
		{"Leader and exploration share", "A", within(0.87, 0.93)},
		{"Leader and exploration share", "B", within(0.07, 0.13)},
		{"Current leader", "A", equal(map[string]float64{"fast": 1})},
		{"Leader over time", "A", equal(map[string]float64{"fast": 1, "steady": 0, "flaky": 0})},
		{"p50 TTFB per target (tracker)", "A", increasing},
		{"TTFB quantiles per target (histogram)", "A", increasing},
		{"Live samples per target", "A", func(v map[string]float64) error {
			// The window is full (100 observations); a hedge's cancelled
			// loser holds a place in it without being a sample (it counts
			// in the EWMA only), and fast loses a hedge now and then.
			if v["fast"] < 90 || v["fast"] > 100 {
				return fmt.Errorf("fast = %v samples, want the full window of 100 less its few hedge losers", v["fast"])
			}
			return nil
		}},
		{"Failed attempts by target and outcome", "A", func(v map[string]float64) error {
			if len(v) != 1 || v["flaky failover"] <= 0 {
				return errors.New("want failovers on flaky only")
			}
			return nil
		}},
		{"Failover ratio by target", "A", func(v map[string]float64) error {
			if v["fast"] != 0 || v["steady"] != 0 || len(v) != 3 {
				return errors.New("want 0 for fast and steady (they never fail) and a line for each target")
			}
			if f := v["flaky"]; f < 0.05 || f > 0.4 {
				return fmt.Errorf("flaky = %.3f, want about its 20%% error rate", f)
			}
			return nil
		}},
		{"Attempts per request", "A", func(v map[string]float64) error {
			if x := v[itModel]; x <= 1 || x > 1.05 {
				return fmt.Errorf("%s = %.4f, want just above 1 (a failover on about 1%% of requests)", itModel, x)
			}
			return nil
		}},
		{"Circuit breaker state", "A", equal(map[string]float64{"fast": 0, "steady": 0, "flaky": 0})},
		{"Requests by status code", "A", func(v map[string]float64) error {
			if len(v) != 1 || v["200"] <= 0 {
				return errors.New("want only 200s: failovers are invisible to clients")
			}
			return nil
		}},
		{"Non-2xx share", "A", equal(map[string]float64{itModel: 0})},
		{"Spans consumed by source", "A", func(v map[string]float64) error {
			if v["local"] <= 0 || v["peer"] != 0 {
				return errors.New("want local spans and no peer spans on a single instance (the rejected one does not count)")
			}
			return nil
		}},
		{"Fault rate per target (tracker)", "A", func(v map[string]float64) error {
			if v["fast"] != 0 || v["steady"] != 0 || len(v) != 3 {
				return errors.New("want 0 for fast and steady and a line for each of the three targets")
			}
			if f := v["flaky"]; f < 0.05 || f > 0.45 {
				return fmt.Errorf("flaky = %.3f, want about its 20%% error rate", f)
			}
			return nil
		}},
		// The down target's skips are another model's: the selected one's
		// targets were never skipped, and show 0.
		{"Skips per target", "A", equal(map[string]float64{"fast": 0, "steady": 0, "flaky": 0})},
		{"TTFB distribution (histogram buckets)", "A", func(v map[string]float64) error {
			// fast leads with a 5 ms TTFB: the first GenAI bucket (10 ms)
			// holds most answers; the buckets are cumulative.
			if v["0.01"] <= 0 || v["+Inf"] < v["0.01"] || len(v) != 15 {
				return errors.New("want 15 buckets (the 14 GenAI boundaries and +Inf), le=0.01 above 0 and +Inf at least as high")
			}
			return nil
		}},
		{"Ingest rejections", "A", func(v map[string]float64) error {
			if v["unknown_target"] <= 0 {
				return errors.New("want unknown_target above 0: the peer's span named a target this gateway does not have")
			}
			for reason, x := range v {
				if reason != "unknown_target" && x != 0 {
					return fmt.Errorf("%s = %v, want 0: only an unknown target was sent", reason, x)
				}
			}
			return nil
		}},
	}
}

// byTarget keys a result by the labels a story check reads: target (plus
// outcome or reason when present), else model, code, source, reason or le.
func byTarget(samples []sample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		var key string
		switch {
		case s.labels["target"] != "" && s.labels["outcome"] != "":
			key = s.labels["target"] + " " + s.labels["outcome"]
		case s.labels["target"] != "" && s.labels["reason"] != "":
			key = s.labels["target"] + " " + s.labels["reason"]
		case s.labels["target"] != "":
			key = s.labels["target"]
		case s.labels["code"] != "":
			key = s.labels["code"]
		case s.labels["source"] != "":
			key = s.labels["source"]
		case s.labels["reason"] != "":
			key = s.labels["reason"]
		case s.labels["le"] != "":
			key = s.labels["le"]
		default:
			key = s.labels["model"]
		}
		out[key] = s.value
	}
	return out
}

type tools struct{ firstbyte, prometheus, promtool string }

// requireTools finds the binaries; missing ones fail the test rather than
// skip it, since CI installs them (.ci/run) and a skipped check is a
// silently missing one.
func requireTools(t *testing.T) tools {
	t.Helper()
	var tl tools
	var missing []string
	tl.firstbyte = os.Getenv("FIRSTBYTE_BIN")
	if tl.firstbyte == "" {
		missing = append(missing, "FIRSTBYTE_BIN is not set: run `make test-integration`, or "+
			"`make build && FIRSTBYTE_BIN=$PWD/bin/firstbyte go test -count=1 -tags integration ./dashboards/`")
	} else if st, err := os.Stat(tl.firstbyte); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missing = append(missing, fmt.Sprintf("FIRSTBYTE_BIN=%s is not an executable file (run `make build`)", tl.firstbyte))
	}
	for _, b := range []struct {
		dst       *string
		name, env string
	}{{&tl.prometheus, "prometheus", "PROMETHEUS_BIN"}, {&tl.promtool, "promtool", "PROMTOOL_BIN"}} {
		if p := os.Getenv(b.env); p != "" {
			*b.dst = p
			continue
		}
		p, err := exec.LookPath(b.name)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s is not on PATH (nor set in %s): install the Debian package prometheus "+
				"(`apt-get install prometheus`, as .ci/run does)", b.name, b.env))
		}
		*b.dst = p
	}
	if len(missing) > 0 {
		t.Fatalf("the integration test needs the real binaries:\n  %s", strings.Join(missing, "\n  "))
	}
	return tl
}

// process is a child process that the test stops (SIGTERM, then SIGKILL
// after 10 s) in its cleanup, showing its log if the test failed.
type process struct {
	name, log string
	done      chan struct{} // closed when the process has exited
	err       error         // Wait's result, once done
}

func startProcess(t *testing.T, name, logPath string, env []string, argv ...string) *process {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(pctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout, cmd.Stderr, cmd.Env = logFile, logFile, env
	if err := cmd.Start(); err != nil {
		stop()
		logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{name: name, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s (pid %d) did not exit within 15 s of SIGTERM/SIGKILL", name, cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("%s log, last lines (%s):\n%s", name, logPath, tail(logPath, 30))
		}
	})
	return p
}

// waitHTTP polls url until it answers 200, failing at once if the process
// has exited.
func (p *process) waitHTTP(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before %s answered 200; log:\n%s", p.name, p.err, url, tail(p.log, 30))
		case <-ctx.Done():
			t.Fatalf("%s: %s did not answer 200 within 20 s; log:\n%s", p.name, url, tail(p.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type gateway struct{ api, admin string }

func startGateway(ctx context.Context, t *testing.T, bin, dir string, cluster *sim.Cluster) gateway {
	t.Helper()
	gw := gateway{api: freeAddr(t), admin: freeAddr(t)}
	var providers, targets strings.Builder
	for _, p := range itProviders {
		// A breaker that never opens: this run is about steady shares, and
		// five 503s in a row on flaky would otherwise open it for 30 s.
		// A rate card, so the cost panel has something to count.
		fmt.Fprintf(&providers, "  %s: {kind: openai, base_url: %q, api_key: not-a-secret, timeout: {first_byte: 2s}, circuit_breaker: {failures: 1000000}, pricing: {%s-model: {input: 0.5, output: 1.5}}}\n",
			p.Name, cluster.URL(p.Name), p.Name)
		fmt.Fprintf(&targets, "  - {virtual_key: %s, model_map: {%s: %s-model}}\n", p.Name, itModel, p.Name)
	}
	// down: nothing listens on its port; one failure opens its circuit for
	// the rest of the run.
	fmt.Fprintf(&providers, "  down: {kind: openai, base_url: \"http://%s/v1\", api_key: not-a-secret, circuit_breaker: {failures: 1, cooldown: 10m}}\n",
		freeAddr(t))
	fmt.Fprintf(&targets, "  - {virtual_key: down, model_map: {%s: %s}}\n", downModel, downModel)
	// Ingest on, without a token: the admin listener is loopback.
	cfg := fmt.Sprintf("listen: %s\nadmin: {listen: %s}\nstrategy: {mode: least-latency, hedge: {enabled: true, budget: 0.2}}\ntelemetry: {ingest: {enabled: true}}\nproviders:\n%stargets:\n%s",
		gw.api, gw.admin, providers.String(), targets.String())
	path := filepath.Join(dir, "firstbyte.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// No OTLP export (nothing listens) and no config from the caller's
	// environment: the run must not depend on where it is started.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "FIRSTBYTE_") {
			env = append(env, kv)
		}
	}
	p := startProcess(t, "firstbyte", filepath.Join(dir, "firstbyte.log"), env, bin, "serve", "-config", path)
	p.waitHTTP(ctx, t, "http://"+gw.admin+"/readyz")
	return gw
}

// requestDown sends downRequests requests for downModel, one at a time:
// the first fails (nothing listens) and opens the down target's circuit,
// the next ones skip it. It returns the statuses; every one must be an
// error, as the model has no other target.
func requestDown(ctx context.Context, t *testing.T, api string) []int {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Anyone there?"}]}`, downModel)
	var codes []int
	for range downRequests {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+api+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request for %s: %v", downModel, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode < 500 {
			t.Fatalf("request for %s answered %d; its only target is down, want a 5xx", downModel, resp.StatusCode)
		}
	}
	return codes
}

// sendForeignSpan posts, as a collector fanning out a peer's spans would,
// one attempt span naming a target this gateway does not route to. The
// ingest takes the request and rejects the span (unknown_target).
func sendForeignSpan(ctx context.Context, t *testing.T, admin string) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "firstbyte")
	rs.Resource().Attributes().PutStr("service.instance.id", "a-peer-with-another-config")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetKind(ptrace.SpanKindClient)
	span.SetTraceID(pcommon.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	span.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	now := time.Now()
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-20 * time.Millisecond)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	span.Attributes().PutStr(string(telemetry.KeyTarget), "not-a-target-here")
	span.Attributes().PutStr(string(telemetry.KeyRequestModel), "some-model")
	span.Attributes().PutStr(string(telemetry.KeyRequestedModel), itModel)
	span.Attributes().PutDouble(string(telemetry.KeyTimeToFirstByte), 0.001)
	payload, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+admin+"/v1/traces", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/traces: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/traces with a peer's span: status %d, %s; want 200 (the request is fine, its span is not)", resp.StatusCode, answer)
	}
}

// prometheusServer is a running Prometheus and its HTTP API.
type prometheusServer struct {
	base       string // http://127.0.0.1:PORT
	configPath string
}

// startPrometheus runs Prometheus on the shipped prometheus.yml, changed
// only where a test must: the gateway's address and a 1 s scrape interval.
func startPrometheus(ctx context.Context, t *testing.T, tl tools, dir, adminAddr string) *prometheusServer {
	t.Helper()
	shipped, err := os.ReadFile(scrapeConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(shipped)
	for _, r := range []struct{ old, new string }{
		{`"127.0.0.1:9464"`, strconv.Quote(adminAddr)},
		{"scrape_interval: 5s", "scrape_interval: " + scrapeInterval},
	} {
		if n := strings.Count(cfg, r.old); n != 1 {
			t.Fatalf("%s has %q %d times, want once: the test derives its Prometheus config from it", scrapeConfig, r.old, n)
		}
		cfg = strings.Replace(cfg, r.old, r.new, 1)
	}
	s := &prometheusServer{configPath: filepath.Join(dir, "prometheus.yml")}
	if err := os.WriteFile(s.configPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	s.base = "http://" + addr
	p := startProcess(t, "prometheus", filepath.Join(dir, "prometheus.log"), os.Environ(),
		tl.prometheus,
		"--config.file="+s.configPath,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr,
		"--enable-feature=exemplar-storage",
	)
	p.waitHTTP(ctx, t, s.base+"/-/ready")
	return s
}

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	value  float64
}

// query evaluates expr now through /api/v1/query.
func (s *prometheusServer) query(ctx context.Context, expr string) ([]sample, error) {
	form := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(time.Now().UnixMilli())/1000, 'f', 3, 64)}}
	var body struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := s.api(ctx, http.MethodPost, "/api/v1/query", form, &body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", body.ErrorType, body.Error)
	}
	switch body.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]sample, 0, len(vec))
		for _, v := range vec {
			f, err := parseValue(v.Value[1])
			if err != nil {
				return nil, err
			}
			out = append(out, sample{labels: v.Metric, value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parseValue(v[1])
		return []sample{{labels: map[string]string{}, value: f}}, err
	}
	return nil, fmt.Errorf("result type %q, want an instant vector (as a panel shows)", body.Data.ResultType)
}

func parseValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}

func (s *prometheusServer) api(ctx context.Context, method, path string, form url.Values, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var req *http.Request
	if method == http.MethodPost {
		req, _ = http.NewRequestWithContext(ctx, method, s.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequestWithContext(ctx, method, s.base+path+"?"+form.Encode(), nil)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	// Errors come as 400/422 with the same JSON body.
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s %s: status %d, body %.200s", method, path, resp.StatusCode, data)
	}
	return nil
}

// waitFor polls expr until its single value satisfies ok.
func (s *prometheusServer) waitFor(ctx context.Context, t *testing.T, expr string, ok func(float64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last []sample
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = s.query(ctx, expr)
		if lastErr == nil && len(last) == 1 && ok(last[0].value) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("waited 20 s for %s: %s = %v (err %v)", what, expr, describe(last), lastErr)
}

func (s *prometheusServer) scalar(ctx context.Context, t *testing.T, expr string) float64 {
	t.Helper()
	r, err := s.query(ctx, expr)
	if err != nil || len(r) != 1 {
		t.Fatalf("%s = %v, err %v; want one value", expr, describe(r), err)
	}
	return r[0].value
}

func (s *prometheusServer) byLabel(ctx context.Context, t *testing.T, expr, label string) map[string]float64 {
	t.Helper()
	r, err := s.query(ctx, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	out := map[string]float64{}
	for _, x := range r {
		out[x.labels[label]] = x.value
	}
	return out
}

// exemplars counts the exemplars Prometheus stored for expr since start
// and returns one's labels.
func (s *prometheusServer) exemplars(ctx context.Context, t *testing.T, expr string, start time.Time) (int, map[string]string) {
	t.Helper()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   []struct {
			Exemplars []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	form := url.Values{"query": {expr},
		"start": {strconv.FormatInt(start.Add(-time.Minute).Unix(), 10)},
		"end":   {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)}}
	if err := s.api(ctx, http.MethodGet, "/api/v1/query_exemplars", form, &body); err != nil || body.Status != "success" {
		t.Fatalf("query_exemplars %s: %v %s", expr, err, body.Error)
	}
	n := 0
	var labels map[string]string
	for _, series := range body.Data {
		for _, e := range series.Exemplars {
			n++
			labels = e.Labels
		}
	}
	return n, labels
}

type queryResult struct {
	expr    string
	samples []sample
	err     error
}

// evaluateDashboard runs every panel query as Grafana would send it, with
// the variables set to the one model and instance of the run.
func evaluateDashboard(ctx context.Context, t *testing.T, s *prometheusServer, adminAddr string) map[string]queryResult {
	t.Helper()
	vars := map[string]string{
		VarModel:          regexValue(itModel),
		VarInstance:       regexValue(adminAddr),
		VarDatasource:     "prometheus",
		"__rate_interval": rateIntervalValue,
		"__interval":      rateIntervalValue,
		"__range":         rateIntervalValue,
	}
	out := map[string]queryResult{}
	for _, q := range Queries() {
		expr, missing := expand(q.Expr, vars)
		r := queryResult{expr: expr}
		if len(missing) > 0 {
			r.err = fmt.Errorf("no value for variables %v", missing)
		} else {
			r.samples, r.err = s.query(ctx, expr)
		}
		out[q.Panel+"/"+q.RefID] = r
	}
	return out
}

// loadResult is what the clients saw.
type loadResult struct {
	requests, failed int
	firstFailure     string
	took             time.Duration
	reasons          map[string]int // X-Firstbyte-Selection
	targets          map[string]int // X-Firstbyte-Target
}

// driveLoad sends streaming chat requests from loadWorkers workers at up to
// loadRate per second until there have been loadMinRequests and
// loadMinDuration has passed, or loadMaxDuration, whichever comes first.
func driveLoad(ctx context.Context, t *testing.T, url string) loadResult {
	t.Helper()
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: loadWorkers},
	}
	defer client.CloseIdleConnections()
	body := fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"Say something quick."}]}`, itModel)
	start := time.Now()
	var sent atomic.Int64
	done := func() bool {
		el := time.Since(start)
		return ctx.Err() != nil || el >= loadMaxDuration || (el >= loadMinDuration && sent.Load() >= loadMinRequests)
	}
	// One token per request at loadRate; a tick no worker is free for is
	// dropped, so a slow machine gets fewer requests, not a burst.
	tokens := make(chan struct{})
	go func() {
		defer close(tokens)
		tick := time.NewTicker(time.Second / loadRate)
		defer tick.Stop()
		for !done() {
			<-tick.C
			select {
			case tokens <- struct{}{}:
			case <-tick.C:
			}
		}
	}()
	results := make([]loadResult, loadWorkers)
	var wg sync.WaitGroup
	for w := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			r.reasons, r.targets = map[string]int{}, map[string]int{}
			for range tokens {
				sent.Add(1)
				r.requests++
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					r.fail(err.Error())
					continue
				}
				stream, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				r.reasons[resp.Header.Get("X-Firstbyte-Selection")]++
				r.targets[resp.Header.Get("X-Firstbyte-Target")]++
				if resp.StatusCode != http.StatusOK || err != nil || !bytes.Contains(stream, []byte("data: [DONE]")) {
					r.fail(fmt.Sprintf("status %d, read error %v, body %.200q", resp.StatusCode, err, stream))
				}
			}
		}()
	}
	wg.Wait()
	total := loadResult{took: time.Since(start), reasons: map[string]int{}, targets: map[string]int{}}
	for _, r := range results {
		total.requests += r.requests
		total.failed += r.failed
		if total.firstFailure == "" {
			total.firstFailure = r.firstFailure
		}
		for k, v := range r.reasons {
			total.reasons[k] += v
		}
		for k, v := range r.targets {
			total.targets[k] += v
		}
	}
	return total
}

func (r *loadResult) fail(why string) {
	r.failed++
	if r.firstFailure == "" {
		r.firstFailure = why
	}
}

type response struct {
	contentType string
	body        []byte
}

func fetch(ctx context.Context, t *testing.T, url, accept string) response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v", url, resp.StatusCode, err)
	}
	return response{contentType: resp.Header.Get("Content-Type"), body: body}
}

// typedFamilies reads the series names a text exposition offers from its
// "# TYPE name type" lines.
func typedFamilies(exposition []byte) map[string]bool {
	types := map[string]dto.MetricType{
		"counter": dto.MetricType_COUNTER, "gauge": dto.MetricType_GAUGE, "histogram": dto.MetricType_HISTOGRAM,
		"summary": dto.MetricType_SUMMARY, "untyped": dto.MetricType_UNTYPED,
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			for _, n := range seriesNames(f[2], types[f[3]]) {
				out[n] = true
			}
		}
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func allNaN(s []sample) bool {
	for _, x := range s {
		if !math.IsNaN(x.value) {
			return false
		}
	}
	return true
}

func describe(s []sample) string {
	parts := make([]string, 0, len(s))
	for _, x := range s {
		keys := sortedKeys(x.labels)
		var ls []string
		for _, k := range keys {
			ls = append(ls, k+"="+x.labels[k])
		}
		parts = append(parts, fmt.Sprintf("{%s} %g", strings.Join(ls, ","), x.value))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func grepLines(data []byte, substr string, n int) string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, substr) && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
