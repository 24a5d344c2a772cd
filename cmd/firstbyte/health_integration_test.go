//go:build integration

package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHealthCommandFollowsTheDrain: `firstbyte health`, reading the admin
// address from the same config as the running `firstbyte serve`, exits 0
// while it serves; from SIGTERM on the readiness check fails (503) while
// the liveness check (-live) still passes, for shutdown.delay; once the
// listeners are closed both fail.
func TestHealthCommandFollowsTheDrain(t *testing.T) {
	parallelTimed(t)
	admin := loopbackAddr(freeLoopbackPort(t))
	gw := startGatewayProc(t, "gateway", fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: %s}
shutdown: {delay: 12s, grace: 1s}
providers:
  p: {kind: openai, base_url: "http://127.0.0.1:1/v1", api_key: test-key, models: [m1]}
targets:
  - {virtual_key: p}
`, admin))
	if gw.admin != admin {
		t.Fatalf("gateway admin = %s, want %s", gw.admin, admin)
	}

	health := func(args ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := runFirstbyte(t, append([]string{"health", "-config", gw.configPath}, args...)...)
		return code, stdout + stderr
	}
	if code, out := health(); code != 0 || !strings.Contains(out, "http://"+admin+"/readyz: 200") {
		t.Fatalf("health while serving = exit %d, %q; want 0 from http://%s/readyz", code, out, admin)
	}
	// The environment names the config just as -config does.
	code, stdout, stderr := runFirstbyteEnv(t, []string{"FIRSTBYTE_CONFIG=" + gw.configPath}, "health", "-live")
	if code != 0 || !strings.Contains(stdout, "http://"+admin+"/health: 200") {
		t.Fatalf("FIRSTBYTE_CONFIG=%s health -live = exit %d, %q %q", gw.configPath, code, stdout, stderr)
	}

	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var notReady string
	pollUntil(t, 2*time.Second, "health to fail on /readyz after SIGTERM", func() bool {
		code, out := health()
		notReady = out
		return code == 1
	})
	if !strings.Contains(notReady, "/readyz: 503") || strings.Count(strings.TrimSpace(notReady), "\n") != 0 {
		t.Errorf("health while draining said %q; want one line with /readyz: 503", notReady)
	}
	if code, out := health("-live"); code != 0 {
		t.Errorf("health -live within shutdown.delay = exit %d, %q; want 0: the process is alive", code, out)
	}
	if code := gw.wait(t, 30*time.Second); code != 0 {
		t.Errorf("gateway exit code = %d, want 0", code)
	}
	if code, out := health("-live"); code != 1 || !strings.Contains(out, "connection refused") {
		t.Errorf("health -live after exit = exit %d, %q; want 1, connection refused", code, out)
	}
}

// runFirstbyteEnv is runFirstbyte with extra environment.
func runFirstbyteEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := startChildProc(t, "firstbyte "+strings.Join(args, " "), requireBinary(t, "FIRSTBYTE_BIN"), childEnv(env...), args...)
	code = p.wait(t, 15*time.Second)
	return code, p.stdout.String(), p.stderr.String()
}
