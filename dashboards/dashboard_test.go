package dashboards

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

var update = flag.Bool("update", false, "rewrite "+JSONFile+" from Build()")

// firstbyte.json is what Grafana loads; it must be exactly what the code
// says, or a reviewer reads one dashboard and operators get another.
func TestDashboardUpToDate(t *testing.T) {
	want, err := Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if *update {
		if err := os.WriteFile(JSONFile, want, 0o644); err != nil {
			t.Fatalf("writing %s: %v", JSONFile, err)
		}
		return
	}
	got, err := os.ReadFile(JSONFile)
	if err != nil {
		t.Fatalf("reading %s: %v\nGenerate it with `go generate ./dashboards/`.", JSONFile, err)
	}
	if !bytes.Equal(got, want) {
		n, file, code := firstDifference(got, want)
		t.Fatalf("dashboards/%s differs from what Build() generates, first at line %d:\n  file: %s\n  code: %s\n"+
			"Edit dashboards/panels.go (not the JSON), then regenerate with `go generate ./dashboards/` "+
			"(or `go test ./dashboards/ -run TestDashboardUpToDate -update`) and commit both.", JSONFile, n, file, code)
	}
}

func firstDifference(a, b []byte) (line int, la, lb string) {
	as, bs := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < max(len(as), len(bs)); i++ {
		la, lb = "<end of file>", "<end of file>"
		if i < len(as) {
			la = as[i]
		}
		if i < len(bs) {
			lb = bs[i]
		}
		if la != lb {
			return i + 1, strings.TrimSpace(la), strings.TrimSpace(lb)
		}
	}
	return 0, "", ""
}

// The JSON, read back generically as Grafana reads it, has what the
// provisioning and the panels rely on.
func TestDashboardModel(t *testing.T) {
	t.Parallel()
	raw, err := Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	var d struct {
		SchemaVersion int    `json:"schemaVersion"`
		UID           string `json:"uid"`
		Templating    struct {
			List []struct {
				Name, Type, Query string
				Datasource        *struct{ Type, UID string }
				Multi, IncludeAll bool
			}
		}
		Panels []struct {
			ID          int
			Type, Title string
			Description string
			GridPos     struct{ H, W, X, Y int }
			Datasource  *struct{ Type, UID string }
			Targets     []struct {
				RefID      string
				Expr       string
				Exemplar   bool
				Datasource *struct{ Type, UID string }
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion = %d, want >= 39 (current Grafana)", d.SchemaVersion)
	}
	if d.UID == "" {
		t.Error("uid is empty: provisioning and links need a stable uid")
	}

	vars := map[string]int{}
	for i, v := range d.Templating.List {
		vars[v.Name] = i
	}
	if i, ok := vars[VarDatasource]; !ok || d.Templating.List[i].Type != "datasource" || d.Templating.List[i].Query != "prometheus" {
		t.Errorf("want a %q variable of type datasource listing prometheus datasources; templating = %+v", VarDatasource, d.Templating.List)
	}
	if i, ok := vars[VarModel]; !ok {
		t.Errorf("no %q variable", VarModel)
	} else if v := d.Templating.List[i]; v.Type != "query" || v.Query != "label_values(firstbyte_requests_total, model)" ||
		v.Datasource == nil || v.Datasource.UID != "${datasource}" {
		t.Errorf("model variable = %+v, want a query variable label_values(firstbyte_requests_total, model) on ${datasource}", v)
	}

	ids, titles := map[int]bool{}, map[string]bool{}
	type rect struct {
		title      string
		x, y, w, h int
	}
	var placed []rect
	exemplarPanels := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.X < 0 || g.W <= 0 || g.H <= 0 || g.X+g.W > gridWidth {
			t.Errorf("panel %q gridPos %+v does not fit the %d-wide grid", p.Title, g, gridWidth)
		}
		for _, o := range placed {
			if g.X < o.x+o.w && o.x < g.X+g.W && g.Y < o.y+o.h && o.y < g.Y+g.H {
				t.Errorf("panels %q %+v and %q overlap", p.Title, g, o.title)
			}
		}
		placed = append(placed, rect{p.Title, g.X, g.Y, g.W, g.H})
		if p.Type == "row" {
			continue
		}
		if titles[p.Title] {
			t.Errorf("panel title %q is used twice (Queries and the integration test name panels by title)", p.Title)
		}
		titles[p.Title] = true
		if p.Description == "" {
			t.Errorf("panel %q has no description: say what a reading means", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q datasource = %+v, want uid ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if refs[q.RefID] || q.RefID == "" {
				t.Errorf("panel %q: refId %q empty or repeated", p.Title, q.RefID)
			}
			refs[q.RefID] = true
			if q.Datasource == nil || q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q query %s datasource = %+v, want uid ${datasource}", p.Title, q.RefID, q.Datasource)
			}
			if strings.TrimSpace(q.Expr) == "" {
				t.Errorf("panel %q query %s is empty", p.Title, q.RefID)
			}
			if q.Exemplar {
				if !strings.Contains(q.Expr, "firstbyte_ttfb_seconds_bucket") {
					t.Errorf("panel %q query %s asks for exemplars of a series that has none: %s", p.Title, q.RefID, q.Expr)
				}
				exemplarPanels++
			}
		}
	}
	if exemplarPanels == 0 {
		t.Error("no query over firstbyte_ttfb_seconds_bucket has exemplars enabled: the trace_id links would not show")
	}
	if got, want := len(Queries()), countTargets(raw); got != want {
		t.Errorf("Queries() lists %d queries, the JSON has %d", got, want)
	}
}

func countTargets(raw []byte) int {
	return bytes.Count(raw, []byte(`"refId":`))
}

// Rows and panels land on the grid as Grafana lays them out: left to
// right, wrapping at the grid width, each row below the tallest panel of
// the line before, ids in order.
func TestAssembleLayout(t *testing.T) {
	t.Parallel()
	p := func(w, h uint32) cog.Builder[dashboard.Panel] {
		return timeseries.NewPanelBuilder().Title(fmt.Sprintf("%dx%d", w, h)).Span(w).Height(h)
	}
	b := dashboard.NewDashboardBuilder("layout")
	assemble(b, []row{
		{title: "a", panels: []cog.Builder[dashboard.Panel]{p(12, 8), p(12, 6), p(16, 4), p(8, 4), p(24, 2)}},
		{title: "b", panels: []cog.Builder[dashboard.Panel]{p(6, 3)}},
	})
	d, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []dashboard.GridPos{
		{H: 1, W: 24, X: 0, Y: 0},  // row a
		{H: 8, W: 12, X: 0, Y: 1},  //
		{H: 6, W: 12, X: 12, Y: 1}, // same line
		{H: 4, W: 16, X: 0, Y: 9},  // wraps below the taller of the two
		{H: 4, W: 8, X: 16, Y: 9},  //
		{H: 2, W: 24, X: 0, Y: 13}, //
		{H: 1, W: 24, X: 0, Y: 15}, // row b
		{H: 3, W: 6, X: 0, Y: 16},
	}
	if len(d.Panels) != len(want) {
		t.Fatalf("assemble gave %d panels, want %d", len(d.Panels), len(want))
	}
	for i := range want {
		var id uint32
		var pos *dashboard.GridPos
		if r := d.Panels[i].RowPanel; r != nil {
			id, pos = r.Id, r.GridPos
		} else if p := d.Panels[i].Panel; p != nil && p.Id != nil {
			id, pos = *p.Id, p.GridPos
		}
		if pos == nil || *pos != want[i] || id != uint32(i+1) {
			t.Errorf("panel %d: id %d gridPos %+v, want id %d %+v", i, id, pos, i+1, want[i])
		}
	}
}

// Panel JSON is marshalled by the SDK with HTML escaping; the committed
// file has PromQL's < > & as written, and nothing else changes.
func TestUnescapeHTML(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"comparison", `{"expr":"x \u003e 0 \u0026 y \u003c 1"}`, `{"expr":"x > 0 & y < 1"}`},
		{"escaped backslash before u003c stays", `"a\\u003c"`, `"a\\u003c"`},
		{"other escapes stay", `"\u00e9 \n \""`, `"\u00e9 \n \""`},
		{"trailing backslash", `\`, `\`},
	}
	for _, tt := range tests {
		in := strings.ReplaceAll(tt.in, `\`, `\`)
		want := strings.ReplaceAll(tt.want, `\`, `\`)
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("%s: unescapeHTML(%s) = %s, want %s", tt.name, in, got, want)
		}
	}
	// The round trip: what json reads back is what was written.
	in := map[string]string{"expr": `a < b && c > "d" <`}
	raw, _ := json.Marshal(in)
	var out map[string]string
	if err := json.Unmarshal(unescapeHTML(raw), &out); err != nil || out["expr"] != in["expr"] {
		t.Errorf("round trip of %q gave %q (%v)", in["expr"], out["expr"], err)
	}
}

func ExampleQueries() {
	for _, q := range Queries()[:1] {
		fmt.Printf("%s (%s): %s\n", q.Panel, q.RefID, q.Expr)
	}
	// Output:
	// Leader and exploration share (A): (sum by (model) (rate(firstbyte_selections_total{reason="leader", model=~"$model", instance=~"$instance"}[$__rate_interval])) or 0 * sum by (model) (rate(firstbyte_selections_total{model=~"$model", instance=~"$instance"}[$__rate_interval]))) / sum by (model) (rate(firstbyte_selections_total{model=~"$model", instance=~"$instance"}[$__rate_interval]))
}

// The SDK is for generating the JSON; the gateway binary must not link it
// (it would carry the SDK's thousands of generated types for nothing).
func TestGatewayDoesNotLinkTheSDK(t *testing.T) {
	t.Parallel()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "list", "-deps", "../cmd/firstbyte").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ../cmd/firstbyte: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("github.com/firstbyte-dev/firstbyte/router")) {
		t.Fatalf("go list -deps ../cmd/firstbyte does not list the router; the check below would pass vacuously:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/grafana/") || dep == "github.com/firstbyte-dev/firstbyte/dashboards" {
			t.Errorf("cmd/firstbyte depends on %s: only the dashboards package and its tests may use the Grafana SDK", dep)
		}
	}
}
