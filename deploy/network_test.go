package deploy

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/goccy/go-yaml"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The stack's network, read from the files each service runs with: who
// listens where (a gateway's listen and admin.listen, a simulator's
// providers, the collector's receivers, Prometheus's and Grafana's ports)
// and who talks to whom (provider base_urls, otlp_endpoint, the
// collector's exporters, scrape targets, datasource URLs, the traffic
// script's gateways). Each service is read by the rule for what it runs;
// a service no rule knows fails the test, so a new one gets checked too.

// Roles say what a listener serves, so that an address that reaches the
// wrong listener (OTLP/gRPC where OTLP/HTTP is expected, the API where
// /metrics is) is caught, not only a closed port.
const (
	roleAPI        = "gateway client API"
	roleAdmin      = "gateway admin (/metrics, /v1/traces)"
	roleProvider   = "simulated provider"
	roleOTLPHTTP   = "OTLP/HTTP receiver"
	roleOTLPGRPC   = "OTLP/gRPC receiver"
	rolePrometheus = "Prometheus HTTP API"
	roleGrafana    = "Grafana"
	roleTraceQuery = "Jaeger query API"
)

type listener struct {
	service string
	role    string
	host    string
	port    int
	source  string // where it was read
}

type edge struct {
	from   string // service
	addr   string // host:port as it is configured
	role   string // what must listen there
	source string
}

// network is what loadNetwork read, with the parsed files the other tests
// look at.
type network struct {
	listeners []listener
	edges     []edge
	gateways  map[string]*config.Config // by service, for firstbyte serve services
	collector *collectorConfig          // the otelcol service's merged config
	prom      *promConfig               // the prometheus service's config
	grafana   []datasource              // the grafana service's provisioned datasources
}

// loadNetwork reads every service's files. Problems reading them are
// test errors; what could be read is returned.
func loadNetwork(t *testing.T, s *stack) *network {
	t.Helper()
	n := &network{gateways: map[string]*config.Config{}}
	for _, name := range s.names() {
		sv := s.services[name]
		kind := kindOf(sv)
		read := readers[kind]
		if read == nil {
			t.Errorf("service %s (image %q, build %+v, command %v): no rule in network_test.go says what it listens on "+
				"and talks to; add one, so its addresses are checked too", name, sv.Image, sv.Build, sv.Command)
			continue
		}
		if err := read(n, name, sv); err != nil {
			t.Errorf("service %s (%s): %v", name, kind, err)
		}
	}
	return n
}

// kindOf names what a service runs.
func kindOf(sv service) string {
	switch {
	case sv.Build != nil && sv.Build.Target == "gateway" && len(sv.Command) > 0:
		return "firstbyte " + sv.Command[0]
	case sv.Build != nil && sv.Build.Target == "otelcol":
		return "firstbyte-otelcol"
	case strings.HasPrefix(sv.Image, "prom/prometheus:"):
		return "prometheus"
	case strings.HasPrefix(sv.Image, "grafana/grafana:"):
		return "grafana"
	case strings.HasPrefix(sv.Image, "cr.jaegertracing.io/jaegertracing/jaeger:"):
		return "jaeger"
	case strings.HasPrefix(sv.Image, "curlimages/curl:") && len(sv.Entrypoint) == 2 && sv.Entrypoint[0] == "/bin/sh":
		return "traffic script"
	}
	return "unknown"
}

var readers = map[string]func(n *network, name string, sv service) error{
	"firstbyte serve":   readGateway,
	"firstbyte sim":     readSim,
	"firstbyte-otelcol": readCollector,
	"prometheus":        readPrometheus,
	"grafana":           readGrafana,
	"jaeger":            readJaeger,
	"traffic script":    readTraffic,
}

// envLookup is the service's environment as the process sees it: only
// what compose sets (the images set nothing these configs read).
func envLookup(sv service) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := sv.Environment[k]
		return v, ok
	}
}

// mountedFile is the repository file a flag of the service's command
// names, through its bind mounts.
func mountedFile(sv service, containerPath string) (string, error) {
	p, ok := sv.hostPath(containerPath)
	if !ok {
		return "", fmt.Errorf("%s is not bind-mounted from the repository (volumes: %v)", containerPath, sv.Volumes)
	}
	if !exists(p) {
		return "", fmt.Errorf("%s is mounted from %s, which does not exist", containerPath, p)
	}
	return p, nil
}

func oneFlag(sv service, flag string) (string, error) {
	vs := flagValues(sv.args(), flag)
	if len(vs) != 1 {
		return "", fmt.Errorf("command %v: want one -%s, found %d", sv.args(), flag, len(vs))
	}
	return vs[0], nil
}

// urlAddr is host:port of a URL, with the scheme's default port.
func urlAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	switch u.Scheme {
	case "http":
		return u.Host + ":80", nil
	case "https":
		return u.Host + ":443", nil
	}
	return "", fmt.Errorf("%q: no port and scheme %q", raw, u.Scheme)
}

func (n *network) listen(name, role, addr, source string) error {
	h, p, err := hostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %v", source, err)
	}
	n.listeners = append(n.listeners, listener{service: name, role: role, host: h, port: p, source: source})
	return nil
}

func (n *network) talk(from, role, addr, source string) {
	n.edges = append(n.edges, edge{from: from, addr: addr, role: role, source: source})
}

// readGateway: firstbyte serve -config FILE, read by the gateway's own
// config loader with the service's environment.
func readGateway(n *network, name string, sv service) error {
	path, err := oneFlag(sv, "config")
	if err != nil {
		return err
	}
	file, err := mountedFile(sv, path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	cfg, err := config.Parse(data, envLookup(sv))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fmt.Errorf("%s, as the gateway reads it with this service's environment: %v", file, err)
	}
	n.gateways[name] = cfg
	if err := n.listen(name, roleAPI, cfg.Listen, file+": listen"); err != nil {
		return err
	}
	if err := n.listen(name, roleAdmin, cfg.Admin.Listen, file+": admin.listen"); err != nil {
		return err
	}
	pnames := make([]string, 0, len(cfg.Providers))
	for p := range cfg.Providers {
		pnames = append(pnames, p)
	}
	sort.Strings(pnames)
	for _, p := range pnames {
		addr, err := urlAddr(cfg.Providers[p].BaseURL)
		if err != nil {
			return fmt.Errorf("%s: providers.%s.base_url: %v", file, p, err)
		}
		n.talk(name, roleProvider, addr, fmt.Sprintf("%s: providers.%s.base_url", file, p))
	}
	if cfg.Telemetry.OTLPEndpoint == "" {
		return fmt.Errorf("%s: telemetry.otlp_endpoint is empty: the gateway's spans would reach neither the collector nor its peers", file)
	}
	addr, err := urlAddr(cfg.Telemetry.OTLPEndpoint)
	if err != nil {
		return fmt.Errorf("%s: telemetry.otlp_endpoint: %v", file, err)
	}
	n.talk(name, roleOTLPHTTP, addr, file+": telemetry.otlp_endpoint")
	return nil
}

// readSim: firstbyte sim -config FILE, read by the simulator's own parser.
func readSim(n *network, name string, sv service) error {
	path, err := oneFlag(sv, "config")
	if err != nil {
		return err
	}
	file, err := mountedFile(sv, path)
	if err != nil {
		return err
	}
	cfg, err := sim.LoadConfig(file)
	if err != nil {
		return fmt.Errorf("firstbyte sim's parser refuses it: %v", err)
	}
	for _, p := range cfg.Providers {
		if err := n.listen(name, roleProvider, p.Listen, fmt.Sprintf("%s: provider %s listen", file, p.Name)); err != nil {
			return err
		}
	}
	return nil
}

// collectorConfig is the collector's configuration after merging every
// --config file (maps merge, lists are replaced, as the collector does)
// and resolving ${env:VAR:-default} with the service's environment.
type collectorConfig struct {
	files []string
	tree  map[string]any
}

func (c *collectorConfig) get(path ...string) any {
	var v any = c.tree
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func (c *collectorConfig) str(path ...string) string {
	s, _ := c.get(path...).(string)
	return s
}

// pipelineExporters lists the traces pipeline's exporters.
func (c *collectorConfig) pipelineExporters() []string {
	var out []string
	list, _ := c.get("service", "pipelines", "traces", "exporters").([]any)
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

var collectorEnvRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// resolveCollectorEnv expands ${env:VAR:-default} as the collector does: a
// default applies only when the variable is unset.
func resolveCollectorEnv(v any, lookup func(string) (string, bool)) any {
	switch x := v.(type) {
	case string:
		return collectorEnvRE.ReplaceAllStringFunc(x, func(m string) string {
			sub := collectorEnvRE.FindStringSubmatch(m)
			if val, ok := lookup(sub[1]); ok {
				return val
			}
			return sub[2]
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveCollectorEnv(e, lookup)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = resolveCollectorEnv(e, lookup)
		}
		return out
	}
	return v
}

// mergeConfig merges over into base: maps recursively, anything else
// (lists included) replaced.
func mergeConfig(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = mergeConfig(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func loadCollectorConfig(files []string, lookup func(string) (string, bool)) (*collectorConfig, error) {
	c := &collectorConfig{files: files, tree: map[string]any{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		c.tree = mergeConfig(c.tree, m)
	}
	c.tree = resolveCollectorEnv(c.tree, lookup).(map[string]any)
	return c, nil
}

// collectorFiles are the repository files of the service's --config=file:
// URIs, in order.
func collectorFiles(sv service) ([]string, error) {
	uris := flagValues(sv.args(), "config")
	if len(uris) == 0 {
		return nil, fmt.Errorf("command %v has no --config: it would run the built-in single.yaml", sv.args())
	}
	var files []string
	for _, u := range uris {
		p, ok := strings.CutPrefix(u, "file:")
		if !ok {
			return nil, fmt.Errorf("--config=%s: only file: URIs are checked here", u)
		}
		f, err := mountedFile(sv, p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// readCollector: firstbyte-otelcol --config=file:A --config=file:B.
func readCollector(n *network, name string, sv service) error {
	files, err := collectorFiles(sv)
	if err != nil {
		return err
	}
	c, err := loadCollectorConfig(files, envLookup(sv))
	if err != nil {
		return err
	}
	n.collector = c
	src := strings.Join(files, " + ")
	for proto, role := range map[string]string{"grpc": roleOTLPGRPC, "http": roleOTLPHTTP} {
		if ep := c.str("receivers", "otlp", "protocols", proto, "endpoint"); ep != "" {
			if err := n.listen(name, role, ep, src+": receivers.otlp.protocols."+proto+".endpoint"); err != nil {
				return err
			}
		}
	}
	for _, e := range c.pipelineExporters() {
		typ, _, _ := strings.Cut(e, "/")
		at := src + ": exporters." + e
		switch typ {
		case "otlp_http", "otlphttp":
			// The gateways' admin POST /v1/traces.
			raw := c.str("exporters", e, "traces_endpoint")
			if raw == "" {
				return fmt.Errorf("%s has no traces_endpoint (the gateway takes spans on /v1/traces)", at)
			}
			if u, err := url.Parse(raw); err != nil || u.Path != "/v1/traces" {
				return fmt.Errorf("%s.traces_endpoint %q: want http://HOST:PORT/v1/traces", at, raw)
			}
			addr, err := urlAddr(raw)
			if err != nil {
				return fmt.Errorf("%s.traces_endpoint: %v", at, err)
			}
			n.talk(name, roleAdmin, addr, at+".traces_endpoint")
		case "otlp_grpc", "otlp":
			ep := c.str("exporters", e, "endpoint")
			if ep == "" {
				return fmt.Errorf("%s has no endpoint", at)
			}
			n.talk(name, roleOTLPGRPC, ep, at+".endpoint")
		case "debug":
		default:
			return fmt.Errorf("%s: exporter type %q is not one this test knows", at, typ)
		}
	}
	return nil
}

type promConfig struct {
	file   string
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
	} `yaml:"global"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

func readYAMLFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// readPrometheus: --config.file and --web.listen-address (Prometheus's
// default :9090 when absent).
func readPrometheus(n *network, name string, sv service) error {
	path, err := oneFlag(sv, "config.file")
	if err != nil {
		return err
	}
	file, err := mountedFile(sv, path)
	if err != nil {
		return err
	}
	var pc promConfig
	if err := readYAMLFile(file, &pc); err != nil {
		return err
	}
	pc.file = file
	n.prom = &pc
	addr := "0.0.0.0:9090"
	if vs := flagValues(sv.args(), "web.listen-address"); len(vs) > 0 {
		addr = vs[len(vs)-1]
	}
	if err := n.listen(name, rolePrometheus, addr, "--web.listen-address"); err != nil {
		return err
	}
	for _, sc := range pc.ScrapeConfigs {
		if sc.MetricsPath != "/metrics" {
			return fmt.Errorf("%s: job %s scrapes %q; the gateway serves /metrics", file, sc.JobName, sc.MetricsPath)
		}
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				n.talk(name, roleAdmin, tg, fmt.Sprintf("%s: job %s target", file, sc.JobName))
			}
		}
	}
	return nil
}

type datasource struct {
	file     string
	Name     string `yaml:"name"`
	UID      string `yaml:"uid"`
	Type     string `yaml:"type"`
	URL      string `yaml:"url"`
	JSONData struct {
		TimeInterval                string `yaml:"timeInterval"`
		ExemplarTraceIDDestinations []struct {
			Name          string `yaml:"name"`
			DatasourceUID string `yaml:"datasourceUid"`
		} `yaml:"exemplarTraceIdDestinations"`
	} `yaml:"jsonData"`
}

const grafanaDatasourceDir = "/etc/grafana/provisioning/datasources"

// readGrafana: GF_SERVER_HTTP_PORT (Grafana's default 3000 when unset) and
// the provisioned datasources' URLs.
func readGrafana(n *network, name string, sv service) error {
	port := "3000"
	if p, ok := sv.Environment["GF_SERVER_HTTP_PORT"]; ok {
		port = p
	}
	if err := n.listen(name, roleGrafana, "0.0.0.0:"+port, "GF_SERVER_HTTP_PORT"); err != nil {
		return err
	}
	ms, err := sv.mounts()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if !strings.HasPrefix(m.dst, grafanaDatasourceDir+"/") {
			continue
		}
		var f struct {
			Datasources []datasource `yaml:"datasources"`
		}
		if err := readYAMLFile(m.src, &f); err != nil {
			return err
		}
		for _, d := range f.Datasources {
			d.file = m.src
			n.grafana = append(n.grafana, d)
			role := map[string]string{"prometheus": rolePrometheus, "jaeger": roleTraceQuery}[d.Type]
			if role == "" {
				return fmt.Errorf("%s: datasource %s has type %q, which this test does not know", m.src, d.Name, d.Type)
			}
			addr, err := urlAddr(d.URL)
			if err != nil {
				return fmt.Errorf("%s: datasource %s url: %v", m.src, d.Name, err)
			}
			n.talk(name, role, addr, fmt.Sprintf("%s: datasource %s url", m.src, d.Name))
		}
	}
	if len(n.grafana) == 0 {
		return fmt.Errorf("no datasource file is mounted under %s", grafanaDatasourceDir)
	}
	return nil
}

// jaegerQueryPort is where Jaeger's all-in-one serves its UI and query API
// (the jaeger_query extension's default, documented at
// https://www.jaegertracing.io/docs/latest/apis/); its OTLP receivers are
// set on the command line.
const jaegerQueryPort = 16686

func readJaeger(n *network, name string, sv service) error {
	for _, set := range flagValues(sv.args(), "set") {
		key, val, _ := strings.Cut(set, "=")
		role := map[string]string{
			"receivers.otlp.protocols.grpc.endpoint": roleOTLPGRPC,
			"receivers.otlp.protocols.http.endpoint": roleOTLPHTTP,
		}[key]
		if role == "" {
			continue
		}
		if err := n.listen(name, role, val, "--set "+key); err != nil {
			return err
		}
	}
	return n.listen(name, roleTraceQuery, "0.0.0.0:"+strconv.Itoa(jaegerQueryPort), "Jaeger's default query port")
}

// readTraffic: /bin/sh SCRIPT with the gateways in GATEWAYS.
func readTraffic(n *network, name string, sv service) error {
	script, err := mountedFile(sv, sv.Entrypoint[1])
	if err != nil {
		return err
	}
	if out, err := exec.Command("sh", "-n", script).CombinedOutput(); err != nil {
		return fmt.Errorf("sh -n %s: %v\n%s", script, err, out)
	}
	gws := strings.Fields(sv.Environment["GATEWAYS"])
	if len(gws) == 0 {
		return fmt.Errorf("GATEWAYS is empty: the script would send nothing")
	}
	for _, gw := range gws {
		n.talk(name, roleAPI, gw, "GATEWAYS")
	}
	return nil
}

// reach finds the listener an edge arrives at, or says why there is none.
func (n *network) reach(s *stack, e edge) (listener, error) {
	host, port, err := hostPort(e.addr)
	if err != nil {
		return listener{}, err
	}
	fromNS := s.netns(e.from)
	var ns string
	switch {
	case isLoopback(host):
		ns = fromNS // its own network namespace
	case s.has(host):
		if s.services[host].NetworkMode != "" {
			return listener{}, fmt.Errorf("%s shares %s's network: address it as %s", host, s.netns(host), s.netns(host))
		}
		ns = host
	default:
		return listener{}, fmt.Errorf("host %q is neither a service of %s nor loopback", host, composeFile)
	}
	for _, l := range n.listeners {
		if s.netns(l.service) != ns || l.port != port {
			continue
		}
		if ns != fromNS && isLoopback(l.host) {
			return l, fmt.Errorf("%s listens on %s:%d (%s), loopback: unreachable from %s", l.service, l.host, l.port, l.source, e.from)
		}
		if l.role != e.role {
			return l, fmt.Errorf("port %d of %s is the %s of %s (%s), not a %s", port, ns, l.role, l.service, l.source, e.role)
		}
		return l, nil
	}
	return listener{}, fmt.Errorf("nothing in %s's network listens on port %d", ns, port)
}

// gatewayAddrs are host:port of each firstbyte serve service's listener
// of role, as other services address them.
func (n *network) gatewayAddrs(role string) []string {
	var out []string
	for _, l := range n.listeners {
		if l.role == role {
			out = append(out, fmt.Sprintf("%s:%d", l.service, l.port))
		}
	}
	sort.Strings(out)
	return out
}

// edgeAddrs are the addresses service from talks to for role.
func (n *network) edgeAddrs(from, role string) []string {
	var out []string
	for _, e := range n.edges {
		if e.from == from && e.role == role {
			out = append(out, e.addr)
		}
	}
	sort.Strings(out)
	return out
}

func serviceOfKind(s *stack, kind string) []string {
	var out []string
	for _, name := range s.names() {
		if kindOf(s.services[name]) == kind {
			out = append(out, name)
		}
	}
	return out
}

// repoRel is a path relative to deploy/ shown from the repository root.
func repoRel(p string) string {
	if r, err := filepath.Rel(repoRoot, p); err == nil {
		return r
	}
	return p
}
