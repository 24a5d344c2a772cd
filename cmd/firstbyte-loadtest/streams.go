package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// The -streams run: many concurrent slow streams through one gateway (and
// the bare proxy), as a fleet of chat clients waiting on a slow model
// holds them: trickleChunks chunks a second apart each, all open together.
// It reports the proxy's peak RSS over its RSS before, per stream, and
// each chunk's latency (upstream write -> client read; the client and the
// upstream share this process and its clock), against direct's: what the
// proxy adds per chunk while it holds them all.
//
// Each proxy holds two sockets a stream (client and upstream), and this
// process two as well (client and upstream server): the streams a run can
// hold are bounded by the open-files limit (RLIMIT_NOFILE; Go raises the
// soft limit to the hard one), which the run checks first.

const (
	modelTrickle  = "trickle" // -streams: 20 chunks 1 s apart (-streams-chunks)
	trickleChunks = 20
	trickleGap    = time.Second
)

// streamsResult is one arm's -streams figures.
type streamsResult struct {
	before, peak int64 // RSS bytes (0 for direct)
	ok, errors   int
	concurrent   int64
	chunkLat     []time.Duration
}

// runStreamsMode measures n streams through direct, the baseline and the
// gateway, one arm after another.
func runStreamsMode(ctx context.Context, gatewayPath string, n, chunks int, spread time.Duration, stdout, stderr io.Writer) int {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	if chunks < 1 {
		fmt.Fprintf(stderr, "firstbyte-loadtest: -streams-chunks must be at least 1\n")
		return 2
	}
	behaviours[modelTrickle] = behaviour{chunks: chunks, gap: trickleGap} // before the upstream serves
	if limit, ok := openFilesLimit(); ok && uint64(2*n+64) > limit {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %d streams need %d open files in each process, the limit is %d\n", n, 2*n+64, limit)
		return 2
	}
	started := time.Now()
	up := newUpstream()
	upURL, stopUp, err := upProto.serve(up)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	defer stopUp()
	self, err := selfExecutable()
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	baseAddr, err := freeAddr()
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	base, err := startChild(armBaseline, append([]string{self, "-serve-baseline", baseAddr, "-upstream", upURL}, upProto.baselineArgs()...), childEnv())
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	defer base.stop()
	if err := waitReady(ctx, base, "http://"+baseAddr+"/", 0); err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	sink := &otlpSink{}
	sinkURL, stopSink, err := serveLoopback(sink)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	defer stopSink()
	gw, c, cleanup, err := startGatewayArmWith(ctx, armGateway, gatewayPath, upURL, sinkURL, fmt.Sprintf("limits: {max_connections: %d}\n", n+100))
	if c != nil {
		defer c.stop()
	}
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
		return 1
	}
	arms := []*arm{
		{name: armDirect, client: directClient(), body: requestBody,
			url: func(m string) string { return upURL + "/" + m + "/v1/chat/completions" }},
		{name: armBaseline, client: newLoadClient(), body: requestBody, pid: base.pid(),
			url: func(m string) string { return "http://" + baseAddr + "/" + m + "/v1/chat/completions" }},
		gw,
	}
	machineStart := describeMachine(gatewayPath)
	res := map[string]*streamsResult{}
	for _, a := range arms {
		// Warm: a few streams, so start-up allocations are not counted.
		runStreams(ctx, a, modelStream, streamChunks, time.Second, 8, 1, 30*time.Second)
		time.Sleep(time.Second)
		logf("%d streams through %s (%d chunks %v apart, started over %v)", n, a.name, chunks, trickleGap, spread)
		r, err := holdTrickle(ctx, a, up, n, chunks, spread)
		if err != nil {
			fmt.Fprintf(stderr, "firstbyte-loadtest: %v\n", err)
			return 1
		}
		res[a.name] = r
		a.client.CloseIdleConnections()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d concurrent streams, %d chunks %v apart, started over %v, upstream %s; %s, %s\n", n, chunks, trickleGap, spread, upProto.name,
		started.UTC().Format("2006-01-02 15:04 MST"), time.Since(started).Round(time.Second))
	fmt.Fprintf(&b, "machine: %d CPUs (%s), load average %s at start, %s at end; gateway: %s\n",
		machineStart.cpus, machineStart.cpuModel, machineStart.loadStart, loadAvg(), orUnknown(machineStart.gateway))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "arm\tstreams ok\terrors\topen at once\tRSS before\tpeak RSS\tper stream\tchunk p50\tchunk p99\tadded p50\tadded p99\t")
	d := res[armDirect]
	dp50, dp99 := percentile(d.chunkLat, 50), percentile(d.chunkLat, 99)
	for _, a := range arms {
		r := res[a.name]
		p50, p99 := percentile(r.chunkLat, 50), percentile(r.chunkLat, 99)
		rssCols := "-\t-\t-"
		added := "-\t-"
		if a.name != armDirect {
			rssCols = fmt.Sprintf("%s\t%s\t%s", mb(r.before), mb(r.peak), kb((r.peak-r.before)/int64(max(r.ok, 1))))
			added = fmt.Sprintf("%s\t%s", dur(p50-dp50), dur(p99-dp99))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", a.name, r.ok, r.errors, r.concurrent, rssCols, dur(p50), dur(p99), added)
	}
	tw.Flush()
	b.WriteString("peak RSS: the larger of VmHWM (reset through clear_refs before) and VmRSS sampled every 20 ms; per stream: (peak - before) / streams.\n")
	b.WriteString("chunk latency: upstream write -> client read of every chunk after the first; added: over direct's, same run.\n")
	fmt.Fprint(stdout, b.String())
	return 0
}

// holdTrickle opens n trickling streams through a, starts spread over
// spread, and measures what it holds.
func holdTrickle(ctx context.Context, a *arm, up *upstream, n, chunks int, spread time.Duration) (*streamsResult, error) {
	r := &streamsResult{}
	if a.pid != 0 {
		rss, _, err := procStatus(a.pid)
		if err != nil {
			return nil, err
		}
		r.before, r.peak = rss, rss
		_ = resetPeakRSS(a.pid)
	}
	up.resetPeak()
	peakRSS := watchPeakRSS(a.pid)
	c := newLoadClient()
	if a.name == armDirect {
		c = directClient()
	}
	hold := &arm{name: a.name, client: c, url: a.url, body: a.body, pid: a.pid}
	defer hold.client.CloseIdleConnections()
	sr := runStreams(ctx, hold, modelTrickle, chunks, spread, n, 1, spread+trickleGap*time.Duration(chunks)+60*time.Second)
	r.peak = max(r.peak, peakRSS())
	if a.pid != 0 {
		if _, hwm, err := procStatus(a.pid); err == nil {
			r.peak = max(r.peak, hwm)
		}
	}
	r.ok, r.errors, r.chunkLat = len(sr.samples), sr.errors, sr.chunkLat
	r.concurrent = up.peak.Load()
	if r.ok == 0 {
		return nil, fmt.Errorf("all %d streams through %s failed; first: %v", n, a.name, sr.firstErr)
	}
	return r, nil
}

// directClient is direct's client, reaching the upstream as the proxies do.
func directClient() *http.Client {
	c := newLoadClient()
	_ = upProto.configure(c.Transport.(*http.Transport)) // the parent wrote the CA file
	return c
}
