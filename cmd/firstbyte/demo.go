package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/routingview"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The demo: three providers serve one model at clearly different speeds
// (two speak the OpenAI API, claude-sim the Anthropic API: the clients'
// chat completions reach it translated); the gateway learns who is fastest
// from its own spans and sends nine requests in ten there. Then the story
// (demostory.go): the fastest degrades (slow and failing), failovers
// appear and the lead moves; it recovers, and exploration (one request in
// ten) re-measures it until it wins the lead back. Each step begins when
// the one before has happened, not at a set time, so a slow machine tells
// the whole story too, only later. A second model, one Claude bought from
// three hosts (demohosts.go), is served beside it throughout.
const demoModel = "llama-3.3-70b"

// demoSimConfig are the providers that keep their pace throughout: two
// for the story's model, and the hosts pool (demohosts.go).
const demoSimConfig = `
seed: 7
providers:
  - name: together-sim
    ttfb: {median: 350ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
  - name: claude-sim
    ttfb: {median: 600ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
` + demoHostsSimConfig

// demoStarFast and demoStarSlow are groq-sim (demoStar) as the story
// switches it: fast, and degraded.
var (
	demoStarFast = sim.Provider{Name: demoStar, TTFB: sim.Dist{Median: 150 * time.Millisecond, Spread: 0.2},
		Stream: sim.Pace{Chunks: 8, Interval: 10 * time.Millisecond}}
	demoStarSlow = sim.Provider{Name: demoStar, TTFB: sim.Dist{Median: 900 * time.Millisecond, Spread: 0.2},
		Stream: sim.Pace{Chunks: 8, Interval: 10 * time.Millisecond}, Errors: sim.ErrorRate{Rate: 0.25, Status: http.StatusServiceUnavailable}}
)

// demoGatewayConfig maps the story's client model onto each simulated
// provider under the provider's own model name, as a real multi-provider
// set-up does, and the hosts pool's model onto its three hosts;
// vertexCredentials is the Vertex sim's service-account file.
func demoGatewayConfig(listen, admin string, urls map[string]string, vertexCredentials string) string {
	return fmt.Sprintf(`
listen: %s
admin: {listen: %s}
strategy: {mode: least-latency}
providers:
  groq-sim:     {kind: openai, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}, circuit_breaker: {failures: 20, cooldown: 5s}}
  together-sim: {kind: openai, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}}
  claude-sim:   {kind: anthropic, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}}
%[7]stargets:
  - {virtual_key: groq-sim,     model_map: {%[6]s: llama-3.3-70b-versatile}}
  - {virtual_key: together-sim, model_map: {%[6]s: meta-llama/Llama-3.3-70B-Instruct-Turbo}}
  - {virtual_key: claude-sim,   model_map: {%[6]s: claude-haiku-4-5}}
%[8]s`, listen, admin, urls["groq-sim"], urls["together-sim"], urls["claude-sim"], demoModel,
		demoHostsProviders(urls, vertexCredentials), demoHostsTargets)
}

// demoWorkers is how many simulated clients the demo runs by default:
// enough traffic that exploration (a twentieth of the requests for each
// runner-up) re-measures a recovered provider within seconds.
const demoWorkers = 32

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Minute, "stop after this long at most (Ctrl-C stops sooner)")
	stay := fs.Bool("stay", false, fmt.Sprintf("keep the traffic going until -duration once the story is told (default: stop %s after it)", demoEpilogue))
	listen := fs.String("listen", "127.0.0.1:8080", "client API address (a free port is used if taken, and said)")
	admin := fs.String("admin", "127.0.0.1:9464", "admin address: /metrics, /debug/routing (a free port is used if taken, and said)")
	workers := fs.Int("workers", demoWorkers, "concurrent simulated clients")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *duration <= 0 || *workers <= 0 {
		fmt.Fprintln(stderr, "firstbyte demo: -duration and -workers must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()

	providers, err := startDemoProviders(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte demo: %v\n", err)
		return 1
	}
	defer providers.Close()
	cfg, err := config.Parse([]byte(demoGatewayConfig(freeOr(*listen), freeOr(*admin), providers.urls, providers.vertexCredentials)), os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte demo: %v\n", err)
		return 1
	}
	s, err := startStack(ctx, cfg, stackOptions{}) // router.New validates cfg
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte demo: %v\n", err)
		return 1
	}
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = s.Shutdown(sctx)
	}()

	moved := movedAddrs(demoAddr{"the API", *listen, s.APIAddr}, demoAddr{"the admin listener", *admin, s.AdminAddr})
	for _, m := range moved {
		fmt.Fprintf(stderr, "firstbyte demo: %s\n", m)
	}

	start := time.Now()
	// Every client keeps its connection (the default keeps two idle per
	// host, and the rest would be a new connection per request).
	clients := &http.Transport{MaxIdleConnsPerHost: *workers, IdleConnTimeout: 90 * time.Second}
	defer clients.CloseIdleConnections()
	d := &demoDriver{url: "http://" + s.APIAddr + "/v1/chat/completions", client: &http.Client{Timeout: 30 * time.Second, Transport: clients}}
	epilogue := demoEpilogue
	if *stay {
		epilogue = 0
	}
	notes := demoNotes{story: newDemoStory(providers.degrade, epilogue), leads: &demoLeads{}, moved: moved}
	var wg sync.WaitGroup
	d.start(ctx, &wg, *workers)
	wg.Add(1)
	go func() {
		defer wg.Done()
		watchDemo(ctx, start, 200*time.Millisecond, func(elapsed time.Duration) {
			if notes.observe(elapsed, s.current().Routing()) {
				cancel()
			}
		})
	}()

	drawDemo(ctx, stdout, start, *duration, s, d, notes)
	wg.Wait()
	fmt.Fprintf(stdout, "\ndemo stopped after %s: %d requests, %d failed; %s\n",
		time.Since(start).Round(time.Second), d.ok.Load()+d.failed.Load(), d.failed.Load(), notes.story.ending())
	return 0
}

// watchDemo calls observe with the run time every interval until ctx ends;
// start is the run's start.
func watchDemo(ctx context.Context, start time.Time, interval time.Duration, observe func(elapsed time.Duration)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			observe(time.Since(start))
		}
	}
}

// demoNotes is what a frame shows beside the table.
type demoNotes struct {
	story *demoStory
	leads *demoLeads
	moved []string // movedAddrs
}

// observe feeds one observation of the routing state, at run time elapsed,
// to both the lead changes and the story, so the two say the same time for
// the same moment. It reports whether the demo is over.
func (n demoNotes) observe(elapsed time.Duration, routing []routingview.Model) (over bool) {
	n.leads.observe(elapsed, routing)
	n.story.observe(elapsed, demoLeader(routing))
	return n.story.over(elapsed)
}

// drawDemo draws the table until ctx ends: the first frame at once (the
// table fills in as the gateway learns), then every second on a terminal
// (every 5 s elsewhere), and the last one when the demo stops.
func drawDemo(ctx context.Context, w io.Writer, start time.Time, total time.Duration, s *stack, d *demoDriver, n demoNotes) {
	tty := isTerminal(w)
	interval := time.Second
	if !tty {
		interval = 5 * time.Second
	}
	view := newDemoView(demoRecent)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	draw := func() {
		now := time.Now()
		f := view.frame(now.Sub(start), s.current().Routing(), gatherDemoCounts(s.Registry), d)
		f.Elapsed, f.Total, f.API, f.Admin, f.Moved = now.Sub(start), total, s.APIAddr, s.AdminAddr, n.moved
		f.Events, f.Story = n.leads.last(maxDemoEvents), n.story.lines()
		_, _ = io.WriteString(w, renderDemoFrame(f, tty))
	}
	draw()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		draw()
	}
}

// demoProviders are the demo's simulated upstreams: a cluster for the two
// that keep their pace, and demoStar behind a switch between its fast and
// its degraded self, which the story turns.
type demoProviders struct {
	cluster *sim.Cluster
	urls    map[string]string // name -> base URL
	// dir holds vertexCredentials, the Vertex sim's service-account file;
	// removed by Close.
	dir, vertexCredentials string
	// immutable after startDemoProviders
	fast, slow *sim.Server
	srv        *http.Server
	served     chan struct{} // closed when srv.Serve has returned
	current    atomic.Pointer[sim.Server]
}

func startDemoProviders(ctx context.Context) (*demoProviders, error) {
	simCfg, err := sim.ParseConfig([]byte(demoSimConfig))
	if err != nil {
		return nil, err
	}
	cluster, err := sim.Start(ctx, simCfg)
	if err != nil {
		return nil, err
	}
	p := &demoProviders{cluster: cluster, urls: map[string]string{}, served: make(chan struct{})}
	for _, sp := range simCfg.Providers {
		p.urls[sp.Name] = cluster.URL(sp.Name)
	}
	if p.dir, err = os.MkdirTemp("", "firstbyte-demo-"); err == nil {
		p.vertexCredentials, err = writeDemoServiceAccount(p.dir, strings.TrimSuffix(p.urls["vertex-sim"], "/v1")+"/token")
	}
	if err != nil {
		p.removeDir()
		cluster.Close()
		return nil, err
	}
	// Seeded like the cluster's providers, on streams of their own.
	p.fast = sim.NewProvider(demoStarFast, sim.Options{Rand: rand.New(rand.NewPCG(simCfg.Seed, 100))})
	p.slow = sim.NewProvider(demoStarSlow, sim.Options{Rand: rand.New(rand.NewPCG(simCfg.Seed, 101))})
	p.current.Store(p.fast)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.removeDir()
		cluster.Close()
		return nil, err
	}
	p.urls[demoStar] = "http://" + ln.Addr().String() + "/v1"
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { defer close(p.served); _ = p.srv.Serve(ln) }()
	return p, nil
}

// ServeHTTP is demoStar: its current self answers.
func (p *demoProviders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.current.Load().ServeHTTP(w, r)
}

// degrade switches demoStar to its degraded self (on) or back.
func (p *demoProviders) degrade(on bool) {
	if on {
		p.current.Store(p.slow)
	} else {
		p.current.Store(p.fast)
	}
}

// Close stops every provider: open connections are broken, so handlers see
// their requests cancelled, and it waits for them.
func (p *demoProviders) Close() {
	_ = p.srv.Close()
	<-p.served
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.fast.WaitIdle(ctx)
	_ = p.slow.WaitIdle(ctx)
	_ = p.cluster.Close()
	p.removeDir()
}

func (p *demoProviders) removeDir() {
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

// freeOr returns addr if it can be bound now, else a free loopback port, so
// the demo starts even when 8080 is taken (movedAddrs says so).
func freeOr(addr string) string {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		ln.Close()
		return addr
	}
	return "127.0.0.1:0"
}

// demoAddr is a listener of the demo: the address asked for and the one
// it got.
type demoAddr struct{ what, want, got string }

// movedAddrs says of each listener that moved, because the port asked for
// was busy, where it went: a user who opens localhost:8080 must not find
// another program there unawares. One asked for with port 0 moved nowhere.
func movedAddrs(addrs ...demoAddr) []string {
	var out []string
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a.want); err == nil && port == "0" || a.want == a.got {
			continue
		}
		out = append(out, fmt.Sprintf("%s is busy: %s listens on %s instead", a.want, a.what, a.got))
	}
	return out
}

// demoDriver is the simulated client traffic: streaming chat requests, read
// to the end, one after another per worker, until ctx ends; the counts are
// over every model.
type demoDriver struct {
	url    string
	client *http.Client
	ok     atomic.Int64
	failed atomic.Int64
}

// start runs workers clients on the story's model and a quarter as many
// on the hosts pool's (enough for its table rows, without slowing the
// story), each counted in wg, until ctx ends.
func (d *demoDriver) start(ctx context.Context, wg *sync.WaitGroup, workers int) {
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); d.loop(ctx, demoModel) }()
	}
	for i := 0; i < max(workers/4, 1); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); d.loop(ctx, demoHostsModel) }()
	}
}

func (d *demoDriver) loop(ctx context.Context, model string) {
	body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"Say something quick."}]}`
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				d.failed.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			d.ok.Add(1)
		} else if ctx.Err() == nil {
			d.failed.Add(1)
			time.Sleep(100 * time.Millisecond) // a broken set-up must not spin
		}
	}
}

// sumBy sums a counter family from the registry by one label, keeping only
// series whose labels match where.
func sumBy(reg *prometheus.Registry, family, by string, where map[string]string) map[string]float64 {
	out := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			for k, v := range where {
				if labels[k] != v {
					continue series
				}
			}
			out[labels[by]] += m.GetCounter().GetValue()
		}
	}
	return out
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
