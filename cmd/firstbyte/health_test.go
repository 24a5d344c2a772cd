package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// adminStub answers /health and /readyz the way the admin listener does,
// with readyz's status set by the test.
func adminStub(t *testing.T, readyz int) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if readyz != http.StatusOK {
			http.Error(w, "not ready", readyz)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /moved/readyz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/readyz", http.StatusFound)
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func TestHealth(t *testing.T) {
	t.Parallel()
	ready := adminStub(t, http.StatusOK)
	draining := adminStub(t, http.StatusServiceUnavailable)
	// A listener that accepts and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	hostPort := strings.TrimPrefix(ready.URL, "http://")

	tests := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{name: "ready", args: []string{"-url", ready.URL}, code: 0, wantStdout: "/readyz: 200 OK"},
		{name: "bare host:port", args: []string{"-url", hostPort}, code: 0, wantStdout: ready.URL + "/readyz"},
		{name: "draining is not ready", args: []string{"-url", draining.URL}, code: 1,
			wantStderr: "GET " + draining.URL + "/readyz: 503 Service Unavailable (not ready)"},
		{name: "draining is alive", args: []string{"-url", draining.URL, "-live"}, code: 0, wantStdout: "/health: 200 OK"},
		{name: "a redirect is not followed", args: []string{"-url", ready.URL + "/moved"}, code: 1, wantStderr: "302 Found"},
		{name: "nothing listening", args: []string{"-url", "http://" + closedLoopbackAddr(t)}, code: 1, wantStderr: "connection refused"},
		{name: "no answer in time", args: []string{"-url", "http://" + silent.Addr().String(), "-timeout", "200ms"}, code: 1,
			wantStderr: "Client.Timeout"},
		{name: "not an http URL", args: []string{"-url", "ftp://x:1"}, code: 1, wantStderr: "want http://HOST:PORT"},
		{name: "bad flag", args: []string{"-nope"}, code: 1, wantStderr: "flag provided but not defined"},
		{name: "stray argument", args: []string{"-url", ready.URL, "extra"}, code: 1, wantStderr: `unexpected argument "extra"`},
		{name: "zero timeout", args: []string{"-url", ready.URL, "-timeout", "0s"}, code: 1, wantStderr: "-timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCmd(append([]string{"health"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("health %v = exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("health %v stdout = %q, want it to contain %q", tt.args, stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("health %v stderr = %q, want it to contain %q", tt.args, stderr, tt.wantStderr)
			}
			if code != 0 && tt.name != "bad flag" && strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 {
				t.Errorf("health %v stderr has %d lines, want one:\n%s", tt.args, strings.Count(stderr, "\n"), stderr)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("health %v took %v; a probe must give up quickly", tt.args, d)
			}
		})
	}
}

// closedLoopbackAddr is a loopback address nothing listens on (a moment
// ago something did).
func closedLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// The default URL comes from the config serve would read: -config, then
// FIRSTBYTE_CONFIG, then ./firstbyte.yaml if it exists, then the default
// admin.listen.
func TestHealthBaseURL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wildcard := write("wildcard.yaml", "admin: {listen: 0.0.0.0:19464}\n")
	v6 := write("v6.yaml", "admin: {listen: \"[::]:19465\"}\n")
	named := write("named.yaml", "admin: {listen: \"${ADMIN_ADDR}\"}\nproviders: {}\n")
	noAdmin := write("noadmin.yaml", "listen: 0.0.0.0:8080\n")
	// Unknown keys and missing variables are check's business; the address
	// is still readable.
	sloppy := write("sloppy.yaml", "admin: {listen: 127.0.0.2:9999}\nprovidrs: {}\nauth: {keys: [\"${NOT_SET_ANYWHERE}\"]}\n")
	notYAML := write("broken.yaml", "admin: [\n")

	env := map[string]string{"ADMIN_ADDR": "10.1.2.3:7000"}
	tests := []struct {
		name, url, config, envConfig string
		defaultExists                bool
		want, wantErr                string
	}{
		{name: "-url wins", url: "http://10.0.0.1:1", config: wildcard, want: "http://10.0.0.1:1"},
		{name: "no config anywhere", want: "http://127.0.0.1:9464"},
		{name: "wildcard is dialled on loopback", config: wildcard, want: "http://127.0.0.1:19464"},
		{name: "IPv6 wildcard", config: v6, want: "http://[::1]:19465"},
		{name: "variables expand", config: named, want: "http://10.1.2.3:7000"},
		{name: "no admin section: the default", config: noAdmin, want: "http://127.0.0.1:9464"},
		{name: "what check refuses still names the address", config: sloppy, want: "http://127.0.0.2:9999"},
		{name: "FIRSTBYTE_CONFIG", envConfig: wildcard, want: "http://127.0.0.1:19464"},
		{name: "-config over FIRSTBYTE_CONFIG", config: v6, envConfig: wildcard, want: "http://[::1]:19465"},
		{name: "./firstbyte.yaml when it exists", defaultExists: true, want: "http://127.0.0.1:19464"},
		{name: "a named config must exist", config: filepath.Join(dir, "missing.yaml"), wantErr: "missing.yaml"},
		{name: "FIRSTBYTE_CONFIG must exist", envConfig: filepath.Join(dir, "gone.yaml"), wantErr: "gone.yaml"},
		{name: "not YAML", config: notYAML, wantErr: "not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				if k == "FIRSTBYTE_CONFIG" {
					return tt.envConfig, tt.envConfig != ""
				}
				v, ok := env[k]
				return v, ok
			}
			exists := func(p string) bool { return p == "firstbyte.yaml" && tt.defaultExists }
			if tt.defaultExists {
				// healthBaseURL reads ./firstbyte.yaml: run where one is.
				t.Chdir(dir)
				if err := os.WriteFile("firstbyte.yaml", []byte("admin: {listen: 0.0.0.0:19464}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			u, err := healthBaseURL(tt.url, tt.config, lookup, exists)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("healthBaseURL() = %v, %v; want an error containing %q", u, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("healthBaseURL() error = %v", err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("healthBaseURL() = %s, want %s", got, tt.want)
			}
		})
	}
}

// The command is where users look for it: the usage and README's table.
func TestHealthIsListed(t *testing.T) {
	t.Parallel()
	if !strings.Contains(usage, "firstbyte health [-url URL] [-live]") {
		t.Errorf("usage does not list firstbyte health:\n%s", usage)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "| `bin/firstbyte health [-url URL] [-live]` |") {
		t.Error("README.md's command table has no row for `bin/firstbyte health [-url URL] [-live]`")
	}
}
