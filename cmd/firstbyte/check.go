package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// cmdCheck validates a config: exit 0 with a one-screen summary on stdout,
// or exit 1 with every error as "field.path: message" on stderr. Neither
// ever shows a secret (provider keys, client keys, tokens).
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	cfg, path, code := configFromFlags("check", args, stderr)
	if cfg == nil {
		return code
	}
	writeSummary(stdout, path, cfg, os.Getenv)
	return 0
}

// summaryRows caps the provider and model lines so the summary stays on
// one screen; the rest are counted.
const summaryRows = 12

// writeSummary prints what the gateway will do with cfg. getenv supplies
// the OTLP environment the exporter would read.
func writeSummary(w io.Writer, path string, cfg *config.Config, getenv func(string) string) {
	fmt.Fprintf(w, "%s: ok\n", path)
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

// modelRoutes lists the client models, sorted, and for each the targets
// serving it as "target→upstream model", in declaration order.
func modelRoutes(cfg *config.Config) ([]string, map[string][]string) {
	models := map[string][]string{}
	for _, t := range cfg.Targets {
		for m, up := range t.Routes(cfg.Providers[t.VirtualKey]) {
			models[m] = append(models[m], t.VirtualKey+"→"+up)
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
