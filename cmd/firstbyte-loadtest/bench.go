package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// bench is what measure runs against: the in-process upstream and OTLP
// sink, the baseline and gateway subprocesses, and the three arms that
// reach the upstream (directly, through the baseline, through the gateway).
type bench struct {
	up       *upstream
	sink     *otlpSink
	children []*child
	arms     []*arm   // direct, baseline, gateway
	stops    []func() // run last first by stop
}

// startBench starts the upstream, the sink, the baseline (self re-executed)
// and the gateway, and waits until both proxies answer. On an error what
// was started is stopped.
func startBench(ctx context.Context, p plan, self, gatewayBin string, logf func(string, ...any)) (_ *bench, err error) {
	b := &bench{}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()

	// In-process: the upstream and the OTLP sink.
	b.up = newUpstream()
	upURL, stopUp, err := serveLoopback(b.up)
	if err != nil {
		return nil, err
	}
	b.stops = append(b.stops, stopUp)
	b.sink = &otlpSink{}
	sinkURL, stopSink, err := serveLoopback(b.sink)
	if err != nil {
		return nil, err
	}
	b.stops = append(b.stops, stopSink, func() {
		for _, c := range b.children {
			c.stop()
		}
	})

	// Subprocesses: the baseline and the gateway.
	baseAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	base, err := startChild(armBaseline, []string{self, "-serve-baseline", baseAddr, "-upstream", upURL}, childEnv())
	if err != nil {
		return nil, err
	}
	b.children = append(b.children, base)
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
	b.stops = append(b.stops, removeCfg)
	gw, err := startChild(armGateway, []string{gatewayBin, "serve", "-config", cfgPath}, childEnv())
	if err != nil {
		return nil, err
	}
	b.children = append(b.children, gw)
	if err := waitReady(ctx, base, "http://"+baseAddr+"/", 0); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, gw, "http://"+adminAddr+"/readyz", http.StatusOK); err != nil {
		return nil, err
	}
	logf("upstream %s, baseline %s (pid %d), gateway %s (pid %d), otlp sink %s", upURL, baseAddr, base.pid(), apiAddr, gw.pid(), sinkURL)

	b.arms = []*arm{
		{name: armDirect, client: newLoadClient(), body: requestBody,
			url: func(m string) string { return upURL + "/" + m + "/v1/chat/completions" }},
		{name: armBaseline, client: newLoadClient(), body: requestBody, pid: base.pid(),
			url: func(m string) string { return "http://" + baseAddr + "/" + m + "/v1/chat/completions" }},
		{name: armGateway, client: newLoadClient(), body: requestBody, pid: gw.pid(),
			url: func(string) string { return "http://" + apiAddr + "/v1/chat/completions" }},
	}
	return b, nil
}

// stop stops what startBench started, last first: the config file, the
// subprocesses, the sink, the upstream.
func (b *bench) stop() {
	for i := len(b.stops) - 1; i >= 0; i-- {
		b.stops[i]()
	}
}

// check is an error once ctx is done or a subprocess has exited.
func (b *bench) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, c := range b.children {
		if err := c.exited(); err != nil {
			return err
		}
	}
	return nil
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
