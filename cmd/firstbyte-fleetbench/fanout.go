package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The collector's CPU per fanned-out span: the real firstbyte-otelcol with
// a fan-out config (one otlp_http exporter per endpoint, as the Helm chart
// renders), fed attempt spans over OTLP/HTTP at a steady rate, its CPU
// read from /proc/PID/stat over a window after a warm-up. Fanned-out spans
// are counted where they arrive (the sinks' decoded spans, the gateways'
// firstbyte_spans_consumed_total{source="peer"}), so a collector that
// falls behind is not credited with spans it did not deliver.

type fanoutParams struct {
	Gateway, Otelcol string // binaries
	Kind             string // "sink" or "gateway"
	Endpoints        int
	Rate             float64 // spans a second sent to the collector
	Batch            int     // spans per OTLP request
	Keys             int     // (target, model) keys the spans spread over
	LimitRate        float64 // firstbyte_ratelimit spans/s per key; 0: none
	Warmup, Window   time.Duration
}

type fanoutResult struct {
	p         fanoutParams
	input     float64       // spans/s the collector accepted
	fannedOut float64       // spans/s the endpoints took, all together
	cpu       time.Duration // the collector's, in the window
	load      string        // /proc/loadavg's 1-minute figure, before and after
}

// cores is the collector's CPU use in the window, in cores.
func (r fanoutResult) cores() float64 { return r.cpu.Seconds() / r.p.Window.Seconds() }

// per10k is cores per 10,000 spans a second of rate.
func per10k(cores, rate float64) float64 {
	if rate <= 0 {
		return math.NaN()
	}
	return cores / (rate / 10_000)
}

// runFanout measures one configuration once.
func runFanout(ctx context.Context, p fanoutParams, logf func(string, ...any)) (fanoutResult, error) {
	res := fanoutResult{p: p, load: loadAvg()}
	dir, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)

	eps, err := startEndpoints(p, dir)
	defer func() {
		for _, e := range eps {
			e.stop()
		}
	}()
	if err != nil {
		return res, err
	}
	recv, err := freeAddr()
	if err != nil {
		return res, err
	}
	cfgPath := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(cfgPath, []byte(collectorConfig(recv, eps, p.LimitRate)), 0o600); err != nil {
		return res, err
	}
	col, err := startChild("firstbyte-otelcol", []string{p.Otelcol, "--config=file:" + cfgPath}, nil)
	if err != nil {
		return res, err
	}
	defer col.stop()
	if err := waitTCP(col, recv); err != nil {
		return res, err
	}

	genCtx, stopGen := context.WithCancel(ctx)
	var sent atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); generate(genCtx, "http://"+recv+"/v1/traces", p, &sent) }()
	defer func() { stopGen(); wg.Wait() }()

	if !sleepCtx(ctx, p.Warmup) {
		return res, ctx.Err()
	}
	cpu0, _ := col.cpu()
	sent0, got0, t0 := sent.Load(), delivered(eps), time.Now()
	if !sleepCtx(ctx, p.Window) {
		return res, ctx.Err()
	}
	cpu1, err := col.cpu()
	if err != nil {
		return res, err
	}
	sent1, got1, t1 := sent.Load(), delivered(eps), time.Now()
	elapsed := t1.Sub(t0).Seconds()
	res.cpu = time.Duration(float64(cpu1-cpu0) * p.Window.Seconds() / elapsed)
	res.input = float64(sent1-sent0) / elapsed
	res.fannedOut = float64(got1-got0) / elapsed
	res.load += " → " + loadAvg()
	logf("%2d %-7s endpoints: input %5.0f/s, fanned out %6.0f/s, collector %.3f cores, load %s",
		p.Endpoints, p.Kind, res.input, res.fannedOut, res.cores(), res.load)
	return res, nil
}

func startEndpoints(p fanoutParams, dir string) ([]endpoint, error) {
	var eps []endpoint
	for range p.Endpoints {
		var e endpoint
		var err error
		switch p.Kind {
		case "sink":
			e, err = startSink()
		case "gateway":
			e, err = startGateway(p.Gateway, p.Keys, dir)
		default:
			err = fmt.Errorf("endpoint kind %q: want sink or gateway", p.Kind)
		}
		if err != nil {
			return eps, err
		}
		eps = append(eps, e)
	}
	return eps, nil
}

func delivered(eps []endpoint) int64 {
	var n int64
	for _, e := range eps {
		c, _ := e.spans()
		n += c
	}
	return n
}

// generate posts batches of attempt spans to url at p.Rate spans a second
// until ctx ends, counting the spans the collector accepted.
func generate(ctx context.Context, url string, p fanoutParams, sent *atomic.Int64) {
	interval := time.Duration(float64(p.Batch) / p.Rate * float64(time.Second))
	tick := time.NewTicker(interval)
	defer tick.Stop()
	client := &http.Client{Timeout: 5 * time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		body, err := spanBatch(rng, p.Batch, p.Keys, time.Now())
		if err != nil {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			continue
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			sent.Add(int64(p.Batch))
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// writeFanoutTable writes one Markdown row per configuration, each figure
// the range over its repeats.
func writeFanoutTable(w io.Writer, runs [][]fanoutResult) {
	fmt.Fprintln(w, "| endpoints | kind | rate limit | input spans/s | fanned out spans/s | collector CPU, cores | per 10k fanned-out spans/s | per 10k input spans/s | load (1 min) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		p := rs[0].p
		limit := "—"
		if p.LimitRate > 0 {
			limit = fmt.Sprintf("%g/s per key, %d keys", p.LimitRate, p.Keys)
		}
		var loads []string
		for _, r := range rs {
			loads = append(loads, r.load)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Endpoints, p.Kind, limit,
			span(rs, func(r fanoutResult) float64 { return r.input }, "%.0f"),
			span(rs, func(r fanoutResult) float64 { return r.fannedOut }, "%.0f"),
			span(rs, fanoutResult.cores, "%.3f"),
			span(rs, func(r fanoutResult) float64 { return per10k(r.cores(), r.fannedOut) }, "%.3f"),
			span(rs, func(r fanoutResult) float64 { return per10k(r.cores(), r.input) }, "%.3f"),
			strings.Join(loads, "; "))
	}
}

// span is "lo–hi" of f over rs (one figure when they agree).
func span(rs []fanoutResult, f func(fanoutResult) float64, format string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	a, b := fmt.Sprintf(format, lo), fmt.Sprintf(format, hi)
	if a == b {
		return a
	}
	return a + "–" + b
}
