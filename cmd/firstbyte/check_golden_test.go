package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the check golden files from what check prints now")

// checkGoldenTests run `firstbyte check` on a config and compare its exit
// code, stdout and stderr with testdata/check/NAME.golden. env is set for
// the run; a variable mapped to unset is removed from the environment.
// Run `go test -run TestCheckGolden -update` after an intended change and
// read the diff.
var checkGoldenTests = []struct {
	name   string
	config string
	env    map[string]string
}{
	{
		// OPENAI_API_KEY= is "set but empty"; FIRSTBYTE_API_KEY unset is one
		// error, not also "must not be empty"; GROQ_BASE_URL unset is one
		// error, not also "required".
		name: "env_empty", config: "../../router/config/testdata/env_empty.yaml",
		env: map[string]string{"OPENAI_API_KEY": "", "FIRSTBYTE_API_KEY": unset, "GROQ_BASE_URL": unset, "GROQ_API_KEY": unset},
	},
	{
		// The typo first, then the prices no target reads because of it.
		name: "virtual_key_typo", config: "../../router/config/testdata/virtual_key_typo.yaml",
	},
	{
		// A typo in a parent key (target:) hides no typo beneath it: each
		// is listed under the path the file writes.
		name: "unknown_parent_key", config: "../../router/config/testdata/unknown_parent_key.yaml",
	},
	{
		// Warnings only: exit 0, the summary says how many, each on stderr.
		name: "base_url_paths", config: "../../router/config/testdata/base_url_paths.yaml",
	},
	{
		// A placeholder key (api_key: a) is a warning, not an error: exit 0,
		// the summary counts it, the key itself is never shown.
		name: "short_keys", config: "../../router/config/testdata/short_keys.yaml",
	},
	{
		// Errors and a warning: exit 1, the errors, then the warning.
		name: "errors_and_warning", config: "testdata/check/errors_and_warning.yaml",
	},
	{
		// The summary: per provider its timeouts, concurrency and breaker;
		// per target its retries.
		name: "summary", config: "../../router/config/testdata/valid.yaml",
		env: map[string]string{"FIRSTBYTE_API_KEY": "k", "GROQ_API_KEY": "gsk-test-key", "ADMIN_TOKEN": unset, "TOGETHER_API_KEY": unset, "INGEST_TOKEN": unset},
	},
}

// unset in a checkGoldenTests env removes the variable.
const unset = "\x00unset"

func TestCheckGolden(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	for _, tt := range checkGoldenTests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, "") // restored after the test, whatever happens below
				if v == unset {
					os.Unsetenv(k)
				} else {
					os.Setenv(k, v)
				}
			}
			code, out, errOut := runCmd("check", "-config", tt.config)
			got := fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, out, errOut)
			golden := filepath.Join("testdata", "check", tt.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("check printed a credential of a base_url:\n%s", got)
			}
			if got != string(want) {
				t.Errorf("check -config %s printed\n%s\nwant (%s)\n%s", tt.config, got, golden, want)
			}
		})
	}
}
