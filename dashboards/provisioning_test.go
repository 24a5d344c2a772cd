package dashboards

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/goccy/go-yaml"
)

// The files that put the dashboard in front of an operator must agree with
// each other, with the gateway and with the walkthrough in
// docs/observability.md. (promtool checks prometheus.yml itself in the
// integration test.)

const (
	dashboardProvisioning  = "provisioning/dashboards/firstbyte.yaml"
	datasourceProvisioning = "provisioning/datasources/datasources.yaml"
	scrapeConfig           = "prometheus.yml"
	observabilityDoc       = "../docs/observability.md"
)

type dashboardProviders struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name    string `yaml:"name"`
		Type    string `yaml:"type"`
		Options struct {
			Path string `yaml:"path"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

type datasources struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
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
	} `yaml:"datasources"`
}

type prometheusConfig struct {
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

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s is not valid YAML: %v", path, err)
	}
}

func TestDashboardProvisioning(t *testing.T) {
	t.Parallel()
	var p dashboardProviders
	readYAML(t, dashboardProvisioning, &p)
	if p.APIVersion != 1 || len(p.Providers) != 1 {
		t.Fatalf("%s: apiVersion %d with %d providers, want apiVersion 1 and one provider", dashboardProvisioning, p.APIVersion, len(p.Providers))
	}
	pr := p.Providers[0]
	if pr.Type != "file" || !filepath.IsAbs(pr.Options.Path) {
		t.Errorf("%s: provider type %q path %q, want a file provider with an absolute path", dashboardProvisioning, pr.Type, pr.Options.Path)
	}
	// The walkthrough mounts dashboards/ where the provider looks.
	doc, err := os.ReadFile(observabilityDoc)
	if err != nil {
		t.Fatalf("reading %s: %v", observabilityDoc, err)
	}
	if !strings.Contains(string(doc), ":"+pr.Options.Path) {
		t.Errorf("%s does not mount dashboards/ at %s, where %s makes Grafana look for %s", observabilityDoc, pr.Options.Path, dashboardProvisioning, JSONFile)
	}
}

func TestDatasourceProvisioning(t *testing.T) {
	t.Parallel()
	var ds datasources
	readYAML(t, datasourceProvisioning, &ds)
	var prom prometheusConfig
	readYAML(t, scrapeConfig, &prom)
	_, exemplarLabels := gatewayMetrics(t)

	uids := map[string]string{} // uid -> type
	for _, d := range ds.Datasources {
		uids[d.UID] = d.Type
	}
	promCount := 0
	for _, d := range ds.Datasources {
		if d.Type != "prometheus" {
			continue
		}
		promCount++
		if d.JSONData.TimeInterval != prom.Global.ScrapeInterval {
			t.Errorf("%s: datasource %s timeInterval %q, want %s's scrape_interval %q ($__rate_interval is computed from it)",
				datasourceProvisioning, d.Name, d.JSONData.TimeInterval, scrapeConfig, prom.Global.ScrapeInterval)
		}
		dests := d.JSONData.ExemplarTraceIDDestinations
		if len(dests) == 0 {
			t.Errorf("%s: datasource %s has no exemplarTraceIdDestinations: TTFB exemplars would not link to traces", datasourceProvisioning, d.Name)
		}
		for _, dest := range dests {
			if !slices.Contains(exemplarLabels, dest.Name) {
				t.Errorf("%s: exemplar destination reads label %q; the gateway's TTFB exemplars carry %v", datasourceProvisioning, dest.Name, exemplarLabels)
			}
			if typ := uids[dest.DatasourceUID]; typ != "tempo" && typ != "jaeger" {
				t.Errorf("%s: exemplar destination points at datasource uid %q (type %q), want a tempo or jaeger datasource of this file",
					datasourceProvisioning, dest.DatasourceUID, typ)
			}
		}
	}
	if promCount != 1 {
		t.Errorf("%s has %d prometheus datasources, want 1", datasourceProvisioning, promCount)
	}
}

// prometheus.yml scrapes the gateway where a default config serves
// /metrics.
func TestScrapeConfigTargetsDefaultAdmin(t *testing.T) {
	t.Parallel()
	var c prometheusConfig
	readYAML(t, scrapeConfig, &c)
	if len(c.ScrapeConfigs) != 1 {
		t.Fatalf("%s has %d scrape configs, want 1 (job firstbyte)", scrapeConfig, len(c.ScrapeConfigs))
	}
	sc := c.ScrapeConfigs[0]
	var targets []string
	for _, s := range sc.StaticConfigs {
		targets = append(targets, s.Targets...)
	}
	if sc.MetricsPath != "/metrics" || !slices.Contains(targets, config.DefaultAdminListen) {
		t.Errorf("%s: job %s scrapes %v at %q, want %s at /metrics (the gateway's default admin.listen)",
			scrapeConfig, sc.JobName, targets, sc.MetricsPath, config.DefaultAdminListen)
	}
}
