package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheck(t *testing.T) {
	t.Setenv("FIRSTBYTE_API_KEY", "k")
	t.Setenv("GROQ_API_KEY", "g")
	code, out, _ := runCmd("check", "-config", "../../router/config/testdata/valid.yaml")
	if code != 0 || !strings.Contains(out, "ok") || !strings.Contains(out, "model llama-3.3-70b") || !strings.Contains(out, "groq→llama-3.3-70b-versatile") {
		t.Errorf("check valid: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "gsk") || strings.Contains(out, "k1") {
		t.Errorf("check printed a secret:\n%s", out)
	}

	code, _, errOut := runCmd("check", "-config", "../../router/config/testdata/many_errors.yaml")
	if code != 1 {
		t.Errorf("check invalid: exit %d, want 1", code)
	}
	for _, want := range []string{"targets[0].virtual_key: unknown provider \"grok\"", "strategy.mode: unknown mode", "providers.groq.kind: unknown kind"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}
}

func TestServeRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCmd("serve", "-config", "../../router/config/testdata/many_errors.yaml")
	if code != 1 || !strings.Contains(errOut, "targets[1].retry.attempts") {
		t.Errorf("serve with invalid config: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runCmd("serve", "-config", "does-not-exist.yaml")
	if code != 1 || !strings.Contains(errOut, "does-not-exist.yaml") {
		t.Errorf("serve with missing config: exit %d\n%s", code, errOut)
	}
}

func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	code, out, _ := runCmd("version")
	if code != 0 || !strings.Contains(out, runtime.Version()) || !strings.HasPrefix(out, "firstbyte ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	if code, _, errOut := runCmd("frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, _ := runCmd(); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code, _, errOut := runCmd("sim"); code != 2 || !strings.Contains(errOut, "-config") {
		t.Errorf("sim without config: exit %d, %q", code, errOut)
	}
}

// TestDemoRunsAndStops runs the embedded demo briefly on free ports: it must
// serve traffic, learn a leader and stop by itself. 8 s: under the race
// detector on two cores shared at a load average of 30, 3 s ended before
// the demo's first answer.
func TestDemoRunsAndStops(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCmd("demo", "-duration", "8s", "-listen", "127.0.0.1:0", "-admin", "127.0.0.1:0")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"groq-sim", "together-sim", "claude-sim", "★ leader", "demo stopped after"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, ", 0 failed") {
		t.Errorf("demo had failed requests:\n%s", out)
	}
}
