package main

import (
	"context"
	"flag"
	"io"
	"time"
)

// modes are the runs besides the full comparison and -routing: the
// regression guard (-compare, compare.go), slow streams held at once
// (-streams, streams.go) and instruction counts (-callgrind,
// callgrind.go).
type modes struct {
	compare, callgrind, cgBaseline bool
	ref, cgOut                     string
	streams, cgRequests, cgConc    int
	streamsChunks                  int
	streamsSpread                  time.Duration
}

func addModes(fs *flag.FlagSet) *modes {
	m := &modes{}
	fs.BoolVar(&m.compare, "compare", false, "the regression guard: only the unary throughput and latency scenarios, -gateway against -ref and the bare proxy, -rounds rounds (default 5) interleaved (compare.go; make bench-compare REF=commit)")
	fs.StringVar(&m.ref, "ref", "", "with -compare: the reference gateway binary (an older build)")
	fs.IntVar(&m.streams, "streams", 0, "measure this many concurrent slow streams (20 chunks 1 s apart) through the bare proxy and the gateway instead: memory per stream, added chunk latency (streams.go)")
	fs.DurationVar(&m.streamsSpread, "streams-spread", 10*time.Second, "with -streams: the streams start spread over this long")
	fs.IntVar(&m.streamsChunks, "streams-chunks", trickleChunks, "with -streams: the chunks of each stream, 1 s apart (more: the streams overlap longer, so all stay open at once on a loaded machine)")
	fs.BoolVar(&m.callgrind, "callgrind", false, "count the instructions the gateway (or with -callgrind-baseline the bare proxy) executes for -requests unary requests at -concurrency, under valgrind --tool=callgrind (callgrind.go)")
	fs.BoolVar(&m.cgBaseline, "callgrind-baseline", false, "with -callgrind: measure the bare proxy instead")
	fs.IntVar(&m.cgRequests, "requests", 4000, "with -callgrind: how many requests are counted")
	fs.IntVar(&m.cgConc, "concurrency", 32, "with -callgrind: how many clients send them")
	fs.StringVar(&m.cgOut, "callgrind-out", "callgrind.out", "with -callgrind: where the dump is kept (callgrind_annotate reads it)")
	return m
}

// run runs the mode asked for; ok is false when none was.
func (m *modes) run(ctx context.Context, fs *flag.FlagSet, gateway string, quick bool, rounds int, stdout, stderr io.Writer) (code int, ok bool) {
	switch {
	case m.callgrind:
		return runCallgrind(ctx, gateway, callgrindPlan{requests: m.cgRequests, concurrency: m.cgConc, baseline: m.cgBaseline, out: m.cgOut}, stdout, stderr), true
	case m.streams > 0:
		return runStreamsMode(ctx, gateway, m.streams, m.streamsChunks, m.streamsSpread, stdout, stderr), true
	case m.compare:
		if !isFlagSet(fs, "rounds") {
			rounds = 0 // compare's own default
		}
		return runCompare(ctx, gateway, m.ref, quick, rounds, stdout, stderr), true
	}
	return 0, false
}
