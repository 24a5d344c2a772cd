package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// cmdCheck validates a config: exit 0 with a one-screen summary on stdout,
// or exit 1 with every error as "field.path: message" on stderr. Warnings
// (config.Warnings: accepted, but every request would fail) go to stderr
// as "warning: field.path: message" either way, and alone they do not
// change the exit code. Nothing it prints ever shows a secret (provider
// keys, client keys, tokens).
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	path, code, ok := configFlag("check", args, stderr)
	if !ok {
		return code
	}
	cfg, err := config.Load(path)
	if err != nil {
		printConfigError(stderr, path, err)
		return 1
	}
	verr := cfg.Validate()
	warnings := cfg.Warnings()
	if verr != nil {
		printConfigError(stderr, path, verr)
		printWarnings(stderr, warnings)
		return 1
	}
	printWarnings(stderr, warnings)
	writeSummary(stdout, path, cfg, len(warnings), os.Getenv)
	return 0
}

// printWarnings writes one "warning: field.path: message" line per
// warning.
func printWarnings(w io.Writer, warnings config.FieldErrors) {
	for _, fe := range warnings {
		fmt.Fprintf(w, "warning: %s\n", fe.Error())
	}
}

// logConfigWarnings logs cfg's warnings, one line each, as serve starts.
func logConfigWarnings(log *slog.Logger, cfg *config.Config) {
	for _, fe := range cfg.Warnings() {
		log.Warn("config warning", "field", fe.Path, "warning", fe.Msg)
	}
}

// summaryRows caps the provider and model lines so the summary stays on
// one screen; the rest are counted.
const summaryRows = 12

// writeSummary prints what the gateway will do with cfg; warnings is how
// many warnings were printed apart. getenv supplies the OTLP environment
// the exporter would read.
func writeSummary(w io.Writer, path string, cfg *config.Config, warnings int, getenv func(string) string) {
	if warnings > 0 {
		fmt.Fprintf(w, "%s: ok, with %d warning%s (on stderr)\n", path, warnings, plural(warnings))
	} else {
		fmt.Fprintf(w, "%s: ok\n", path)
	}
	auth := "no client auth: anyone who reaches it may use it"
	if n := len(cfg.Auth.Keys); n > 0 {
		auth = fmt.Sprintf("auth: %d client key%s", n, plural(n))
	}
	fmt.Fprintf(w, "  listen     %s (%s)\n", cfg.Listen, auth)
	token := "no admin token: /debug/routing and /admin/reload are open"
	if cfg.Admin.Token != "" {
		token = "admin token set"
	}
	fmt.Fprintf(w, "  admin      %s (%s)\n", cfg.Admin.Listen, token)
	fmt.Fprintf(w, "  mode       %s\n", cfg.Strategy.Mode)
	writeRoutes(w, cfg)
	l := cfg.Limits
	fmt.Fprintf(w, "  limits     max_body %s, max_response %s, max_buffered %s, max_connections %d, read_timeout %s, idle_timeout %s\n",
		l.MaxBody, l.MaxResponse, l.MaxBuffered, l.MaxConnections, config.FormatDuration(l.ReadTimeout), config.FormatDuration(l.IdleTimeout))
	fmt.Fprintf(w, "  shutdown   delay %s, grace %s\n", config.FormatDuration(cfg.Shutdown.Delay), config.FormatDuration(cfg.Shutdown.Grace))
	fmt.Fprintf(w, "  log        level %s, format %s, requests %s\n", cfg.Log.Level, cfg.Log.Format, onOff(cfg.Log.LogRequests()))
	fmt.Fprintf(w, "  telemetry  service %s; export %s; %s\n", cfg.Telemetry.ServiceName, exportSummary(cfg, getenv), ingestSummary(cfg))

	names := slices.Sorted(maps.Keys(cfg.Providers))
	for i, n := range names {
		if i == summaryRows {
			fmt.Fprintf(w, "  … and %d more providers\n", len(names)-i)
			break
		}
		p := cfg.Providers[n]
		pricing := "no pricing"
		if k := len(p.Pricing); k > 0 {
			pricing = fmt.Sprintf("pricing for %d model%s", k, plural(k))
		}
		fmt.Fprintf(w, "  provider %-12s %-9s %s (%s)\n", n, p.Kind, redactURL(p.BaseURL), pricing)
		fmt.Fprintf(w, "           %s\n", providerLimits(p))
	}

	ms, models := modelRoutes(cfg)
	for i, m := range ms {
		if i == summaryRows {
			fmt.Fprintf(w, "  … and %d more models\n", len(ms)-i)
			break
		}
		fmt.Fprintf(w, "  model %-20s %s\n", m, strings.Join(models[m], ", "))
	}
}

// providerLimits is what bounds one attempt on p and how its breaker
// trips, defaults applied.
func providerLimits(p *config.Provider) string {
	concurrency := "max_concurrency unlimited"
	if p.MaxConcurrency > 0 {
		concurrency = fmt.Sprintf("max_concurrency %d, queue %d", p.MaxConcurrency, p.Queue)
	}
	cb := p.CircuitBreaker
	return fmt.Sprintf("timeout first_byte %s, total %s; %s; breaker opens after %d failure%s for %s",
		config.FormatDuration(p.Timeout.FirstByte), config.FormatDuration(p.Timeout.Total), concurrency,
		cb.Failures, plural(cb.Failures), config.FormatDuration(cb.Cooldown))
}

// modelRoutes lists the client models, sorted, and for each the targets
// serving it as "target→upstream model" (with "(retry N)" when the target
// retries), in declaration order.
func modelRoutes(cfg *config.Config) ([]string, map[string][]string) {
	models := map[string][]string{}
	for _, t := range cfg.Targets {
		retry := ""
		if n := t.Retry.Attempts; n > 0 {
			retry = fmt.Sprintf(" (retry %d)", n)
		}
		for m, up := range t.Routes(cfg.Providers[t.VirtualKey]) {
			models[m] = append(models[m], t.VirtualKey+"→"+up+retry)
		}
	}
	return slices.Sorted(maps.Keys(models)), models
}

// exportSummary says where spans go, the way the exporter decides it: the
// config's otlp_endpoint, else the OTLP environment, else nowhere.
func exportSummary(cfg *config.Config, getenv func(string) string) string {
	if e := cfg.Telemetry.OTLPEndpoint; e != "" {
		return "to " + redactURL(e)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if e := getenv(k); e != "" {
			return "to " + redactURL(e) + " (" + k + ")"
		}
	}
	return "off (no otlp_endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)"
}

func ingestSummary(cfg *config.Config) string {
	in := cfg.Telemetry.Ingest
	if !in.Enabled {
		return "ingest off"
	}
	s := "ingest on (no token; admin is loopback)"
	if in.Token != "" {
		s = "ingest on (token set)"
	}
	f := in.Foreign
	if !f.Enabled {
		return s + ", foreign off"
	}
	services := "every service"
	if len(f.Services) > 0 {
		services = strings.Join(f.Services, ", ")
	}
	s += ", foreign on from " + services
	if len(f.UnaryServices) > 0 {
		s += " (unary: " + strings.Join(f.UnaryServices, ", ") + ")"
	}
	return s
}

// redactURL drops what may carry a credential (user:password@, the query)
// from a URL before it is printed.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	if u.RawQuery != "" {
		u.RawQuery = "redacted"
	}
	return u.String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// configFromFlags parses a command's -config flag and loads and validates
// that file; on failure it has printed why and returns the exit code.
func configFromFlags(cmd string, args []string, stderr io.Writer) (*config.Config, string, int) {
	path, code, ok := configFlag(cmd, args, stderr)
	if !ok {
		return nil, path, code
	}
	cfg, err := loadConfig(path)
	if err != nil {
		printConfigError(stderr, path, err)
		return nil, path, 1
	}
	return cfg, path, 0
}

// configFlag parses a command's flags, -config alone; on failure it has
// printed why and returns exit code 2.
func configFlag(cmd string, args []string, stderr io.Writer) (path string, code int, ok bool) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := fs.String("config", defaultConfigPath(), "config file")
	if err := fs.Parse(args); err != nil {
		return *p, 2, false
	}
	return *p, 0, true
}

func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// printConfigError writes "PATH: N error(s)" and then one line per error,
// in the order Validate gives (file order).
func printConfigError(w io.Writer, path string, err error) {
	var fes config.FieldErrors
	if errors.As(err, &fes) {
		fmt.Fprintf(w, "%s: %d error(s)\n", path, len(fes))
	}
	for _, line := range errorLines(path, err) {
		fmt.Fprintln(w, line)
	}
}
