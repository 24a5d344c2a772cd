package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The demo's story: three providers serve one model at clearly different
// speeds (two speak the OpenAI API, claude-sim the Anthropic API: the
// clients' chat completions reach it translated); the gateway learns who is fastest from its own spans and sends
// nine requests in ten there. At 0:30 the fastest one degrades (slow and
// failing), failovers appear and the lead moves; at 1:00 it recovers, and
// exploration (one request in ten) re-measures it until it wins the lead
// back, about half a minute later.
const demoModel = "llama-3.3-70b"

const demoSimConfig = `
seed: 7
providers:
  - name: groq-sim
    ttfb: {median: 150ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
    phases:
      - after: 30s
        ttfb: {median: 900ms}
        errors: {rate: 0.25, status: 503}
      - after: 60s
        ttfb: {median: 150ms}
        errors: {rate: 0}
  - name: together-sim
    ttfb: {median: 350ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
  - name: claude-sim
    ttfb: {median: 600ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
`

// demoGatewayConfig maps the one client model onto each simulated provider
// under the provider's own model name, as a real multi-provider set-up does.
func demoGatewayConfig(listen, admin string, urls map[string]string) string {
	return fmt.Sprintf(`
listen: %s
admin: {listen: %s}
strategy: {mode: least-latency}
providers:
  groq-sim:     {kind: openai, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}, circuit_breaker: {failures: 20, cooldown: 5s}}
  together-sim: {kind: openai, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}}
  claude-sim:   {kind: anthropic, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}}
targets:
  - {virtual_key: groq-sim,     model_map: {%[6]s: llama-3.3-70b-versatile}}
  - {virtual_key: together-sim, model_map: {%[6]s: meta-llama/Llama-3.3-70B-Instruct-Turbo}}
  - {virtual_key: claude-sim,   model_map: {%[6]s: claude-haiku-4-5}}
`, listen, admin, urls["groq-sim"], urls["together-sim"], urls["claude-sim"], demoModel)
}

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Minute, "stop after this long (Ctrl-C stops sooner)")
	listen := fs.String("listen", "127.0.0.1:8080", "client API address (a free port is used if taken)")
	admin := fs.String("admin", "127.0.0.1:9464", "admin address: /metrics, /debug/routing (a free port is used if taken)")
	workers := fs.Int("workers", 8, "concurrent simulated clients")
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

	simCfg, err := sim.ParseConfig([]byte(demoSimConfig))
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte demo: %v\n", err)
		return 1
	}
	cluster, err := sim.Start(ctx, simCfg)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte demo: %v\n", err)
		return 1
	}
	defer cluster.Close()
	urls := map[string]string{}
	for _, p := range simCfg.Providers {
		urls[p.Name] = cluster.URL(p.Name)
	}
	cfg, err := config.Parse([]byte(demoGatewayConfig(freeOr(*listen), freeOr(*admin), urls)), os.LookupEnv)
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

	d := &demoDriver{url: "http://" + s.APIAddr + "/v1/chat/completions", client: &http.Client{Timeout: 30 * time.Second}}
	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); d.loop(ctx) }()
	}

	start := time.Now()
	tty := isTerminal(stdout)
	interval := time.Second
	if !tty {
		interval = 5 * time.Second
	}
	view := newDemoView(demoRecent)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// The first frame goes out at once (the table fills in as the gateway
	// learns), the last one when the demo stops.
	draw := func() {
		now := time.Now()
		f := view.frame(now.Sub(start), s.current().Routing(), gatherDemoCounts(s.Registry), d)
		f.Elapsed, f.Total, f.API, f.Admin = now.Sub(start), *duration, s.APIAddr, s.AdminAddr
		_, _ = io.WriteString(stdout, renderDemoFrame(f, tty))
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
	wg.Wait()
	fmt.Fprintf(stdout, "\ndemo stopped after %s: %d requests, %d failed.\n", time.Since(start).Round(time.Second), d.ok.Load()+d.failed.Load(), d.failed.Load())
	return 0
}

// freeOr returns addr if it can be bound now, else a free loopback port, so
// the demo starts even when 8080 is taken.
func freeOr(addr string) string {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		ln.Close()
		return addr
	}
	return "127.0.0.1:0"
}

// demoDriver is the simulated client traffic: streaming chat requests, read
// to the end, one after another per worker, until ctx ends.
type demoDriver struct {
	url    string
	client *http.Client
	ok     atomic.Int64
	failed atomic.Int64
}

func (d *demoDriver) loop(ctx context.Context) {
	body := `{"model":"` + demoModel + `","stream":true,"messages":[{"role":"user","content":"Say something quick."}]}`
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
