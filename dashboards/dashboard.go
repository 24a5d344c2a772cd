// Package dashboards generates firstbyte's Grafana dashboard (firstbyte.json)
// from Go, next to the files that put it in front of an operator: Grafana
// provisioning (provisioning/) and the Prometheus scrape config
// (prometheus.yml).
//
// The dashboard is code so that its queries can be tested: every metric a
// query names must be one the gateway exposes, and the integration test
// (build tag integration) evaluates every query against a real Prometheus
// scraping the real binary. It is written with Grafana's typed Go SDK
// (github.com/grafana/grafana-foundation-sdk), so the JSON model is
// Grafana's own and this package only says what the panels show.
// firstbyte.json is generated, never edited by hand: change panels.go and
// run `go generate ./dashboards/`, which also refreshes the Helm chart's
// copy (deploy/helm/firstbyte/dashboards/; a test in deploy/ checks it).
//
// What it must not do: import the packages that define the metrics (only
// its tests do), so the dashboard depends on metric names alone, as a
// Grafana dashboard does; and be imported by the gateway, which has no use
// for the SDK.
package dashboards

//go:generate go test -run ^TestDashboardUpToDate$ -update .
//go:generate cp firstbyte.json ../deploy/helm/firstbyte/dashboards/firstbyte.json

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// JSONFile is the generated dashboard, relative to this package.
const JSONFile = "firstbyte.json"

// UID is the dashboard's stable uid: links and provisioning find it by it.
const UID = "firstbyte"

// The template variables the queries use, as Grafana substitutes them.
const (
	// VarDatasource is the Prometheus datasource every panel queries.
	VarDatasource = "datasource"
	// VarModel is the requested (client-facing) model, multi-value; queries
	// match it with =~ because Grafana substitutes several values as a regex.
	VarModel = "model"
	// VarInstance is the scrape target (one gateway instance), multi-value.
	VarInstance = "instance"
	// rateWindow is Grafana's rate interval: at least four scrape intervals
	// (the datasource's timeInterval), so rate() always has enough samples.
	rateWindow = "$__rate_interval"
)

// gridWidth is Grafana's fixed dashboard width in grid units.
const gridWidth = 24

// Query is one PromQL expression of a panel, with the dashboard's template
// variables still in it.
type Query struct {
	Panel string // panel title, unique in the dashboard
	RefID string // Grafana's A, B, ... within the panel
	Expr  string
}

// Build returns the dashboard JSON exactly as it is committed in
// firstbyte.json: indented, newline-terminated, PromQL readable.
func Build() ([]byte, error) {
	d, err := model()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the dashboard: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, unescapeHTML(raw), "", "  "); err != nil {
		return nil, fmt.Errorf("indenting the dashboard: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// unescapeHTML turns the \u003c, \u003e and \u0026 that encoding/json
// writes for < > & back into the characters, so PromQL comparisons and
// label matchers read in the file as they do in Grafana. The SDK's panels
// marshal themselves with json.Marshal, so an Encoder's SetEscapeHTML(false)
// cannot reach them. Escapes are walked pair by pair, so an escaped
// backslash followed by "u003c" is left alone.
func unescapeHTML(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			out = append(out, raw[i])
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) {
			switch string(raw[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		out = append(out, raw[i], raw[i+1])
		i++
	}
	return out
}

// Queries lists every panel query in dashboard order. The dashboard is
// fixed at compile time, so a definition that does not build is a bug in
// this package: Queries panics with the SDK's error (TestDashboardUpToDate
// reports the same error first).
func Queries() []Query {
	d, err := model()
	if err != nil {
		panic(fmt.Sprintf("dashboards: the dashboard definition does not build: %v", err))
	}
	var qs []Query
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue // a row header
		}
		for _, t := range p.Panel.Targets {
			pq, ok := t.(prometheus.Dataquery)
			if !ok {
				panic(fmt.Sprintf("dashboards: panel %q has a %T query; every query is a Prometheus one", deref(p.Panel.Title), t))
			}
			qs = append(qs, Query{Panel: deref(p.Panel.Title), RefID: deref(pq.RefId), Expr: pq.Expr})
		}
	}
	return qs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// model assembles the dashboard from the rows in panels.go.
func model() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("firstbyte").
		Uid(UID).
		Description("How firstbyte routes: who leads, who explores, what the router ranks on, "+
			"what fails over, and what the gateway itself costs. Generated by dashboards/panels.go.").
		Tags([]string{"firstbyte", "llm", "gateway"}).
		Editable().
		// Shared crosshair: a failover spike lines up with the lead moving.
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("10s").
		Time("now-30m", "now").
		Timezone(common.TimeZoneBrowser).
		Version(1).
		Annotation(dashboard.NewAnnotationQueryBuilder().
			Name("Annotations & Alerts").
			Datasource(common.DataSourceRef{Type: cog.ToPtr("grafana"), Uid: cog.ToPtr("-- Grafana --")}).
			Enable(true).Hide(true).IconColor("rgba(0, 211, 255, 1)").
			Type("dashboard").BuiltIn(1))
	for _, v := range variables() {
		b.WithVariable(v)
	}
	assemble(b, rows())
	return b.Build()
}

// assemble adds the rows to b: a row header, then its panels, numbered in
// order. The SDK places them on the grid left to right, wrapping when a
// line is full, and starts each row below the tallest panel of the last
// line; rows whose widths do not add up to whole lines would leave holes,
// which TestDashboardModel catches as panels off the grid.
func assemble(b *dashboard.DashboardBuilder, rs []row) {
	id := uint32(1)
	for _, r := range rs {
		b.WithRow(dashboard.NewRowBuilder(r.title).Id(id))
		id++
		for _, p := range r.panels {
			b.WithPanel(numbered{p, id})
			id++
		}
	}
}

// numbered gives a panel its id: Grafana needs ids unique within the
// dashboard, and the panel builders leave them to the caller.
type numbered struct {
	cog.Builder[dashboard.Panel]
	id uint32
}

func (n numbered) Build() (dashboard.Panel, error) {
	p, err := n.Builder.Build()
	if err != nil {
		return p, err
	}
	p.Id = &n.id
	return p, nil
}

// row is a titled band of panels (each with its width and height set).
type row struct {
	title  string
	panels []cog.Builder[dashboard.Panel]
}

func variables() []cog.Builder[dashboard.VariableModel] {
	modelQuery := "label_values(firstbyte_requests_total, model)"
	instanceQuery := `label_values(firstbyte_requests_total{model=~"$model"}, instance)`
	all := dashboard.VariableOption{
		Selected: cog.ToPtr(true),
		Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
		Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
	}
	multi := func(name, label, query string) *dashboard.QueryVariableBuilder {
		return dashboard.NewQueryVariableBuilder(name).
			Label(label).
			Datasource(promDS).
			Query(dashboard.StringOrMap{String: &query}).
			Definition(query).
			// Refresh on time range change: models and instances come and
			// go with config and deployments.
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).
			IncludeAll(true).
			AllValue(".*").
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Current(all)
	}
	return []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder(VarDatasource).Label("Prometheus").Type("prometheus"),
		multi(VarModel, "Model", modelQuery),
		multi(VarInstance, "Instance", instanceQuery),
	}
}
