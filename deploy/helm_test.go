package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A Helm chart can only read files inside its own directory, so the chart
// carries a copy of the Grafana dashboards (deploy/helm/firstbyte/
// dashboards/). A copy that must be refreshed by hand drifts; this test
// makes it fail the build instead: the chart's copy is the repository's
// dashboards/*.json, byte for byte, no file more or less. (The repository's
// file is itself generated from dashboards/panels.go and checked the same
// way.) A symlink would work for `helm` on Linux, but not in a packaged
// chart from every platform's checkout, and a copy made at build time
// would leave the chart in the repository without its dashboards.

const chartDir = "helm/firstbyte"

func TestHelmChartDashboardsAreTheRepositorys(t *testing.T) {
	want, err := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no dashboards/*.json (%v)", err)
	}
	got, err := filepath.Glob(filepath.Join(chartDir, "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(base(got), base(want)) {
		t.Errorf("the chart's dashboards are %v, the repository's %v: copy them with\n"+
			"  rm -f deploy/helm/firstbyte/dashboards/*.json && cp dashboards/*.json deploy/helm/firstbyte/dashboards/", base(got), base(want))
	}
	for _, src := range want {
		dst := filepath.Join(chartDir, "dashboards", filepath.Base(src))
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil {
			continue // reported above
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s: the chart would install another dashboard than the repository's; copy it with\n"+
				"  cp dashboards/%s deploy/helm/firstbyte/dashboards/", "deploy/"+dst, "dashboards/"+filepath.Base(src), filepath.Base(src))
		}
	}
}
