package main

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/firstbyte-dev/firstbyte/router"
)

// Reload (SIGHUP, or POST /admin/reload) reads the file serve was started
// with again. A file that fails check, or that changes what only a
// restart can change, is refused whole: its errors are logged and
// returned, and the running config keeps serving. A good one is swapped in
// whole: a new gateway (auth keys, providers, targets, strategy,
// limits.max_body, max_response and max_buffered, log.requests) takes the
// next request while requests in flight finish on the old one, sharing
// the budget of held unary answers with it (the new limit applies to
// both); the tracker is the same one, forgetting only the (target,
// upstream model) pairs no longer configured; providers whose config did
// not change keep their circuit breaker and concurrency slots;
// admin.token, shutdown.*, log.level and telemetry.ingest.foreign (the
// aggregator's rules, teachAggregator) apply at once.

// reload runs one reload from source ("SIGHUP", "admin"). It returns the
// top-level keys that changed, or, when refused, every reason as
// "field.path: message".
func (s *stack) reload(source string) (changed, refused []string) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.config()
	changed, refused = s.applyReload()
	if refused != nil {
		s.reloads.WithLabelValues("refused").Inc()
		s.log.Warn("config reload refused; the running config keeps serving",
			"source", source, "file", s.configPath, "errors", len(refused), "reasons", strings.Join(refused, "; "))
		return nil, refused
	}
	s.reloads.WithLabelValues("ok").Inc()
	cfg := s.config()
	what := strings.Join(changed, ",")
	if what == "" {
		what = "nothing"
	}
	s.log.Info("config reloaded", "source", source, "file", s.configPath, "changed", what,
		"mode", cfg.Strategy.Mode, "models", len(s.current().Models()), "targets", len(cfg.Targets),
		"providers_kept_state", keptProviders(old, cfg))
	return changed, nil
}

// applyReload does the reload under reloadMu.
func (s *stack) applyReload() (changed, refused []string) {
	if s.draining.Load() {
		return nil, []string{"the gateway is shutting down"}
	}
	if s.configPath == "" {
		return nil, []string{"this gateway was not started from a config file"}
	}
	cfg, err := loadConfig(s.configPath)
	if err != nil {
		return nil, errorLines(s.configPath, err)
	}
	old := s.config()
	if fes := restartOnly(old, cfg); len(fes) > 0 {
		return nil, errorLines(s.configPath, fes)
	}
	gw, err := router.New(cfg, s.gatewayOptions(cfg, s.current()))
	if err != nil {
		return nil, errorLines(s.configPath, err)
	}
	// The aggregator first: the new gateway's first attempts may be on
	// targets it has not heard of yet.
	s.teachAggregator(cfg, gw)
	s.cfg.Store(cfg)
	s.gw.Store(gw)
	// Samples of pairs that remain are kept; an in-flight request on the
	// old gateway may still add one to a removed pair, which then only
	// ages out (nothing reads it).
	s.Tracker.Retain(gw.Serves)
	if s.level != nil {
		s.level.Set(cfg.Log.SlogLevel())
	}
	return changedKeys(old, cfg), nil
}

// restartOnly lists what the file changes that a running process cannot:
// the fields tagged reload:"restart" in config.Config (the listeners'
// addresses and limits, whose sockets and servers are the ones it started
// with; the log format; the telemetry set-up, whose SDK, exporter and
// ingest endpoint are built once). Values are named only where they cannot
// be secrets.
func restartOnly(old, cfg *config.Config) config.FieldErrors {
	var fes config.FieldErrors
	for _, ch := range config.RestartChanges(old, cfg) {
		msg := "a reload cannot change it; restart to apply it"
		if !ch.Hidden {
			msg = fmt.Sprintf("a reload cannot change it (running with %v, the file says %v); restart to apply it", ch.Was, ch.Now)
		}
		fes = append(fes, config.FieldError{Path: ch.Path, Msg: msg})
	}
	return fes
}

// errorLines is err as "field.path: message" lines, the way check prints
// them.
func errorLines(path string, err error) []string {
	var fes config.FieldErrors
	if errors.As(err, &fes) {
		lines := make([]string, len(fes))
		for i, fe := range fes {
			lines[i] = fe.Error()
		}
		return lines
	}
	return []string{fmt.Sprintf("%s: %v", path, err)}
}

// changedKeys names the top-level keys whose values differ, and for
// providers each one added, removed or changed ("providers.groq"). Only
// names: a value may be a secret.
func changedKeys(old, cfg *config.Config) []string {
	var out []string
	ov, nv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cfg).Elem()
	t := ov.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || reflect.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "providers" {
			out = append(out, name)
			continue
		}
		names := slices.Sorted(maps.Keys(old.Providers))
		for n := range cfg.Providers {
			if old.Providers[n] == nil {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			if !reflect.DeepEqual(old.Providers[n], cfg.Providers[n]) {
				out = append(out, "providers."+n)
			}
		}
	}
	return out
}

// keptProviders counts the providers a reload left unchanged, whose
// breaker and slots carry over.
func keptProviders(old, cfg *config.Config) int {
	n := 0
	for name, p := range cfg.Providers {
		if reflect.DeepEqual(old.Providers[name], p) {
			n++
		}
	}
	return n
}
