package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"
)

// shutdownGrace is how long Run lets in-flight answers finish before cutting them.
const shutdownGrace = 5 * time.Second

// closeWait bounds how long Close waits for handlers to notice their cancelled
// contexts; they select on them in every wait, so this is only a safety net.
const closeWait = 5 * time.Second

// Running is one simulated provider listening on a loopback port. Its Server's
// counters and recorded request are reachable through the embedded *Server.
type Running struct {
	*Server
	srv    *http.Server
	url    string
	served chan struct{} // closed when Serve has returned
}

// StartProvider validates p and serves it on p.Listen (default 127.0.0.1:0, a free
// port) until Close.
func StartProvider(p Provider, opts Options) (*Running, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return startServer(context.Background(), NewProvider(p, opts), p.listen())
}

func startServer(ctx context.Context, s *Server, addr string) (*Running, error) {
	ln, err := listenLoopback(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", s.name, err)
	}
	r := &Running{
		Server: s,
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			// Aborted streams (cut_after) and vanished clients are the point of a
			// simulator, not news: keep them out of the log.
			ErrorLog: log.New(io.Discard, "", 0),
		},
		url:    s.protocols.scheme() + "://" + ln.Addr().String() + "/v1",
		served: make(chan struct{}),
	}
	s.protocols.apply(r.srv)
	r.srv.ConnState = s.connState
	go func() {
		defer close(r.served)
		if r.srv.TLSConfig != nil {
			r.srv.ServeTLS(ln, "", "")
			return
		}
		r.srv.Serve(ln)
	}()
	return r, nil
}

// listenLoopback binds addr and refuses the result unless it is a loopback address,
// whatever the address resolved to: the one place that keeps the simulator off the
// network.
func listenLoopback(ctx context.Context, addr string) (net.Listener, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("%q bound to %v, which is not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

// URL is the provider's API base, "http://127.0.0.1:PORT/v1" (https with TLS): what a gateway config
// puts in base_url.
func (r *Running) URL() string { return r.url }

// Addr is the host:port the provider listens on.
func (r *Running) Addr() string {
	return strings.TrimSuffix(strings.TrimPrefix(r.url, r.protocols.scheme()+"://"), "/v1")
}

// Close stops listening, breaks every open connection (so in-flight handlers see
// their contexts cancelled) and waits for the handlers to return.
func (r *Running) Close() error {
	err := r.srv.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil // closed already, by Shutdown
	}
	<-r.served
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if werr := r.Server.WaitIdle(ctx); werr != nil {
		err = errors.Join(err, fmt.Errorf("provider %s: handlers still running after %v", r.name, closeWait))
	}
	return err
}

// Shutdown stops listening and lets in-flight answers finish until ctx is done, then
// closes what is left.
func (r *Running) Shutdown(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	if ctx.Err() != nil {
		err = nil // what did not finish in time is cut by Close, as documented
	}
	return errors.Join(err, r.Close())
}

// Cluster is every provider of a Config, each on its own listener.
type Cluster struct {
	// Immutable after Start.
	running []*Running
	byName  map[string]*Running
}

// Start validates cfg and starts every provider; ctx bounds the start only. On error
// the providers already started are closed.
func Start(ctx context.Context, cfg *Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	seed := cfg.Seed
	for seed == 0 {
		seed = rand.Uint64()
	}
	c := &Cluster{byName: map[string]*Running{}}
	for i, p := range cfg.Providers {
		// One stream per provider, so one provider's traffic does not shift another's
		// draws.
		opts := Options{Rand: rand.New(rand.NewPCG(seed, uint64(i))), Protocols: cfg.Protocols}
		r, err := startServer(ctx, NewProvider(p, opts), p.listen())
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		c.running = append(c.running, r)
		c.byName[p.Name] = r
	}
	return c, nil
}

// URL is the named provider's API base ("http://127.0.0.1:PORT/v1"), or "" if the
// cluster has no such provider.
func (c *Cluster) URL(name string) string {
	if r := c.byName[name]; r != nil {
		return r.URL()
	}
	return ""
}

// Provider is the named running provider, or nil.
func (c *Cluster) Provider(name string) *Running { return c.byName[name] }

// Providers are the running providers in config order.
func (c *Cluster) Providers() []*Running { return append([]*Running(nil), c.running...) }

// Close closes every provider; see Running.Close.
func (c *Cluster) Close() error {
	var errs []error
	for _, r := range c.running {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// Shutdown shuts every provider down gracefully; see Running.Shutdown.
func (c *Cluster) Shutdown(ctx context.Context) error {
	errs := make(chan error, len(c.running))
	for _, r := range c.running {
		go func() { errs <- r.Shutdown(ctx) }()
	}
	var all []error
	for range c.running {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// Run is `firstbyte sim`: it starts cfg's providers, writes one line per provider
// with its URL to out, serves until ctx is done and then shuts down, letting answers
// in flight finish for a few seconds.
func Run(ctx context.Context, cfg *Config, out io.Writer) error {
	c, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	for i, r := range c.running {
		fmt.Fprintf(out, "%-12s %s  %s\n", r.name, r.URL(), describe(&cfg.Providers[i]))
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return c.Shutdown(sctx)
}

// describe is a one-line summary of a provider's behaviour for Run's listing.
func describe(p *Provider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ttfb %v", p.TTFB.Median)
	if p.TTFB.Spread > 0 {
		fmt.Fprintf(&b, " (spread %g)", p.TTFB.Spread)
	}
	fmt.Fprintf(&b, ", %d chunks every %v", p.Stream.chunks(), p.Stream.Interval)
	if p.Errors.Rate > 0 {
		fmt.Fprintf(&b, ", %g%% errors (%d)", p.Errors.Rate*100, p.Errors.status())
	}
	if l := p.RateLimit; l != nil {
		if l.Requests > 0 {
			fmt.Fprintf(&b, ", %d requests", l.Requests)
		}
		if l.Tokens > 0 {
			fmt.Fprintf(&b, ", %d tokens", l.Tokens)
		}
		fmt.Fprintf(&b, " per %v", l.window())
	}
	if n := len(p.Phases); n > 0 {
		fmt.Fprintf(&b, ", %d phase(s) from %v", n, p.Phases[0].After)
	}
	switch {
	case p.StatusBody != nil:
		fmt.Fprintf(&b, ", always %d", p.StatusBody.Status)
	case p.ContextOverflow:
		b.WriteString(", always context overflow")
	}
	if p.CutAfter > 0 {
		fmt.Fprintf(&b, ", cut after %d chunks", p.CutAfter)
	}
	if p.ParallelToolCalls {
		b.WriteString(", parallel tool calls")
	}
	return b.String()
}
