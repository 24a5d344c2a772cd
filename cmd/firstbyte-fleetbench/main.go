// Command firstbyte-fleetbench measures what sharing latency samples
// across a fleet costs and what it buys, for docs/fleet.md ("Beyond one
// collector"):
//
//	firstbyte-fleetbench p50      the p50 error of a replica that gets 1 in N of
//	                              the fleet's samples (the real tracker, a
//	                              virtual clock: deterministic, seconds to run)
//	firstbyte-fleetbench fanout   the real collector's CPU per fanned-out span
//	                              with 2, 4 and 8 ingest endpoints (sinks or
//	                              real gateways), each configuration repeated
//
// Everything it starts listens on 127.0.0.1 and stops with it. It must
// not be imported: it is a measuring tool, linked with the collector
// package only to use its tracker.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  firstbyte-fleetbench p50 [-rate R] [-duration D] [-n LIST] [-seeds LIST]
  firstbyte-fleetbench fanout -gateway bin/firstbyte -otelcol bin/firstbyte-otelcol
      [-endpoints 2,4,8] [-kind sink|gateway|both] [-rate S] [-repeat 3] [-window D] [-limit R]
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "p50":
		return cmdP50(args[1:], stdout, stderr)
	case "fanout":
		return cmdFanout(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "firstbyte-fleetbench: unknown command %q\n%s", args[0], usage)
	return 2
}

func cmdP50(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("p50", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := defaultP50
	rate := fs.Float64("rate", def.Rate, "the fleet's samples a second for one (target, model)")
	median := fs.Duration("median", def.Median, "the provider's median time to first byte (doubled halfway)")
	sigma := fs.Float64("sigma", def.Sigma, "log-normal shape of the time to first byte")
	duration := fs.Duration("duration", def.Duration, "virtual time; the median doubles at half")
	ns := fs.String("n", joinInts(def.Ns), "1 in N, for each N (the first must be 1: the full tracker)")
	seeds := fs.String("seeds", "1,2,3", "one run per seed; figures are the range over them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	nList, err := intList(*ns)
	if err != nil || len(nList) == 0 || nList[0] != 1 || *rate <= 0 {
		fmt.Fprintf(stderr, "p50: -n %q must be positive integers starting with 1, -rate positive\n", *ns)
		return 2
	}
	seedList, err := intList(*seeds)
	if err != nil || len(seedList) == 0 {
		fmt.Fprintf(stderr, "p50: -seeds %q: %v\n", *seeds, err)
		return 2
	}
	var us []uint64
	for _, s := range seedList {
		us = append(us, uint64(s))
	}
	writeP50Table(stdout, p50Params{Rate: *rate, Median: *median, Sigma: *sigma, Duration: *duration, Ns: nList}, us)
	return 0
}

func cmdFanout(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p fanoutParams
	fs.StringVar(&p.Gateway, "gateway", "bin/firstbyte", "the gateway binary (make build)")
	fs.StringVar(&p.Otelcol, "otelcol", "bin/firstbyte-otelcol", "the collector binary (make otelcol)")
	endpoints := fs.String("endpoints", "2,4,8", "ingest endpoints the collector fans out to, per row")
	kind := fs.String("kind", "both", "endpoints: sink (decode and count), gateway (firstbyte serve), or both")
	fs.Float64Var(&p.Rate, "rate", 1000, "spans a second sent to the collector")
	fs.IntVar(&p.Batch, "batch", 50, "spans per OTLP request sent")
	fs.IntVar(&p.Keys, "keys", 20, "(target, model) keys the spans spread over")
	fs.Float64Var(&p.LimitRate, "limit", 0, "also run the largest endpoint count with firstbyte_ratelimit at this rate per key (0: not)")
	fs.DurationVar(&p.Warmup, "warmup", 3*time.Second, "before each window")
	fs.DurationVar(&p.Window, "window", 10*time.Second, "the measured window")
	repeat := fs.Int("repeat", 3, "runs of each configuration")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	counts, err := intList(*endpoints)
	if err != nil || len(counts) == 0 || p.Rate <= 0 || p.Batch <= 0 || p.Keys <= 0 || *repeat <= 0 {
		fmt.Fprintln(stderr, "fanout: -endpoints must list positive integers; -rate, -batch, -keys, -repeat positive")
		return 2
	}
	kinds := []string{*kind}
	if *kind == "both" {
		kinds = []string{"sink", "gateway"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	logf("machine: %d CPUs seen by Go, load %s", numCPU(), loadAvg())

	var configs []fanoutParams
	for _, k := range kinds {
		for _, n := range counts {
			c := p
			c.Kind, c.Endpoints, c.LimitRate = k, n, 0
			configs = append(configs, c)
		}
		if p.LimitRate > 0 {
			c := p
			c.Kind, c.Endpoints = k, counts[len(counts)-1]
			configs = append(configs, c)
		}
	}
	// Repeats go round the configurations, so a spell of load from
	// elsewhere touches several rows a little rather than one a lot.
	runs := make([][]fanoutResult, len(configs))
	for range *repeat {
		for i, c := range configs {
			r, err := runFanout(ctx, c, logf)
			if err != nil {
				fmt.Fprintf(stderr, "fanout: %d %s endpoints: %v\n", c.Endpoints, c.Kind, err)
				return 1
			}
			runs[i] = append(runs[i], r)
		}
	}
	writeFanoutTable(stdout, runs)
	return 0
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func numCPU() int { return runtime.NumCPU() }

func joinInts(xs []int) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ",")
}
