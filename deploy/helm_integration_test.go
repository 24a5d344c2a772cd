//go:build integration

package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/goccy/go-yaml"
)

// The Helm chart (deploy/helm/firstbyte) through the real helm: lint, then
// `helm template` with several values, every rendered object parsed. The
// gateway config it renders goes through the real `firstbyte check` and,
// adapted to loopback, the real `firstbyte serve`, whose admin listener
// must answer the probes' paths; the collector config goes through the
// real collector's `validate`.
//
// Run: make test-deploy, or
//
//	make build otelcol helm && FIRSTBYTE_BIN=$PWD/bin/firstbyte OTELCOL_BIN=$PWD/bin/firstbyte-otelcol \
//	  HELM_BIN=$PWD/bin/helm go test -count=1 -tags integration -run Helm ./deploy/

// drainOverhead is what a drain takes beyond shutdown.delay +
// shutdown.grace: 2 s for what is still open to end, 5 s to flush spans
// (cmd/firstbyte/drain.go, docs/operations.md "Drain").
const drainOverhead = 7 * time.Second

// TestHelmLint: helm lint passes, and is not a formality: values the
// chart's schema refuses fail it.
func TestHelmLint(t *testing.T) {
	helm := requireHelm(t)
	for _, args := range [][]string{nil, {"--set", "serviceMonitor.enabled=true,replicas=1"}, {"--set", "otelcol.enabled=false"}} {
		stdout, stderr, code := helmRun(t, helm, append([]string{"lint", "--strict", chartDir}, args...)...)
		if code != 0 || !strings.Contains(stdout, "1 chart(s) linted, 0 chart(s) failed") {
			t.Errorf("helm lint --strict %s %v: exit %d\n%s%s", chartDir, args, code, stdout, stderr)
		}
	}
	for _, set := range []string{"replicas=0", "replica=3", "containerPorts.api=70000", "otelcol.rateLimit.spansPerSecond=-1"} {
		stdout, stderr, code := helmRun(t, helm, "lint", chartDir, "--set", set)
		if code == 0 {
			t.Errorf("helm lint --set %s passes; the chart's values schema should refuse it\n%s%s", set, stdout, stderr)
		}
	}
}

// The collector's fan-out has one exporter per replica, each posting to
// that replica's ingest endpoint through the StatefulSet's headless
// Service, with the token the gateways check; the real collector accepts
// the config.
func TestHelmFanOutFollowsReplicas(t *testing.T) {
	helm := requireHelm(t)
	tl := requireDeployTools(t)
	for _, n := range []int{1, 3, 5} {
		t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) {
			r := render(t, helm, "--set", "replicas="+strconv.Itoa(n))
			sts, ws, gw := r.gateway(t)
			if ws.Replicas != n {
				t.Fatalf("StatefulSet replicas = %d, want %d", ws.Replicas, n)
			}
			adminPort := gw.port("admin")
			if adminPort == 0 {
				t.Fatalf("gateway container has no port named admin: %+v", gw.Ports)
			}
			checkHeadless(t, r, ws, adminPort)

			cws, col, text := r.collector(t)
			var cfg struct {
				Exporters map[string]struct {
					TracesEndpoint string            `yaml:"traces_endpoint"`
					Headers        map[string]string `yaml:"headers"`
				} `yaml:"exporters"`
				Service struct {
					Pipelines map[string]struct {
						Exporters []string `yaml:"exporters"`
					} `yaml:"pipelines"`
				} `yaml:"service"`
			}
			if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
				t.Fatalf("collector config: %v\n%s", err, text)
			}
			var got []string
			for _, id := range cfg.Service.Pipelines["traces"].Exporters {
				if !strings.HasPrefix(id, "otlp_http") {
					continue
				}
				e := cfg.Exporters[id]
				got = append(got, e.TracesEndpoint)
				if auth := e.Headers["Authorization"]; auth != "Bearer ${env:FIRSTBYTE_INGEST_TOKEN}" {
					t.Errorf("exporter %s sends Authorization %q, want the ingest token from the environment", id, auth)
				}
			}
			var want []string
			for i := range n {
				want = append(want, fmt.Sprintf("http://%s-%d.%s:%d/v1/traces", sts.Metadata.Name, i, ws.ServiceName, adminPort))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the collector's traces pipeline posts to %v (%d exporters); the %d replicas' ingest endpoints are %v", got, len(got), n, want)
			}

			// One token: the Secret the collector sends is the one the
			// gateways' config checks.
			colTok, gwTok := envSecret(col, "FIRSTBYTE_INGEST_TOKEN"), envSecret(gw, "FIRSTBYTE_INGEST_TOKEN")
			if colTok == nil || gwTok == nil || *colTok != *gwTok {
				t.Errorf("FIRSTBYTE_INGEST_TOKEN: the collector's from %v, the gateways' from %v; want one Secret key for both", colTok, gwTok)
			}
			gcfg := parseGatewayConfig(t, r.gatewayConfig(t), gw)
			if !gcfg.Telemetry.Ingest.Enabled || gcfg.Telemetry.Ingest.Token != "test-value-of-FIRSTBYTE_INGEST_TOKEN" {
				t.Errorf("gateway telemetry.ingest = %+v: want enabled, with the token from FIRSTBYTE_INGEST_TOKEN", gcfg.Telemetry.Ingest.Enabled)
			}
			checkExportsToCollector(t, r, gcfg, cws, col, text)

			file := writeTemp(t, "otelcol.yaml", text)
			if res := runTool(t, podEnv(col), tl.otelcol, "validate", "--config=file:"+file); res.code != 0 {
				t.Errorf("firstbyte-otelcol validate on the rendered collector config: exit %d\n%s\n%s", res.code, res.out, text)
			}
		})
	}
}

// With otelcol.rateLimit.spansPerSecond set, the collector limits each
// (target, model) key before the fan-out, and the real collector accepts
// the config.
func TestHelmCollectorRateLimit(t *testing.T) {
	helm := requireHelm(t)
	tl := requireDeployTools(t)
	for _, tt := range []struct {
		set  string
		want []string
	}{
		{set: "", want: []string{"memory_limiter", "batch"}},
		{set: "otelcol.rateLimit.spansPerSecond=2.5,otelcol.rateLimit.burst=5", want: []string{"memory_limiter", "firstbyte_ratelimit", "batch"}},
	} {
		var args []string
		if tt.set != "" {
			args = []string{"--set", tt.set}
		}
		r := render(t, helm, args...)
		_, col, text := r.collector(t)
		var cfg struct {
			Processors map[string]map[string]any `yaml:"processors"`
			Service    struct {
				Pipelines map[string]struct {
					Processors []string `yaml:"processors"`
				} `yaml:"pipelines"`
			} `yaml:"service"`
		}
		if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatal(err)
		}
		if got := cfg.Service.Pipelines["traces"].Processors; !slices.Equal(got, tt.want) {
			t.Errorf("--set %q: traces processors %v, want %v", tt.set, got, tt.want)
		}
		if rl, ok := cfg.Processors["firstbyte_ratelimit"]; ok && (fmt.Sprint(rl["spans_per_second"]) != "2.5" || fmt.Sprint(rl["burst"]) != "5") {
			t.Errorf("--set %q: firstbyte_ratelimit %v, want spans_per_second 2.5, burst 5", tt.set, rl)
		}
		file := writeTemp(t, "otelcol.yaml", text)
		if res := runTool(t, podEnv(col), tl.otelcol, "validate", "--config=file:"+file); res.code != 0 {
			t.Errorf("--set %q: firstbyte-otelcol validate: exit %d\n%s", tt.set, res.code, res.out)
		}
	}
}

// checkHeadless: the StatefulSet's governing Service is headless, lists
// pods that are not ready yet (a starting replica learns its peers'
// samples), selects the gateway pods and serves the admin port, so
// <pod>.<service>:<admin port> reaches each replica's ingest.
func checkHeadless(t *testing.T, r *rendered, ws workloadSpec, adminPort int) {
	t.Helper()
	svc := r.get(t, "Service", ws.ServiceName)
	var ss serviceSpec
	svc.spec(t, &ss)
	if ss.ClusterIP != "None" || !ss.PublishNotReadyAddresses {
		t.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %v; want a headless Service that lists pods before they are ready",
			svc.Metadata.Name, ss.ClusterIP, ss.PublishNotReadyAddresses)
	}
	if !selects(ss.Selector, ws.Template.Metadata.Labels) || !selects(ws.Selector.MatchLabels, ws.Template.Metadata.Labels) {
		t.Errorf("Service %s selects %v; the StatefulSet's pods are labelled %v", svc.Metadata.Name, ss.Selector, ws.Template.Metadata.Labels)
	}
	_, _, gw := r.gateway(t)
	for _, p := range ss.Ports {
		if gw.port(p.TargetPort) == adminPort {
			return
		}
	}
	t.Errorf("Service %s has no port to the admin port %d: %+v", svc.Metadata.Name, adminPort, ss.Ports)
}

// checkExportsToCollector: the gateways' otlp_endpoint is the collector
// Service's OTLP/HTTP port, which reaches the port the collector's
// receiver listens on.
func checkExportsToCollector(t *testing.T, r *rendered, gcfg *config.Config, cws workloadSpec, col container, colConfig string) {
	t.Helper()
	addr, err := urlAddr(gcfg.Telemetry.OTLPEndpoint)
	if err != nil {
		t.Fatalf("gateway telemetry.otlp_endpoint: %v", err)
	}
	host, port, _ := hostPort(addr)
	svc := r.get(t, "Service", host)
	var ss serviceSpec
	svc.spec(t, &ss)
	if !selects(ss.Selector, cws.Template.Metadata.Labels) {
		t.Errorf("Service %s selects %v; the collector's pods are labelled %v", host, ss.Selector, cws.Template.Metadata.Labels)
	}
	var recv struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					HTTP struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"http"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
	}
	if err := yaml.Unmarshal([]byte(colConfig), &recv); err != nil {
		t.Fatal(err)
	}
	_, recvPort, err := hostPort(recv.Receivers.OTLP.Protocols.HTTP.Endpoint)
	if err != nil {
		t.Fatalf("collector receivers.otlp.protocols.http.endpoint: %v", err)
	}
	for _, p := range ss.Ports {
		if p.Port == port {
			if got := col.port(p.TargetPort); got != recvPort {
				t.Errorf("the gateways export to %s:%d, which is the collector's port %d; its OTLP/HTTP receiver listens on %d", host, port, got, recvPort)
			}
			return
		}
	}
	t.Errorf("the gateways export to %s, but Service %s has no port %d", gcfg.Telemetry.OTLPEndpoint, host, port)
}

func envSecret(c container, name string) *secretKeyRef {
	for _, e := range c.Env {
		if e.Name == name {
			return e.secret()
		}
	}
	return nil
}

// parseGatewayConfig reads the config with the gateway's own loader in
// the pod's environment (Secret values replaced by test values).
func parseGatewayConfig(t *testing.T, text string, gw container) *config.Config {
	t.Helper()
	env := map[string]string{}
	for _, kv := range podEnv(gw) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.Parse([]byte(text), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatalf("the rendered gateway config, read as the gateway reads it: %v\n%s", err, text)
	}
	return cfg
}

// The config in the ConfigMap passes the real `firstbyte check` in the
// pod's environment, for the default values and others.
func TestHelmConfigPassesCheck(t *testing.T) {
	helm := requireHelm(t)
	tl := requireDeployTools(t)
	bad := writeTemp(t, "bad.yaml", "listen: 0.0.0.0:8080\nprovidrs: {}\n")
	if res := runTool(t, serviceEnv(t, service{}), tl.firstbyte, "check", "-config", bad); res.code == 0 {
		t.Fatalf("firstbyte check accepts a config with an unknown key:\n%s", res.out)
	}
	for _, args := range [][]string{
		nil,
		{"--set", "otelcol.enabled=false"},
		{"--set", "replicas=1,containerPorts.api=9000,containerPorts.admin=9100"},
		{"--set", "config.strategy.mode=reliable-latency,config.log.level=debug"},
	} {
		r := render(t, helm, args...)
		_, _, gw := r.gateway(t)
		file := writeTemp(t, "firstbyte.yaml", r.gatewayConfig(t))
		res := runTool(t, podEnv(gw), tl.firstbyte, "check", "-config", file)
		if res.code != 0 {
			t.Errorf("values %v: firstbyte check on the rendered config: exit %d\n%s", args, res.code, res.out)
		}
	}
}

// terminationGracePeriodSeconds covers the longest drain the rendered
// config can take (shutdown.delay + shutdown.grace + drainOverhead), read
// by the gateway's own loader with its defaults; a value given that is
// shorter is refused.
func TestHelmTerminationGrace(t *testing.T) {
	helm := requireHelm(t)
	tests := []struct {
		name string
		set  string
		want int // 0: only checked against the drain
	}{
		{name: "defaults", set: ""},
		{name: "no delay", set: "config.shutdown.delay=0s,config.shutdown.grace=10s"},
		{name: "minutes", set: "config.shutdown.delay=1m30s,config.shutdown.grace=2m"},
		{name: "fractions", set: "config.shutdown.delay=250ms,config.shutdown.grace=90.5s"},
		{name: "the gateway's defaults", set: "config.shutdown=null"},
		{name: "given", set: "terminationGracePeriodSeconds=100", want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.set != "" {
				args = []string{"--set", tt.set}
			}
			r := render(t, helm, args...)
			_, ws, gw := r.gateway(t)
			cfg := parseGatewayConfig(t, r.gatewayConfig(t), gw)
			tg := ws.Template.Spec.TerminationGracePeriodSeconds
			if tg == nil {
				t.Fatal("no terminationGracePeriodSeconds: Kubernetes' 30 s would cut the drain")
			}
			drain := cfg.Shutdown.Delay + cfg.Shutdown.Grace + drainOverhead
			if got := time.Duration(*tg) * time.Second; got <= drain {
				t.Errorf("terminationGracePeriodSeconds = %d; shutdown.delay %v + shutdown.grace %v + %v = %v: SIGKILL would cut the drain",
					*tg, cfg.Shutdown.Delay, cfg.Shutdown.Grace, drainOverhead, drain)
			}
			if tt.want != 0 && *tg != tt.want {
				t.Errorf("terminationGracePeriodSeconds = %d, want the given %d", *tg, tt.want)
			}
			if tt.set == "" {
				if cfg.Shutdown.Delay == 0 {
					t.Error("shutdown.delay is 0 by default: pods would stop accepting before Kubernetes takes them out of the endpoints")
				}
				checkDocSays(t, "## Kubernetes", fmt.Sprintf("(%d for the defaults)", *tg), fmt.Sprintf("default `%s`", cfg.Shutdown.Delay))
			}
		})
	}
	_, stderr, code := helmRun(t, helm, "template", releaseName, chartDir, "--set", "terminationGracePeriodSeconds=30")
	if code == 0 || !strings.Contains(stderr, "terminationGracePeriodSeconds") {
		t.Errorf("terminationGracePeriodSeconds=30 with the default 5s + 30s drain renders (exit %d); want it refused:\n%s", code, stderr)
	}
}

// TestHelmProbesHitServedPaths: the probes' paths and ports, run against
// the real binary serving the rendered config (its listeners moved to
// free loopback ports): both answer 200 while it serves; after SIGTERM
// the readiness path answers 503 while the liveness one still answers 200.
func TestHelmProbesHitServedPaths(t *testing.T) {
	helm := requireHelm(t)
	tl := requireDeployTools(t)
	r := render(t, helm)
	_, _, gw := r.gateway(t)
	text := r.gatewayConfig(t)
	cfg := parseGatewayConfig(t, text, gw)

	live, ready := gw.LivenessProbe, gw.ReadinessProbe
	if live == nil || live.HTTPGet == nil || ready == nil || ready.HTTPGet == nil {
		t.Fatalf("gateway probes: liveness %+v, readiness %+v; want httpGet on both", live, ready)
	}
	_, adminPort, _ := hostPort(cfg.Admin.Listen)
	_, apiPort, _ := hostPort(cfg.Listen)
	for _, p := range []struct {
		name string
		port any
	}{{"liveness", live.HTTPGet.Port}, {"readiness", ready.HTTPGet.Port}} {
		if got := gw.port(p.port); got != adminPort {
			t.Errorf("%s probe port %v is container port %d; the config's admin.listen is %s", p.name, p.port, got, cfg.Admin.Listen)
		}
	}
	if got := gw.port("api"); got != apiPort {
		t.Errorf("container port api = %d; the config listens on %s", got, cfg.Listen)
	}

	admin := loopbackFree(t)
	adapted := adaptToLoopback(t, text, loopbackFree(t), admin)
	p := startServe(t, tl.firstbyte, podEnv(gw), writeTemp(t, "firstbyte.yaml", adapted))
	liveURL, readyURL := "http://"+admin+live.HTTPGet.Path, "http://"+admin+ready.HTTPGet.Path
	pollStatus(t, p, liveURL, 200, 15*time.Second)
	pollStatus(t, p, readyURL, 200, 5*time.Second)

	p.signalTerm(t)
	pollStatus(t, p, readyURL, 503, 2*time.Second)
	if code := getStatus(liveURL); code != 200 {
		t.Errorf("liveness %s while draining = %d, want 200: Kubernetes would kill a pod finishing its requests", liveURL, code)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Errorf("firstbyte serve exit code after SIGTERM = %d, want 0", code)
	}
}

// The client Service's port and the container's port are set apart, and
// still meet; the admin Service carries the scrape annotations that name
// the admin port; the ServiceMonitor (behind its flag) selects the admin
// Service by a port it has; the PodDisruptionBudget covers the gateways.
func TestHelmServicesReachTheGateway(t *testing.T) {
	helm := requireHelm(t)
	r := render(t, helm, "--set", "service.port=8000,containerPorts.api=9000,containerPorts.admin=9100,adminService.port=9200")
	_, ws, gw := r.gateway(t)
	cfg := parseGatewayConfig(t, r.gatewayConfig(t), gw)
	if cfg.Listen != "0.0.0.0:9000" || cfg.Admin.Listen != "0.0.0.0:9100" {
		t.Errorf("config listen %s, admin.listen %s; want 0.0.0.0:9000 and 0.0.0.0:9100 from containerPorts", cfg.Listen, cfg.Admin.Listen)
	}
	pods := ws.Template.Metadata.Labels
	services := map[string]serviceSpec{}
	for _, s := range r.all("Service") {
		var ss serviceSpec
		s.spec(t, &ss)
		services[s.Metadata.Name] = ss
	}
	port := func(ss serviceSpec, port int) int {
		for _, p := range ss.Ports {
			if p.Port == port {
				return gw.port(p.TargetPort)
			}
		}
		return 0
	}
	client := services[releaseName+"-firstbyte"]
	if !selects(client.Selector, pods) || port(client, 8000) != 9000 {
		t.Errorf("client Service %+v: want port 8000 to the gateways' container port 9000", client)
	}
	adminSvc := r.get(t, "Service", releaseName+"-firstbyte-admin")
	ass := services[adminSvc.Metadata.Name]
	if !selects(ass.Selector, pods) || port(ass, 9200) != 9100 {
		t.Errorf("admin Service %+v: want port 9200 to the admin container port 9100", ass)
	}
	a := adminSvc.Metadata.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9100" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("admin Service annotations %v: want prometheus.io scrape true, port 9100 (the pods' admin port), path /metrics", a)
	}
	if n := len(r.all("ServiceMonitor")); n != 0 {
		t.Errorf("%d ServiceMonitors without serviceMonitor.enabled (the CRD may not exist)", n)
	}
	pdbs := r.all("PodDisruptionBudget")
	if len(pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(pdbs))
	}
	var pdb struct {
		MaxUnavailable any `yaml:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
	}
	pdbs[0].spec(t, &pdb)
	if !selects(pdb.Selector.MatchLabels, pods) || pdb.MaxUnavailable == nil {
		t.Errorf("PodDisruptionBudget %+v: want maxUnavailable, selecting the gateway pods %v", pdb, pods)
	}

	r = render(t, helm, "--set", "serviceMonitor.enabled=true")
	sms := r.all("ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("%d ServiceMonitors with serviceMonitor.enabled, want 1", len(sms))
	}
	var sm struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Endpoints []struct {
			Port     string `yaml:"port"`
			Path     string `yaml:"path"`
			Interval string `yaml:"interval"`
		} `yaml:"endpoints"`
	}
	sms[0].spec(t, &sm)
	var matched []string
	for _, s := range r.all("Service") {
		if selects(sm.Selector.MatchLabels, s.Metadata.Labels) {
			matched = append(matched, s.Metadata.Name)
		}
	}
	if !slices.Equal(matched, []string{releaseName + "-firstbyte-admin"}) {
		t.Errorf("the ServiceMonitor selects Services %v, want only the admin Service", matched)
	}
	if len(sm.Endpoints) != 1 || sm.Endpoints[0].Port != "admin" || sm.Endpoints[0].Path != "/metrics" || sm.Endpoints[0].Interval != "5s" {
		t.Errorf("ServiceMonitor endpoints %+v: want port admin, path /metrics, interval 5s (the dashboard's)", sm.Endpoints)
	}
}

// The dashboards ConfigMap is what Grafana's sidecar loads: labelled
// grafana_dashboard "1", one key per dashboard, each the repository's
// file exactly.
func TestHelmDashboardsConfigMap(t *testing.T) {
	helm := requireHelm(t)
	r := render(t, helm)
	var found []object
	for _, cm := range r.all("ConfigMap") {
		if cm.Metadata.Labels["grafana_dashboard"] == "1" {
			found = append(found, cm)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d ConfigMaps labelled grafana_dashboard: \"1\", want 1", len(found))
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json"))
	if len(files) == 0 || len(found[0].Data) != len(files) {
		t.Errorf("the dashboards ConfigMap has %d keys; dashboards/ has %d dashboards", len(found[0].Data), len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := found[0].Data[filepath.Base(f)]; got != string(want) {
			t.Errorf("the dashboards ConfigMap's %s (%d bytes) is not dashboards/%s (%d bytes)", filepath.Base(f), len(got), filepath.Base(f), len(want))
		}
	}
	r = render(t, helm, "--set", "dashboards.enabled=false")
	for _, cm := range r.all("ConfigMap") {
		if _, ok := cm.Metadata.Labels["grafana_dashboard"]; ok {
			t.Errorf("dashboards.enabled=false still renders %s", cm.Metadata.Name)
		}
	}
}

// TestHelmRendersNoSecret: a secret never reaches a rendered object. A
// literal value in any secret field of the gateway config (every field
// config.Config tags secret) is refused, without the value in the error;
// the default render has no Secret object, and every secret field of
// its config comes from an environment variable that comes from a Secret.
func TestHelmRendersNoSecret(t *testing.T) {
	helm := requireHelm(t)
	const sentinel = "sentinel-secret-7f3a9c"
	paths := secretFieldPaths(reflect.TypeFor[config.Config](), "")
	if len(paths) < 4 {
		t.Fatalf("config.Config has %d secret fields (%v); expected at least the API, admin and ingest tokens and provider keys", len(paths), paths)
	}
	for _, p := range paths {
		stdout, stderr, code := helmRun(t, helm, "template", releaseName, chartDir, "--set", "config."+p+"="+sentinel)
		if code == 0 {
			t.Errorf("config.%s set to a literal renders; want it refused", p)
		}
		if strings.Contains(stdout+stderr, sentinel) {
			var lines []string
			for _, l := range strings.Split(stdout+stderr, "\n") {
				if strings.Contains(l, sentinel) {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			t.Errorf("config.%s=%s: the value appears in helm's output: %q", p, sentinel, lines)
		}
	}

	r := render(t, helm)
	if n := len(r.all("Secret")); n != 0 {
		t.Errorf("the chart renders %d Secret objects; it only refers to Secrets by name", n)
	}
	_, _, gw := r.gateway(t)
	env := map[string]envVar{}
	for _, e := range gw.Env {
		env[e.Name] = e
	}
	text := r.gatewayConfig(t)
	cfg, err := config.Parse([]byte(text), func(k string) (string, bool) { return "<" + k + ">", true })
	if err != nil {
		t.Fatal(err)
	}
	whole := regexp.MustCompile(`^(<[A-Za-z_][A-Za-z0-9_]*>)+$`)
	checked := 0
	for _, f := range secretValues(reflect.ValueOf(cfg).Elem(), "") {
		if f.value == "" {
			continue
		}
		checked++
		if !whole.MatchString(f.value) {
			t.Errorf("rendered config %s is not made of ${VAR} references only", f.path)
			continue
		}
		for _, m := range regexp.MustCompile(`<([^>]+)>`).FindAllStringSubmatch(f.value, -1) {
			if e, ok := env[m[1]]; !ok || e.secret() == nil || e.Value != "" {
				t.Errorf("rendered config %s reads ${%s}, which the gateway pod does not take from a Secret (%+v)", f.path, m[1], e)
			}
		}
	}
	if checked == 0 {
		t.Error("no secret field set in the default config: nothing was checked")
	}
}

// secretFieldPaths lists --set paths (under config.) of every field
// tagged secret:"true", with one map key "p" and slice index 0.
func secretFieldPaths(t reflect.Type, prefix string) []string {
	var out []string
	switch t.Kind() {
	case reflect.Pointer:
		return secretFieldPaths(t.Elem(), prefix)
	case reflect.Map:
		return secretFieldPaths(t.Elem(), prefix+".p")
	case reflect.Slice:
		return secretFieldPaths(t.Elem(), prefix+"[0]")
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			p := strings.TrimPrefix(prefix+"."+name, ".")
			if f.Tag.Get("secret") == "true" {
				switch f.Type.Kind() {
				case reflect.Slice:
					p += "[0]"
				case reflect.Map: // every value is secret (headers, query)
					p += ".p"
				}
				out = append(out, p)
				continue
			}
			out = append(out, secretFieldPaths(f.Type, p)...)
		}
	}
	return out
}

type fieldValue struct{ path, value string }

// secretValues are the values of every secret-tagged field of a config.
func secretValues(v reflect.Value, path string) []fieldValue {
	var out []fieldValue
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = append(out, secretValues(v.Elem(), path)...)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out = append(out, secretValues(v.MapIndex(k), path+"."+k.String())...)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			out = append(out, secretValues(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "" {
				continue
			}
			p := strings.TrimPrefix(path+"."+name, ".")
			if f.Tag.Get("secret") != "true" {
				out = append(out, secretValues(v.Field(i), p)...)
				continue
			}
			switch fv := v.Field(i); fv.Kind() {
			case reflect.String:
				out = append(out, fieldValue{p, fv.String()})
			case reflect.Slice:
				for j := 0; j < fv.Len(); j++ {
					out = append(out, fieldValue{fmt.Sprintf("%s[%d]", p, j), fv.Index(j).String()})
				}
			case reflect.Map:
				for _, k := range fv.MapKeys() {
					out = append(out, fieldValue{p + "." + k.String(), fv.MapIndex(k).String()})
				}
			}
		}
	}
	return out
}

// adaptToLoopback is a rendered gateway config with its listeners on the
// given loopback addresses, no span export (the collector's Service name
// resolves only in the cluster) and a short shutdown.delay, so the test
// process can run it; the rest is the chart's.
func adaptToLoopback(t *testing.T, text, api, admin string) string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	m["listen"] = api
	sub := func(key string) map[string]any {
		s, _ := m[key].(map[string]any)
		if s == nil {
			s = map[string]any{}
			m[key] = s
		}
		return s
	}
	sub("admin")["listen"] = admin
	delete(sub("telemetry"), "otlp_endpoint")
	sub("shutdown")["delay"] = "2s"
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// checkDocSays fails unless docs/operations.md's section under heading
// says each of wants: the docs give the chart's defaults as rendered.
func checkDocSays(t *testing.T, heading string, wants ...string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/operations.md has no %q section", heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	section = strings.Join(strings.Fields(section), " ")
	for _, w := range wants {
		if !strings.Contains(section, w) {
			t.Errorf("docs/operations.md %q does not say %q, which the chart renders", heading, w)
		}
	}
}
