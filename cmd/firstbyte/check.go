package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router"
)

// cmdCheck validates a config: exit 0 with a one-screen summary, or exit 1
// with every error as "field.path: message".
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	cfg, path, code := configFromFlags("check", args, stderr)
	if cfg == nil {
		return code
	}
	fmt.Fprintf(stdout, "%s: ok\n", path)
	fmt.Fprintf(stdout, "  listen %s, admin %s, strategy %s\n", cfg.Listen, cfg.Admin.Listen, cfg.Strategy.Mode)
	names := make([]string, 0, len(cfg.Providers))
	for n := range cfg.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := cfg.Providers[n]
		fmt.Fprintf(stdout, "  provider %-12s %-9s %s\n", n, p.Kind, p.BaseURL)
	}
	models := map[string][]string{}
	for _, t := range cfg.Targets {
		for _, m := range cfg.Providers[t.VirtualKey].Models {
			if _, mapped := t.ModelMap[m]; !mapped {
				models[m] = append(models[m], t.VirtualKey+"→"+m)
			}
		}
		for m, up := range t.ModelMap {
			models[m] = append(models[m], t.VirtualKey+"→"+up)
		}
	}
	ms := make([]string, 0, len(models))
	for m := range models {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	for _, m := range ms {
		fmt.Fprintf(stdout, "  model %-20s %s\n", m, strings.Join(models[m], ", "))
	}
	return 0
}

// configFromFlags parses a command's -config flag and loads and validates
// that file; on failure it has printed why and returns the exit code.
func configFromFlags(cmd string, args []string, stderr io.Writer) (*router.Config, string, int) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", defaultConfigPath(), "config file")
	if err := fs.Parse(args); err != nil {
		return nil, *path, 2
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		printConfigError(stderr, *path, err)
		return nil, *path, 1
	}
	return cfg, *path, 0
}

func loadConfig(path string) (*router.Config, error) {
	cfg, err := router.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func printConfigError(w io.Writer, path string, err error) {
	var fes router.FieldErrors
	if errors.As(err, &fes) {
		fmt.Fprintf(w, "%s: %d error(s)\n", path, len(fes))
		for _, fe := range fes {
			fmt.Fprintf(w, "%s\n", fe.Error())
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", path, err)
}
