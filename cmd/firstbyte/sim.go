package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// cmdSim runs simulated providers from a sim config until SIGINT/SIGTERM.
func cmdSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "sim config file (see examples/sim.yaml)")
	caOut := fs.String("tls", "", "serve HTTPS (HTTP/2 by ALPN) with a generated certificate, its PEM written to this `file` (a gateway's tls.ca_file)")
	h2c := fs.Bool("h2c", false, "serve unencrypted HTTP/2 with prior knowledge beside HTTP/1.1 (a gateway's http2: prior_knowledge)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "firstbyte sim: -config FILE is required (see examples/sim.yaml)")
		return 2
	}
	if *caOut != "" && *h2c {
		fmt.Fprintln(stderr, "firstbyte sim: -tls and -h2c exclude each other (-tls already offers HTTP/2)")
		return 2
	}
	cfg, err := sim.LoadConfig(*path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *path, err)
		return 1
	}
	cfg.Protocols.H2C = *h2c
	if *caOut != "" {
		if err := simCertificate(&cfg.Protocols, *caOut); err != nil {
			fmt.Fprintf(stderr, "firstbyte sim: -tls: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sim.Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "firstbyte sim: %v\n", err)
		return 1
	}
	return 0
}

// simCertificate makes the simulator's certificate and writes its PEM to
// path, for the gateway's tls.ca_file.
func simCertificate(p *sim.Protocols, path string) error {
	cert, pem, err := sim.NewCertificate(time.Now())
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, pem, 0o644); err != nil {
		return err
	}
	p.TLS = &cert
	return nil
}
