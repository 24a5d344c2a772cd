//go:build integration

package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every configuration file of the stack through the tool that reads it in
// the stack: the built gateway's `check` (the same loader `serve` runs)
// and its subcommands' own flag parsers, the built collector's `validate`
// with the service's environment, and `promtool check config`. Each tool
// is first shown a broken file, so a tool that accepts anything cannot
// make this test pass.
//
// Run: make test-integration, or
//
//	make build otelcol && FIRSTBYTE_BIN=$PWD/bin/firstbyte OTELCOL_BIN=$PWD/bin/firstbyte-otelcol \
//	  go test -count=1 -tags integration ./deploy/
//
// Nothing here listens: the checks only read files.

type deployTools struct{ firstbyte, otelcol, promtool string }

// requireDeployTools finds the binaries; a missing one fails the test
// (CI builds and installs them), it is never skipped.
func requireDeployTools(t *testing.T) deployTools {
	t.Helper()
	var tl deployTools
	var missing []string
	for _, b := range []struct {
		dst      *string
		env, how string
	}{
		{&tl.firstbyte, "FIRSTBYTE_BIN", "make build"},
		{&tl.otelcol, "OTELCOL_BIN", "make otelcol"},
	} {
		p := os.Getenv(b.env)
		if st, err := os.Stat(p); p == "" || err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, fmt.Sprintf("%s=%q is not an executable (run `%s`, or `make test-integration`)", b.env, p, b.how))
		}
		*b.dst = p
	}
	tl.promtool = os.Getenv("PROMTOOL_BIN")
	if tl.promtool == "" {
		p, err := exec.LookPath("promtool")
		if err != nil {
			missing = append(missing, "promtool is not on PATH (nor in PROMTOOL_BIN): install the Debian package prometheus, as .ci/run does")
		}
		tl.promtool = p
	}
	if len(missing) > 0 {
		t.Fatalf("missing tools:\n  %s", strings.Join(missing, "\n  "))
	}
	return tl
}

// checkFirstbyteCommands: every service of the gateway image runs a
// firstbyte subcommand with flags it has, and so does each health check.
func checkFirstbyteCommands(t *testing.T, tl deployTools, s *stack) {
	checked := 0
	for _, name := range s.names() {
		sv := s.services[name]
		if sv.Build == nil || sv.Build.Target != "gateway" {
			continue
		}
		if len(sv.Command) == 0 {
			t.Errorf("service %s runs the image's default command; name it, so it is checked here", name)
			continue
		}
		checked += checkSubcommand(t, tl, sv, "service "+name, sv.Command)
		if hc := sv.Healthcheck; hc != nil && len(hc.Test) > 2 {
			checked += checkSubcommand(t, tl, sv, "service "+name+"'s healthcheck", hc.Test[2:])
		}
	}
	if checked == 0 {
		t.Error("no firstbyte flag was checked")
	}
}

// checkHealthchecksDialAdmin runs each gateway's health check, as compose
// gives it, with the real binary: nothing listens here, so it fails, and
// says which URL it tried, which must be the replica's own admin
// listener on loopback.
func checkHealthchecksDialAdmin(t *testing.T, tl deployTools, s *stack) {
	n := loadNetwork(t, s)
	checked := 0
	for _, name := range serviceOfKind(s, "firstbyte serve") {
		sv := s.services[name]
		cfg := n.gateways[name]
		if sv.Healthcheck == nil || len(sv.Healthcheck.Test) < 3 || cfg == nil {
			continue // reported by the compose tests
		}
		// The healthcheck's own arguments, its config path replaced by the
		// repository's file, with a short timeout: nothing listens here,
		// so it fails, naming the URL it tried.
		args := slices.Clone(sv.Healthcheck.Test[2:])
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-config" {
				file, err := mountedFile(sv, args[i+1])
				if err != nil {
					t.Fatalf("%s healthcheck: %v", name, err)
				}
				args[i+1] = file
			}
		}
		args = append(args, "-timeout", "300ms")
		r := runTool(t, serviceEnv(t, sv), tl.firstbyte, args...)
		m := regexp.MustCompile(`GET (http://\S+)/readyz: `).FindStringSubmatch(r.out)
		if m == nil {
			t.Errorf("service %s: firstbyte %s said %q; want \"GET URL/readyz: ...\"", name, strings.Join(args, " "), r.out)
			continue
		}
		addr, err := urlAddr(m[1])
		if err != nil {
			t.Fatal(err)
		}
		host, port, err := hostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		_, adminPort, _ := hostPort(cfg.Admin.Listen)
		if !isLoopback(host) || port != adminPort {
			t.Errorf("service %s: its health check dials %s; its admin listener is %s, which the check reaches at 127.0.0.1:%d in its own container",
				name, addr, cfg.Admin.Listen, adminPort)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no gateway health check was run")
	}
}

// checkSubcommand runs `firstbyte SUB -h` for argv (SUB and its
// arguments) and checks that SUB is a subcommand and that every flag argv
// gives is one of its flags; it returns how many flags it checked.
func checkSubcommand(t *testing.T, tl deployTools, sv service, who string, argv []string) int {
	t.Helper()
	// The flag parser of a subcommand lists its flags on -h; an unknown
	// subcommand says so instead.
	sub := argv[0]
	r := runTool(t, serviceEnv(t, sv), tl.firstbyte, sub, "-h")
	if strings.Contains(r.out, "unknown command") || !strings.Contains(r.out, "Usage of "+sub) {
		t.Errorf("%s runs `firstbyte %s`, which is not a firstbyte subcommand:\n%s", who, sub, r.out)
		return 0
	}
	checked := 0
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.Contains(r.out, "  -"+flag+" ") && !strings.Contains(r.out, "  -"+flag+"\n") {
			t.Errorf("%s: `firstbyte %s` has no flag -%s:\n%s", who, sub, flag, r.out)
		}
		checked++
	}
	return checked
}

// serviceEnv is the environment a service's process gets: compose's
// environment for it, and nothing of the caller's (a FIRSTBYTE_ or OTEL_
// variable set where the test runs must not change the result).
func serviceEnv(t *testing.T, sv service) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range sv.Environment {
		env = append(env, k+"="+v)
	}
	return env
}

type run struct {
	out  string
	code int
}

func runTool(t *testing.T, env []string, name string, args ...string) run {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return run{out: out.String()}
	case errors.As(err, &exit):
		return run{out: out.String(), code: exit.ExitCode()}
	}
	t.Fatalf("%s %v: %v", name, args, err)
	return run{}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStackFilesPassTheirTools(t *testing.T) {
	tl := requireDeployTools(t)
	s := loadStack(t)

	t.Run("firstbyte check accepts every gateway config", func(t *testing.T) {
		bad := writeTemp(t, "bad.yaml", "listen: 0.0.0.0:8080\nprovidrs: {}\n")
		if r := runTool(t, serviceEnv(t, service{}), tl.firstbyte, "check", "-config", bad); r.code == 0 {
			t.Fatalf("firstbyte check accepts a config with an unknown key:\n%s", r.out)
		}
		gateways := serviceOfKind(s, "firstbyte serve")
		if len(gateways) == 0 {
			t.Fatal("no firstbyte serve service")
		}
		for _, name := range gateways {
			sv := s.services[name]
			path, err := oneFlag(sv, "config")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			file, err := mountedFile(sv, path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r := runTool(t, serviceEnv(t, sv), tl.firstbyte, "check", "-config", file)
			if r.code != 0 {
				t.Errorf("service %s: firstbyte check -config %s (with its compose environment) exits %d:\n%s", name, repoRel(file), r.code, r.out)
			} else {
				t.Logf("service %s: firstbyte check -config %s:\n%s", name, repoRel(file), r.out)
			}
		}
	})

	t.Run("every firstbyte command is a subcommand with those flags", func(t *testing.T) {
		checkFirstbyteCommands(t, tl, s)
	})

	t.Run("the gateways' health checks dial their own admin listener", func(t *testing.T) {
		checkHealthchecksDialAdmin(t, tl, s)
	})

	t.Run("the collector validates its configs with the service's environment", func(t *testing.T) {
		bad := writeTemp(t, "bad.yaml", "receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:0}}}}\n"+
			"exporters: {nosuch: {}}\nservice: {pipelines: {traces: {receivers: [otlp], exporters: [nosuch]}}}\n")
		if r := runTool(t, serviceEnv(t, service{}), tl.otelcol, "validate", "--config=file:"+bad); r.code == 0 {
			t.Fatalf("firstbyte-otelcol validate accepts an unknown exporter:\n%s", r.out)
		}
		collectors := serviceOfKind(s, "firstbyte-otelcol")
		if len(collectors) == 0 {
			t.Fatal("no collector service")
		}
		for _, name := range collectors {
			sv := s.services[name]
			files, err := collectorFiles(sv)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// The service's own arguments, with the mounted paths replaced by
			// the repository's files.
			args := []string{"validate"}
			i := 0
			for _, a := range sv.args() {
				if strings.HasPrefix(a, "--config=file:") {
					a = "--config=file:" + files[i]
					i++
				}
				args = append(args, a)
			}
			r := runTool(t, serviceEnv(t, sv), tl.otelcol, args...)
			if r.code != 0 {
				t.Errorf("service %s: firstbyte-otelcol %s exits %d:\n%s", name, strings.Join(args, " "), r.code, r.out)
			}
		}
	})

	t.Run("promtool accepts the Prometheus config", func(t *testing.T) {
		bad := writeTemp(t, "bad.yml", "scrape_configs:\n  - job_name: x\n    static_configs: [{targets: [\"a:1\"]}]\n    scrape_interval: soon\n")
		if r := runTool(t, serviceEnv(t, service{}), tl.promtool, "check", "config", bad); r.code == 0 {
			t.Fatalf("promtool check config accepts a bad scrape_interval:\n%s", r.out)
		}
		proms := serviceOfKind(s, "prometheus")
		if len(proms) == 0 {
			t.Fatal("no prometheus service")
		}
		for _, name := range proms {
			sv := s.services[name]
			path, err := oneFlag(sv, "config.file")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			file, err := mountedFile(sv, path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r := runTool(t, serviceEnv(t, sv), tl.promtool, "check", "config", file); r.code != 0 {
				t.Errorf("service %s: promtool check config %s exits %d:\n%s", name, repoRel(file), r.code, r.out)
			}
		}
	})
}
