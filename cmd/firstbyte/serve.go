package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func defaultConfigPath() string {
	if p := os.Getenv("FIRSTBYTE_CONFIG"); p != "" {
		return p
	}
	return "firstbyte.yaml"
}

// cmdServe runs the gateway until SIGINT or SIGTERM, then drains: /readyz
// turns 503 at once, in-flight requests get up to 30 s to finish.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	cfg, _, code := configFromFlags("serve", args, stderr)
	if cfg == nil {
		return code
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s, err := startStack(ctx, cfg, stackOptions{Logger: logger})
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte: %v\n", err)
		return 1
	}
	logger.Info("firstbyte serving", "api", s.APIAddr, "admin", s.AdminAddr, "strategy", cfg.Strategy.Mode,
		"models", len(s.Gateway.Models()), "exporting", s.SDK.Exporting, "instance", s.SDK.InstanceID)
	<-ctx.Done()
	logger.Info("firstbyte draining")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(shutdownCtx); err != nil {
		logger.Error("shutdown", "err", err)
		return 1
	}
	return 0
}
