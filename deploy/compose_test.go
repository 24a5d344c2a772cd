package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// compose.yaml as `docker compose up` would run it, checked without
// Docker: files, variables, images, addresses and the story the stack is
// for (two replicas sharing spans through the collector, Prometheus on
// both, Grafana on Prometheus and the trace store).

// Every file compose.yaml names exists: bind-mount sources, build contexts
// and Dockerfiles, and every absolute path a command or environment value
// gives inside a mount.
func TestComposeReferencedFilesExist(t *testing.T) {
	s := loadStack(t)
	absPathRE := regexp.MustCompile(`(?:^|[=:])(/[A-Za-z0-9._/-]+)`)
	for _, name := range s.names() {
		sv := s.services[name]
		ms, err := sv.mounts()
		if err != nil {
			t.Errorf("service %s: %v", name, err)
		}
		for _, m := range ms {
			if !exists(m.src) {
				t.Errorf("service %s mounts %s (%s from the repository root) at %s: no such file or directory", name, m.src, repoRel(m.src), m.dst)
			}
			if !m.readOnly {
				t.Errorf("service %s mounts %s read-write; the stack only reads repository files (add :ro)", name, m.src)
			}
		}
		if b := sv.Build; b != nil {
			if st, err := os.Stat(b.Context); err != nil || !st.IsDir() {
				t.Errorf("service %s: build context %s is not a directory", name, b.Context)
			}
			if df := filepath.Join(b.Context, b.Dockerfile); b.Dockerfile == "" || !exists(df) {
				t.Errorf("service %s: dockerfile %q (relative to the context %s) does not exist", name, b.Dockerfile, b.Context)
			}
		}
		var values []string
		values = append(values, sv.args()...)
		for _, v := range sv.Environment {
			values = append(values, v)
		}
		for _, v := range values {
			for _, m := range absPathRE.FindAllStringSubmatch(v, -1) {
				if p, ok := sv.hostPath(m[1]); ok && !exists(p) {
					t.Errorf("service %s refers to %s (in %q), mounted from %s, which does not exist", name, m[1], v, p)
				}
			}
		}
	}
}

// `docker compose up` with no environment and no .env file must work:
// every variable has a default.
func TestComposeVariablesHaveDefaults(t *testing.T) {
	s := loadStack(t)
	if len(s.unset) > 0 {
		slices.Sort(s.unset)
		t.Errorf("%s uses %v without a default (${VAR:-default}): a plain `docker compose up` would give them the empty string", composeFile, slices.Compact(s.unset))
	}
	if s.name == "" {
		t.Errorf("%s has no name: the project would be named after the directory (deploy)", composeFile)
	}
}

// Third-party images are pinned: "latest" changes under the user, and the
// dashboard's schema, Prometheus's flags and Jaeger's --set keys are only
// known to work with the versions named.
func TestComposeImagesPinned(t *testing.T) {
	s := loadStack(t)
	for _, name := range s.names() {
		sv := s.services[name]
		switch {
		case sv.Image == "" && sv.Build == nil:
			t.Errorf("service %s has neither image nor build", name)
		case sv.Image != "" && sv.Build != nil:
			t.Errorf("service %s has both image %q and build: compose would tag the build as the image, hiding which is run", name, sv.Image)
		case sv.Image != "":
			_, tag, ok := strings.Cut(sv.Image[strings.LastIndex(sv.Image, "/")+1:], ":")
			if !ok || tag == "" || tag == "latest" {
				t.Errorf("service %s: image %q is not pinned to a version", name, sv.Image)
			}
		}
	}
}

// Every address a service talks to is one the service it names listens
// on, with the right kind of listener, reachable from where it is called;
// what a service listens on beyond its own network is exactly what it
// exposes; published ports are the host's loopback and exposed ports.
func TestComposeAddressesReachListeners(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	if len(n.edges) == 0 || len(n.listeners) == 0 {
		t.Fatalf("read %d listeners and %d addresses: nothing to check", len(n.listeners), len(n.edges))
	}
	for _, e := range n.edges {
		l, err := n.reach(s, e)
		if err != nil {
			t.Errorf("%s talks to %s (%s), which must be the %s: %v", e.from, e.addr, e.source, e.role, err)
			continue
		}
		t.Logf("%-10s → %-22s %s of %s", e.from, e.addr, l.role, l.service)
	}

	// Two services in one network cannot bind one port.
	bound := map[string]listener{}
	for _, l := range n.listeners {
		k := fmt.Sprintf("%s:%d", s.netns(l.service), l.port)
		if o, dup := bound[k]; dup {
			t.Errorf("%s (%s) and %s (%s) both listen on port %d in %s's network", l.service, l.source, o.service, o.source, l.port, s.netns(l.service))
		}
		bound[k] = l
	}

	hostPorts := map[int]string{}
	for _, name := range s.names() {
		sv := s.services[name]
		if sv.NetworkMode != "" {
			if !strings.HasPrefix(sv.NetworkMode, "service:") || !s.has(s.netns(name)) {
				t.Errorf("service %s: network_mode %q, want service:NAME of a service of %s", name, sv.NetworkMode, composeFile)
			}
			if len(sv.Expose)+len(sv.Ports) > 0 {
				t.Errorf("service %s shares %s's network: compose refuses expose or ports on it", name, s.netns(name))
			}
			continue
		}
		var want []string
		for _, l := range n.listeners {
			if s.netns(l.service) == name && !isLoopback(l.host) {
				want = append(want, strconv.Itoa(l.port))
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		got := slices.Clone(sv.Expose)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("service %s exposes %v; its network listens beyond loopback on %v", name, got, want)
		}
		ps, err := sv.published()
		if err != nil {
			t.Errorf("service %s: %v", name, err)
		}
		for _, p := range ps {
			if p.hostIP != "127.0.0.1" {
				t.Errorf("service %s publishes %q on all host interfaces; publish on 127.0.0.1 (the stack has demo tokens)", name, p.raw)
			}
			if !slices.Contains(sv.Expose, strconv.Itoa(p.container)) {
				t.Errorf("service %s publishes container port %d, which it does not expose (%v)", name, p.container, sv.Expose)
			}
			if o, dup := hostPorts[p.host]; dup {
				t.Errorf("services %s and %s both publish host port %d", name, o, p.host)
			}
			hostPorts[p.host] = name
		}
	}
}

// Two gateway replicas that learn from each other: each exports its spans
// to the collector, the collector sends every span to each replica's
// admin POST /v1/traces with the replicas' ingest token, and keeps a copy
// in the trace store Grafana reads.
func TestComposeCollectorFansOutToEveryGateway(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	gateways := serviceOfKind(s, "firstbyte serve")
	if len(gateways) < 2 {
		t.Fatalf("%d gateway services (%v): the stack shows two replicas sharing one ranking", len(gateways), gateways)
	}
	collectors := serviceOfKind(s, "firstbyte-otelcol")
	if len(collectors) != 1 || n.collector == nil {
		t.Fatalf("collector services %v, want one that could be read", collectors)
	}
	col := collectors[0]
	if got, want := n.edgeAddrs(col, roleAdmin), n.gatewayAddrs(roleAdmin); !slices.Equal(got, want) {
		t.Errorf("the collector sends spans to %v; the gateways' admin listeners are %v: each replica must get every span", got, want)
	}

	// fanout.yaml's exporters all survive the overlay (lists are replaced
	// when configs merge).
	base, err := loadCollectorConfig(n.collector.files[:1], envLookup(s.services[col]))
	if err != nil {
		t.Fatal(err)
	}
	merged := n.collector.pipelineExporters()
	for _, e := range base.pipelineExporters() {
		if !slices.Contains(merged, e) {
			t.Errorf("%s's exporter %s is missing from the merged pipeline %v (%v): a later --config replaced the list",
				repoRel(n.collector.files[0]), e, merged, n.collector.files)
		}
	}

	// The token on the collector's requests is the one the gateways want.
	for _, e := range merged {
		if !strings.HasPrefix(e, "otlp_http") {
			continue
		}
		auth := n.collector.str("exporters", e, "headers", "Authorization")
		for _, gw := range gateways {
			cfg := n.gateways[gw]
			if cfg == nil {
				continue // reported by loadNetwork
			}
			tok := cfg.Telemetry.Ingest.Token
			if !cfg.Telemetry.Ingest.Enabled || tok == "" {
				t.Errorf("%s: telemetry.ingest must be enabled with a token (its admin listener is not loopback)", gw)
			}
			if auth != "Bearer "+tok {
				t.Errorf("collector exporter %s sends Authorization %q; %s wants \"Bearer %s\"", e, auth, gw, tok)
			}
		}
	}

	// Every gateway exports to this collector.
	for _, gw := range gateways {
		addrs := n.edgeAddrs(gw, roleOTLPHTTP)
		if len(addrs) != 1 || !strings.HasPrefix(addrs[0], col+":") {
			t.Errorf("%s exports spans to %v, want the collector service %s", gw, addrs, col)
		}
	}

	// The trace store behind the exemplar links gets the spans too.
	var stores []string
	for _, d := range n.grafana {
		if d.Type == "jaeger" {
			addr, _ := urlAddr(d.URL)
			host, _, _ := strings.Cut(addr, ":")
			stores = append(stores, host)
		}
	}
	for _, store := range stores {
		found := false
		for _, a := range n.edgeAddrs(col, roleOTLPGRPC) {
			found = found || strings.HasPrefix(a, store+":")
		}
		if !found {
			t.Errorf("Grafana reads traces from %s, but the collector does not export to it (OTLP/gRPC exporters: %v)", store, n.edgeAddrs(col, roleOTLPGRPC))
		}
	}
	if len(stores) == 0 {
		t.Error("no trace store datasource in Grafana: the exemplars would link nowhere")
	}
}

// Each replica's providers are simulated beside it, and every simulated
// provider is one a gateway uses.
func TestComposeGatewaysUseTheirSimulators(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	used := map[string]bool{}
	for _, gw := range serviceOfKind(s, "firstbyte serve") {
		for _, e := range n.edges {
			if e.from != gw || e.role != roleProvider {
				continue
			}
			l, err := n.reach(s, e)
			if err != nil {
				continue // reported by TestComposeAddressesReachListeners
			}
			used[fmt.Sprintf("%s:%d", l.service, l.port)] = true
		}
	}
	for _, l := range n.listeners {
		if l.role == roleProvider && !used[fmt.Sprintf("%s:%d", l.service, l.port)] {
			t.Errorf("%s simulates a provider on port %d (%s) that no gateway in its network uses", l.service, l.port, l.source)
		}
	}
	if len(used) == 0 {
		t.Error("no gateway reaches a simulated provider")
	}
}

// Prometheus scrapes every replica, at the interval the dashboard's
// datasource assumes, keeping exemplars.
func TestComposePrometheusScrapesEveryGateway(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	proms := serviceOfKind(s, "prometheus")
	if len(proms) != 1 || n.prom == nil {
		t.Fatalf("prometheus services %v, want one that could be read", proms)
	}
	if got, want := n.edgeAddrs(proms[0], roleAdmin), n.gatewayAddrs(roleAdmin); !slices.Equal(got, want) {
		t.Errorf("%s scrapes %v; the gateways' admin listeners are %v", repoRel(n.prom.file), got, want)
	}
	var shipped promConfig
	if err := readYAMLFile(filepath.Join(repoRoot, "dashboards", "prometheus.yml"), &shipped); err != nil {
		t.Fatal(err)
	}
	if n.prom.Global.ScrapeInterval != shipped.Global.ScrapeInterval {
		t.Errorf("%s scrape_interval %q, dashboards/prometheus.yml %q: the dashboard's rate windows assume the latter",
			repoRel(n.prom.file), n.prom.Global.ScrapeInterval, shipped.Global.ScrapeInterval)
	}
	if !slices.Contains(flagValues(s.services[proms[0]].args(), "enable-feature"), "exemplar-storage") {
		t.Errorf("prometheus runs without --enable-feature=exemplar-storage: the TTFB exemplars would be dropped")
	}
}

// Grafana gets the repository's dashboard provider and dashboard, and
// datasources that agree with dashboards/provisioning's.
func TestComposeGrafanaProvisioning(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	gfs := serviceOfKind(s, "grafana")
	if len(gfs) != 1 {
		t.Fatalf("grafana services %v, want one", gfs)
	}
	gf := s.services[gfs[0]]

	// The dashboard provider's path is where firstbyte.json is mounted.
	providerFile, ok := gf.hostPath("/etc/grafana/provisioning/dashboards/firstbyte.yaml")
	if !ok || !exists(providerFile) {
		t.Fatalf("grafana does not mount the dashboard provider at /etc/grafana/provisioning/dashboards/firstbyte.yaml (volumes %v)", gf.Volumes)
	}
	var providers struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	if err := readYAMLFile(providerFile, &providers); err != nil || len(providers.Providers) != 1 {
		t.Fatalf("%s: %v, %d providers", providerFile, err, len(providers.Providers))
	}
	dash, ok := gf.hostPath(providers.Providers[0].Options.Path + "/firstbyte.json")
	if want := filepath.Join(repoRoot, "dashboards", "firstbyte.json"); !ok || filepath.Clean(dash) != want {
		t.Errorf("the provider loads %s/firstbyte.json, which grafana mounts from %q; want %s", providers.Providers[0].Options.Path, dash, want)
	}

	// Datasources: the dashboard's Prometheus, with exemplar links to a
	// trace store of the same file, as dashboards/provisioning has them.
	var shipped struct {
		Datasources []datasource `yaml:"datasources"`
	}
	if err := readYAMLFile(filepath.Join(repoRoot, "dashboards", "provisioning", "datasources", "datasources.yaml"), &shipped); err != nil {
		t.Fatal(err)
	}
	byUID := map[string]datasource{}
	for _, d := range n.grafana {
		byUID[d.UID] = d
	}
	for _, want := range shipped.Datasources {
		if want.Type != "prometheus" {
			continue
		}
		got, ok := byUID[want.UID]
		if !ok || got.Type != "prometheus" {
			t.Errorf("no prometheus datasource with uid %q, as dashboards/provisioning has", want.UID)
			continue
		}
		if n.prom != nil && got.JSONData.TimeInterval != n.prom.Global.ScrapeInterval {
			t.Errorf("%s: timeInterval %q, want the scrape_interval %q ($__rate_interval is computed from it)",
				repoRel(got.file), got.JSONData.TimeInterval, n.prom.Global.ScrapeInterval)
		}
		var names []string
		for _, d := range got.JSONData.ExemplarTraceIDDestinations {
			names = append(names, d.Name)
			if dest := byUID[d.DatasourceUID]; dest.Type != "jaeger" && dest.Type != "tempo" {
				t.Errorf("%s: exemplar link to datasource uid %q (type %q), want a trace store of the same file", repoRel(got.file), d.DatasourceUID, dest.Type)
			}
		}
		var wantNames []string
		for _, d := range want.JSONData.ExemplarTraceIDDestinations {
			wantNames = append(wantNames, d.Name)
		}
		if len(names) == 0 || !slices.Equal(names, wantNames) {
			t.Errorf("%s: exemplar links read labels %v, dashboards/provisioning %v", repoRel(got.file), names, wantNames)
		}
	}
}

// The traffic script sends the model the gateways serve to every replica.
func TestComposeTrafficReachesEveryGateway(t *testing.T) {
	s := loadStack(t)
	n := loadNetwork(t, s)
	for _, name := range serviceOfKind(s, "traffic script") {
		if got, want := n.edgeAddrs(name, roleAPI), n.gatewayAddrs(roleAPI); !slices.Equal(got, want) {
			t.Errorf("%s sends requests to %v; the gateways' client APIs are %v", name, got, want)
		}
		script, _ := s.services[name].hostPath(s.services[name].Entrypoint[1])
		data, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^MODEL=\$\{MODEL:-([^}]+)\}`).FindSubmatch(data)
		model := s.services[name].Environment["MODEL"]
		if model == "" && m != nil {
			model = string(m[1])
		}
		if model == "" {
			t.Fatalf("%s: no MODEL default found", script)
		}
		for gw, cfg := range n.gateways {
			served := false
			for _, tg := range cfg.Targets {
				_, mapped := tg.ModelMap[model]
				served = served || mapped || slices.Contains(cfg.Providers[tg.VirtualKey].Models, model)
			}
			if !served {
				t.Errorf("%s requests model %q, which no target of %s serves (404)", script, model, gw)
			}
		}
		if key := s.services[name].Environment["FIRSTBYTE_API_KEY"]; true {
			for gw, cfg := range n.gateways {
				if len(cfg.Auth.Keys) > 0 && !slices.Contains(cfg.Auth.Keys, key) {
					t.Errorf("%s sends key %q, which %s does not accept (401)", name, key, gw)
				}
			}
		}
	}
}

// docs/operations.md says how to run the stack and what listens where; it
// must say what compose.yaml does: the command, every published port, the
// tokens' defaults and when the simulated providers change.
func TestOperationsDocMatchesCompose(t *testing.T) {
	const doc = "../docs/operations.md"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// The section is the one under its own heading, up to the next one.
	_, section, ok := strings.Cut(text, "\n## Running the whole stack\n")
	if !ok {
		t.Fatalf("%s has no \"## Running the whole stack\" section", doc)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	if want := "docker compose -f deploy/" + composeFile + " up --build"; !strings.Contains(section, want) {
		t.Errorf("%s does not say `%s`", doc, want)
	}
	s := loadStack(t)
	for _, name := range s.names() {
		ps, _ := s.services[name].published()
		for _, p := range ps {
			if addr := fmt.Sprintf("127.0.0.1:%d", p.host); !strings.Contains(section, addr) {
				t.Errorf("%s does not mention %s, where service %s is published", doc, addr, name)
			}
		}
	}
	raw, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	defaults := regexp.MustCompile(`\$\{(FIRSTBYTE_[A-Z_]*(?:KEY|TOKEN)):-([^}]*)\}`).FindAllStringSubmatch(string(raw), -1)
	if len(defaults) == 0 {
		t.Fatal("no token defaults found in compose.yaml")
	}
	for _, d := range defaults {
		if row := fmt.Sprintf("| `%s` | `%s` |", d[1], d[2]); !strings.Contains(section, row) {
			t.Errorf("%s has no row %q: the default of %s in %s", doc, row, d[1], composeFile)
		}
	}
	seen := map[string]bool{}
	for _, name := range serviceOfKind(s, "firstbyte sim") {
		sv := s.services[name]
		path, _ := oneFlag(sv, "config")
		file, err := mountedFile(sv, path)
		if err != nil {
			t.Fatal(err)
		}
		if seen[file] {
			continue // the replicas' simulators share one file
		}
		seen[file] = true
		cfg, err := sim.LoadConfig(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range cfg.Providers {
			for _, ph := range p.Phases {
				at := fmt.Sprintf("%d:%02d", int(ph.After.Minutes()), int(ph.After.Seconds())%60)
				if !strings.Contains(section, "at "+at) {
					t.Errorf("%s does not say what happens at %s (provider %s's phase in %s)", doc, at, p.Name, repoRel(file))
				}
			}
		}
	}
}

// healthDefaultTimeout is `firstbyte health`'s own -timeout default.
const healthDefaultTimeout = 2 * time.Second

// Each gateway replica has a health check the distroless image can run:
// exec form (there is no shell for CMD-SHELL), the image's own binary's
// `health` subcommand reading the config the replica serves, with a
// timeout longer than the command's own, so an unhealthy replica is
// reported with the command's reason rather than killed mid-check.
func TestComposeGatewaysHaveHealthchecks(t *testing.T) {
	s := loadStack(t)
	d := loadDockerfile(t)
	eps := d.stage("gateway").all("ENTRYPOINT")
	if len(eps) != 1 || len(eps[0].args) == 0 {
		t.Fatalf("gateway stage: want one ENTRYPOINT, got %v", eps)
	}
	binary := eps[0].args[0]
	gateways := serviceOfKind(s, "firstbyte serve")
	if len(gateways) == 0 {
		t.Fatal("no firstbyte serve service")
	}
	for _, name := range gateways {
		sv := s.services[name]
		hc := sv.Healthcheck
		if hc == nil {
			t.Errorf("service %s has no healthcheck: nothing can wait until it is ready", name)
			continue
		}
		if len(hc.Test) < 3 || hc.Test[0] != "CMD" || hc.Test[1] != binary || hc.Test[2] != "health" {
			t.Errorf("service %s: healthcheck test %q, want [\"CMD\", %q, \"health\", ...] (exec form: the image has no shell)", name, hc.Test, binary)
			continue
		}
		args := hc.Test[2:]
		served, err := oneFlag(sv, "config")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch cfgs, urls := flagValues(args, "config"), flagValues(args, "url"); {
		case len(urls) == 1:
			// An explicit URL: the integration test checks where it points.
		case len(cfgs) != 1 || cfgs[0] != served:
			t.Errorf("service %s: healthcheck %q reads config %v, but the service serves %s: it would probe another address",
				name, hc.Test, cfgs, served)
		}
		timeout := healthDefaultTimeout
		if vs := flagValues(args, "timeout"); len(vs) == 1 {
			if timeout, err = time.ParseDuration(vs[0]); err != nil {
				t.Errorf("service %s: healthcheck -timeout %q: %v", name, vs[0], err)
			}
		}
		durs := map[string]time.Duration{}
		for _, f := range []struct{ name, v string }{
			{"interval", hc.Interval}, {"timeout", hc.Timeout}, {"start_period", hc.StartPeriod}, {"start_interval", hc.StartInterval},
		} {
			if f.v == "" {
				continue
			}
			v, err := time.ParseDuration(f.v)
			if err != nil || v <= 0 {
				t.Errorf("service %s: healthcheck %s %q is not a positive duration", name, f.name, f.v)
			}
			durs[f.name] = v
		}
		if durs["timeout"] <= timeout {
			t.Errorf("service %s: healthcheck timeout %q is not longer than the command's own %v: Docker would kill the check before it says why",
				name, hc.Timeout, timeout)
		}
		if durs["interval"] == 0 || durs["interval"] < durs["timeout"] {
			t.Errorf("service %s: healthcheck interval %q must be set and at least its timeout %q", name, hc.Interval, hc.Timeout)
		}
		if hc.Retries < 1 {
			t.Errorf("service %s: healthcheck retries %d, want at least 1", name, hc.Retries)
		}
	}
}

// A service that waits for a gateway waits until it is healthy (ready to
// serve), not merely started; every dependency names a service of the
// file, with a condition Compose knows and the dependency can meet.
func TestComposeWaitsForHealthyGateways(t *testing.T) {
	s := loadStack(t)
	waits := 0
	for _, name := range s.names() {
		for dep, cond := range s.services[name].DependsOn {
			if !s.has(dep) {
				t.Errorf("service %s depends on %q, which is no service of %s", name, dep, composeFile)
				continue
			}
			switch cond {
			case "service_started", "service_healthy", "service_completed_successfully":
			default:
				t.Errorf("service %s: depends_on %s has condition %q, which Compose does not know", name, dep, cond)
			}
			hasCheck := s.services[dep].Healthcheck != nil
			if cond == "service_healthy" && !hasCheck {
				t.Errorf("service %s waits for %s to be healthy, but %s has no healthcheck: Compose refuses that", name, dep, dep)
			}
			if kindOf(s.services[dep]) == "firstbyte serve" {
				waits++
				if cond != "service_healthy" {
					t.Errorf("service %s depends on gateway %s with condition %q; want service_healthy, so it starts once %s answers /readyz",
						name, dep, cond, dep)
				}
			}
		}
	}
	if waits == 0 {
		t.Error("no service waits for a gateway: the traffic would start against replicas not yet ready")
	}
}

func TestDependsOnForms(t *testing.T) {
	tests := []struct {
		name, in string
		want     dependsOn
		wantErr  bool
	}{
		{name: "list", in: "[a, b]", want: dependsOn{"a": "service_started", "b": "service_started"}},
		{name: "map", in: "{a: {condition: service_healthy}, b: {}}", want: dependsOn{"a": "service_healthy", "b": "service_started"}},
		{name: "typo in a key", in: "{a: {conditon: service_healthy}}", wantErr: true},
	}
	for _, tt := range tests {
		var got struct {
			D dependsOn `yaml:"depends_on"`
		}
		err := yaml.UnmarshalWithOptions([]byte("depends_on: "+tt.in), &got, yaml.Strict())
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !maps.Equal(got.D, tt.want) {
			t.Errorf("%s: depends_on %s = %v, want %v", tt.name, tt.in, got.D, tt.want)
		}
	}
}
