//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// configServing is a gateway config on free ports whose one target serves
// models (never asked: these tests only list them).
func configServing(models ...string) string {
	var mm []string
	for _, m := range models {
		mm = append(mm, m+": up")
	}
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
providers:
  p: {kind: openai, base_url: "http://127.0.0.1:1/v1"}
targets:
  - {virtual_key: p, model_map: {%s}}
`, strings.Join(mm, ", "))
}

// servedModels is the ids GET /v1/models lists.
func servedModels(t *testing.T, api string) []string {
	t.Helper()
	var list struct{ Data []struct{ ID string } }
	if err := json.Unmarshal([]byte(httpGetText(t, "http://"+api+"/v1/models", "")), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

// serveIn runs `firstbyte serve args...` with dir as its working directory
// and env added to the environment.
func serveIn(t *testing.T, dir string, env []string, args ...string) *childProc {
	t.Helper()
	bin := requireBinary(t, "FIRSTBYTE_BIN")
	return startChildProc(t, "firstbyte serve", "/bin/sh", childEnv(env...),
		append([]string{"-c", `cd "$1" && shift && exec "$0" serve "$@"`, bin, dir}, args...)...)
}

func reloadAdmin(t *testing.T, admin string) {
	t.Helper()
	resp, err := http.Post("http://"+admin+"/admin/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /admin/reload: %d %s", resp.StatusCode, b)
	}
}

// TestServeFindsItsConfig: `serve` without -config reads the file that
// FIRSTBYTE_CONFIG names, else ./firstbyte.yaml in its working directory;
// -config wins over both; a reload reads the same file again. With none of
// them there it exits 1 naming firstbyte.yaml.
func TestServeFindsItsConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cwdConfig := filepath.Join(dir, "firstbyte.yaml")
	envConfig := filepath.Join(t.TempDir(), "from-env.yaml")
	flagConfig := filepath.Join(t.TempDir(), "from-flag.yaml")
	for path, model := range map[string]string{cwdConfig: "from-cwd", envConfig: "from-env", flagConfig: "from-flag"} {
		if err := os.WriteFile(path, []byte(configServing(model)), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for _, tt := range []struct {
		name     string
		env      []string
		args     []string
		file     string // the file it must have read
		wantFrom string
	}{
		{"FIRSTBYTE_CONFIG, over ./firstbyte.yaml", []string{"FIRSTBYTE_CONFIG=" + envConfig}, nil, envConfig, "from-env"},
		{"./firstbyte.yaml", nil, nil, cwdConfig, "from-cwd"},
		{"-config, over FIRSTBYTE_CONFIG", []string{"FIRSTBYTE_CONFIG=" + envConfig}, []string{"-config", flagConfig}, flagConfig, "from-flag"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gw := waitGatewayServing(t, serveIn(t, dir, tt.env, tt.args...), tt.file)
			if got := servedModels(t, gw.api); !slices.Equal(got, []string{tt.wantFrom}) {
				t.Errorf("models %q, want [%s]: serve read the wrong file", got, tt.wantFrom)
			}
			// A reload reads the same file again.
			original, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.WriteFile(tt.file, original, 0o600) })
			if err := os.WriteFile(tt.file, []byte(configServing(tt.wantFrom, tt.wantFrom+"-reloaded")), 0o600); err != nil {
				t.Fatal(err)
			}
			reloadAdmin(t, gw.admin)
			if got := servedModels(t, gw.api); !slices.Equal(got, []string{tt.wantFrom, tt.wantFrom + "-reloaded"}) {
				t.Errorf("after a reload: models %q, want the file's two", got)
			}
			if code := gw.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
		})
	}

	t.Run("none", func(t *testing.T) {
		empty := t.TempDir()
		p := serveIn(t, empty, nil)
		if code := p.wait(t, 10*time.Second); code != 1 {
			t.Errorf("serve with no config anywhere: exit %d, want 1", code)
		}
		if !strings.Contains(p.output(), "firstbyte.yaml") {
			t.Errorf("serve with no config anywhere does not name firstbyte.yaml:\n%s", p.output())
		}
	})
}
