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

// cmdServe runs the gateway until SIGTERM or SIGINT, then drains (see
// drain.go) and exits 0; a second such signal hurries the drain and exits
// 1. SIGHUP reloads the config file.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	cfg, path, code := configFromFlags("serve", args, stderr)
	if cfg == nil {
		return code
	}
	defer startHeapFloor(os.Getenv)()
	level := new(slog.LevelVar)
	logger := newLogger(stderr, cfg.Log, level)
	// Signals are taken before anything listens: a SIGHUP during start-up
	// must not kill the process (the default action).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	// Memory is given back once the gateway is idle (memtrim.go).
	trim := newMemTrim()
	go trim.run(time.Second, time.Now)
	defer trim.close()
	s, err := startStack(context.Background(), cfg, stackOptions{Logger: logger, Level: level, ConfigPath: path, Trim: trim})
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte: %v\n", err)
		return 1
	}
	logStartup(logger, s, cfg, os.Getenv)
	logConfigWarnings(logger, cfg)

	for sig := range sigs {
		if sig == syscall.SIGHUP {
			s.reload("SIGHUP")
			continue
		}
		logger.Info("signal received", "signal", sig.String())
		break
	}

	// A second SIGTERM or SIGINT hurries the drain; SIGHUP is ignored now.
	force, hurry := context.WithCancel(context.Background())
	defer hurry()
	watched := make(chan struct{})
	go func() { // owned here: ends when the drain is done
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGHUP {
					logger.Warn("reload ignored: the gateway is shutting down")
					continue
				}
				logger.Warn("second signal: ending the drain now", "signal", sig.String())
				hurry()
				return
			case <-watched:
				return
			}
		}
	}()
	forced, err := s.Drain(force)
	close(watched)
	if err != nil {
		logger.Warn("shutdown", "err", err)
	}
	if forced {
		return 1
	}
	return 0
}
