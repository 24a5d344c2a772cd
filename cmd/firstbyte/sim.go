package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// cmdSim runs simulated providers from a sim config until SIGINT/SIGTERM.
func cmdSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "sim config file (see examples/sim.yaml)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "firstbyte sim: -config FILE is required (see examples/sim.yaml)")
		return 2
	}
	cfg, err := sim.LoadConfig(*path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *path, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sim.Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "firstbyte sim: %v\n", err)
		return 1
	}
	return 0
}
