//go:build integration

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runFirstbyte runs the binary with args to completion (bounded) and
// returns its exit code and output.
func runFirstbyte(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := startChildProc(t, "firstbyte "+strings.Join(args, " "), requireBinary(t, "FIRSTBYTE_BIN"), childEnv(), args...)
	code = p.wait(t, 15*time.Second)
	return code, p.stdout.String(), p.stderr.String()
}

func writeTempConfig(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// badConfig has one problem of each kind Validate knows, in several fields.
const badConfig = `
listen: nonsense
providers:
  good:  {kind: openai, base_url: "http://127.0.0.1:1/v1", models: [m1]}
  weird: {kind: grpc}
  nourl: {kind: anthropic, api_key: "${FIRSTBYTE_IT_SURELY_UNSET}"}
strategy: {mode: fastest-please}
targets:
  - {virtual_key: ghost, model_map: {m1: x}}
  - {virtual_key: good, retry: {attempts: -1}}
  - {virtual_key: nourl}
`

// badConfigErrors are the lines `check` must print for badConfig.
var badConfigErrors = []string{
	`listen: invalid address "nonsense"`,
	`providers.nourl.api_key: environment variable FIRSTBYTE_IT_SURELY_UNSET is not set`,
	`providers.nourl.base_url: required`,
	`providers.weird.kind: unknown kind "grpc"`,
	`providers.weird.base_url: required`,
	`strategy.mode: unknown mode "fastest-please"`,
	`targets[0].virtual_key: unknown provider "ghost"`,
	`targets[1].retry.attempts: must be 0 or positive`,
	`targets[2]: serves no model`,
}

// TestCheckReportsEveryError: `firstbyte check` on a bad config exits 1 and
// prints every problem as field.path: message.
func TestCheckReportsEveryError(t *testing.T) {
	t.Parallel()
	path := writeTempConfig(t, "bad.yaml", badConfig)
	code, stdout, stderr := runFirstbyte(t, "check", "-config", path)
	if code != 1 {
		t.Errorf("check bad.yaml exit code = %d, want 1", code)
	}
	out := stdout + stderr
	for _, want := range badConfigErrors {
		if !containsLine(out, want) {
			t.Errorf("check bad.yaml output has no line starting %q:\n%s", want, out)
		}
	}

	tests := []struct {
		name, config, want string
	}{
		{name: "unknown key", config: "lisen: 127.0.0.1:0\n", want: "lisen"},
		{name: "not YAML", config: "providers: [\n", want: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runFirstbyte(t, "check", "-config", writeTempConfig(t, "bad.yaml", tt.config))
			if code != 1 || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("check = %d, output %q; want 1 and a message naming %q", code, stdout+stderr, tt.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		code, stdout, stderr := runFirstbyte(t, "check", "-config", filepath.Join(t.TempDir(), "nope.yaml"))
		if code != 1 || !strings.Contains(stdout+stderr, "nope.yaml") {
			t.Errorf("check on a missing file = %d, output %q; want 1 naming the file", code, stdout+stderr)
		}
	})
}

func containsLine(out, prefix string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return true
		}
	}
	return false
}

// TestServeRefusesABadConfig: `firstbyte serve` on a bad config exits 1
// without ever listening on the addresses the config names.
func TestServeRefusesABadConfig(t *testing.T) {
	t.Parallel()
	api, admin := loopbackAddr(freeLoopbackPort(t)), loopbackAddr(freeLoopbackPort(t))
	path := writeTempConfig(t, "bad.yaml", fmt.Sprintf(`
listen: %s
admin: {listen: %s}
providers:
  good: {kind: openai, base_url: "http://127.0.0.1:1/v1"}
strategy: {mode: fastest-please}
targets:
  - {virtual_key: good, model_map: {m1: x}}
  - {virtual_key: ghost, model_map: {m1: y}}
`, api, admin))
	p := startChildProc(t, "firstbyte serve", requireBinary(t, "FIRSTBYTE_BIN"), childEnv(), "serve", "-config", path)
	deadline := time.Now().Add(10 * time.Second)
	for !p.exited() {
		for _, addr := range []string{api, admin} {
			if c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond); err == nil {
				c.Close()
				t.Errorf("serve with a bad config is listening on %s", addr)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve with a bad config still running after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p.exitCode != 1 {
		t.Errorf("serve bad.yaml exit code = %d, want 1", p.exitCode)
	}
	for _, want := range []string{`strategy.mode: unknown mode "fastest-please"`, `targets[1].virtual_key: unknown provider "ghost"`} {
		if !containsLine(p.output(), want) {
			t.Errorf("serve bad.yaml output has no line %q:\n%s", want, p.output())
		}
	}
	if strings.Contains(p.output(), "firstbyte serving") {
		t.Errorf("serve bad.yaml logged that it is serving:\n%s", p.output())
	}
}

// TestCheckGoodConfigAndVersion: `check` on a good config exits 0 with a
// summary; `version` names the version, the commit and the Go version.
func TestCheckGoodConfigAndVersion(t *testing.T) {
	t.Parallel()
	path := writeTempConfig(t, "good.yaml", `
listen: 127.0.0.1:18080
admin: {listen: 127.0.0.1:19464}
providers:
  groq:   {kind: openai, base_url: "https://api.groq.com/openai/v1", api_key: "${FIRSTBYTE_IT_KEY:-none}"}
  claude: {kind: anthropic, base_url: "https://api.anthropic.com/v1", models: [claude-x]}
targets:
  - {virtual_key: groq, model_map: {llama-3.3-70b: llama-3.3-70b-versatile}}
  - {virtual_key: claude}
`)
	code, stdout, stderr := runFirstbyte(t, "check", "-config", path)
	if code != 0 {
		t.Fatalf("check good.yaml exit code = %d, want 0:\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"ok", "127.0.0.1:18080", "least-latency", "groq", "claude", "llama-3.3-70b", "llama-3.3-70b-versatile", "claude-x"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check good.yaml summary has no %q:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, "\n"); n > 40 {
		t.Errorf("check summary is %d lines, want one screen", n)
	}

	code, stdout, stderr = runFirstbyte(t, "version")
	if code != 0 {
		t.Errorf("version exit code = %d, want 0: %s", code, stderr)
	}
	if !regexp.MustCompile(`^firstbyte \S+ \(commit \S+, go1\.\d+`).MatchString(stdout) {
		t.Errorf("version output = %q, want \"firstbyte VERSION (commit COMMIT, go1.N...)\"", stdout)
	}
}
