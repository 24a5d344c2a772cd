package deploy

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// Reading compose.yaml as Compose does: YAML with anchors, ${VAR} from the
// environment (here: none, so every variable's default), bind mounts
// relative to the file's directory, and services sharing a network
// namespace through network_mode: service:NAME.

const (
	composeFile = "compose.yaml"
	repoRoot    = ".." // the tests run in deploy/
)

// service is the part of a Compose service this stack uses. Decoding is
// strict: a key the stack does not use here (a typo such as "volume:") is
// an error, not silently ignored.
type service struct {
	Image       string            `yaml:"image"`
	Build       *build            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Volumes     []string          `yaml:"volumes"`
	Environment map[string]string `yaml:"environment"`
	Expose      []string          `yaml:"expose"`
	Ports       []string          `yaml:"ports"`
	NetworkMode string            `yaml:"network_mode"`
	DependsOn   dependsOn         `yaml:"depends_on"`
	Healthcheck *healthcheck      `yaml:"healthcheck"`
}

// healthcheck is a service's Docker health check.
type healthcheck struct {
	Test          []string `yaml:"test"`
	Interval      string   `yaml:"interval"`
	Timeout       string   `yaml:"timeout"`
	Retries       int      `yaml:"retries"`
	StartPeriod   string   `yaml:"start_period"`
	StartInterval string   `yaml:"start_interval"`
}

// dependsOn is depends_on in either of Compose's forms: a list of
// services (each then waits only for the start), or a map of service to
// {condition: service_started | service_healthy | ...}. It maps each
// service to its condition.
type dependsOn map[string]string

func (d *dependsOn) UnmarshalYAML(data []byte) error {
	var list []string
	if err := yaml.Unmarshal(data, &list); err == nil {
		*d = dependsOn{}
		for _, name := range list {
			(*d)[name] = "service_started"
		}
		return nil
	}
	var long map[string]struct {
		Condition string `yaml:"condition"`
		Restart   bool   `yaml:"restart"`
		Required  *bool  `yaml:"required"`
	}
	if err := yaml.UnmarshalWithOptions(data, &long, yaml.Strict()); err != nil {
		return fmt.Errorf("depends_on: want a list of services or a map of service to {condition: ...}: %w", err)
	}
	*d = dependsOn{}
	for name, dep := range long {
		cond := dep.Condition
		if cond == "" {
			cond = "service_started"
		}
		(*d)[name] = cond
	}
	return nil
}

type build struct {
	Context    string            `yaml:"context"`
	Dockerfile string            `yaml:"dockerfile"`
	Target     string            `yaml:"target"`
	Args       map[string]string `yaml:"args"`
}

// stack is compose.yaml after interpolation.
type stack struct {
	name     string
	services map[string]service
	// unset lists the ${VAR}s without a default: `docker compose up` with
	// no environment would give them the empty string.
	unset []string
}

// loadStack reads compose.yaml with an empty environment.
func loadStack(t *testing.T) *stack {
	t.Helper()
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatalf("reading %s: %v", composeFile, err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatalf("%s is not valid YAML: %v", composeFile, err)
	}
	s := &stack{}
	for k := range top {
		if k != "name" && k != "services" && !strings.HasPrefix(k, "x-") {
			t.Errorf("%s: top-level key %q is not one this test knows (name, services, x-*)", composeFile, k)
		}
	}
	s.name, _ = top["name"].(string)
	interpolated := interpolateAll(top["services"], func(v string) { s.unset = append(s.unset, v) })
	raw, err := yaml.Marshal(interpolated)
	if err != nil {
		t.Fatalf("re-encoding the services: %v", err)
	}
	if err := yaml.UnmarshalWithOptions(raw, &s.services, yaml.Strict()); err != nil {
		t.Fatalf("%s: services: %v", composeFile, err)
	}
	if len(s.services) == 0 {
		t.Fatalf("%s has no services", composeFile)
	}
	return s
}

// names returns the service names, sorted, for stable test output.
func (s *stack) names() []string {
	ns := make([]string, 0, len(s.services))
	for n := range s.services {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func (s *stack) has(name string) bool {
	_, ok := s.services[name]
	return ok
}

// netns is the service whose network namespace name runs in: its own, or
// the one network_mode: service:X names.
func (s *stack) netns(name string) string {
	if owner, ok := strings.CutPrefix(s.services[name].NetworkMode, "service:"); ok {
		return owner
	}
	return name
}

var composeVarRE = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// interpolate expands Compose's $VAR, ${VAR}, ${VAR:-default},
// ${VAR-default} and $$ with no variable set: the result is what a plain
// `docker compose up` runs. unset is called for each variable that has no
// default.
func interpolate(s string, unset func(string)) string {
	return composeVarRE.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := composeVarRE.FindStringSubmatch(m)
		name, op, def := sub[1]+sub[4], sub[2], sub[3]
		switch op {
		case ":-", "-":
			return def
		}
		unset(name)
		return ""
	})
}

func interpolateAll(v any, unset func(string)) any {
	switch x := v.(type) {
	case string:
		return interpolate(x, unset)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = interpolateAll(e, unset)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = interpolateAll(e, unset)
		}
		return out
	}
	return v
}

// mount is a bind mount: src in the repository, dst in the container.
type mount struct {
	src, dst string
	readOnly bool
}

// mounts parses a service's short-syntax volumes (src:dst[:ro]); sources
// are relative to compose.yaml's directory.
func (sv service) mounts() ([]mount, error) {
	var ms []mount
	for _, v := range sv.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("volume %q: want SRC:DST[:ro]", v)
		}
		if !strings.HasPrefix(parts[0], ".") && !strings.HasPrefix(parts[0], "/") {
			return nil, fmt.Errorf("volume %q is a named volume; this stack only bind-mounts repository files", v)
		}
		m := mount{src: filepath.Clean(parts[0]), dst: parts[1]}
		if len(parts) == 3 {
			if parts[2] != "ro" && parts[2] != "rw" {
				return nil, fmt.Errorf("volume %q: mode %q, want ro or rw", v, parts[2])
			}
			m.readOnly = parts[2] == "ro"
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// hostPath is the repository file behind a path inside the container, if
// a bind mount provides it.
func (sv service) hostPath(containerPath string) (string, bool) {
	ms, _ := sv.mounts()
	for _, m := range ms {
		if containerPath == m.dst {
			return m.src, true
		}
		if rel, ok := strings.CutPrefix(containerPath, strings.TrimSuffix(m.dst, "/")+"/"); ok {
			return filepath.Join(m.src, rel), true
		}
	}
	return "", false
}

// args are the command line the service runs: entrypoint (if set) then
// command.
func (sv service) args() []string { return append(append([]string{}, sv.Entrypoint...), sv.Command...) }

// flagValue finds -name V, -name=V, --name V or --name=V in args.
func flagValues(args []string, name string) []string {
	var vs []string
	for i, a := range args {
		bare := strings.TrimLeft(a, "-")
		if len(bare) == len(a) {
			continue
		}
		if v, ok := strings.CutPrefix(bare, name+"="); ok {
			vs = append(vs, v)
		} else if bare == name && i+1 < len(args) {
			vs = append(vs, args[i+1])
		}
	}
	return vs
}

// published is one ports: entry.
type published struct {
	hostIP          string
	host, container int
	raw             string
}

func (sv service) published() ([]published, error) {
	var ps []published
	for _, p := range sv.Ports {
		parts := strings.Split(p, ":")
		var pub published
		pub.raw = p
		var err error
		switch len(parts) {
		case 3:
			pub.hostIP = parts[0]
			if pub.host, err = strconv.Atoi(parts[1]); err == nil {
				pub.container, err = strconv.Atoi(parts[2])
			}
		case 2:
			if pub.host, err = strconv.Atoi(parts[0]); err == nil {
				pub.container, err = strconv.Atoi(parts[1])
			}
		default:
			err = fmt.Errorf("want [IP:]HOST:CONTAINER")
		}
		if err != nil {
			return nil, fmt.Errorf("ports entry %q: %v", p, err)
		}
		ps = append(ps, pub)
	}
	return ps, nil
}

// hostPort splits host:port with a numeric port.
func hostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q of %q is not a number", p, addr)
	}
	return h, n, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// exists reports whether a repository path (relative to deploy/) exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestInterpolate(t *testing.T) {
	tests := []struct {
		name, in, want string
		unset          []string
	}{
		{"default", "${A:-x}", "x", nil},
		{"default when unset only", "${A-x}", "x", nil},
		{"no default", "a${B}c", "ac", []string{"B"}},
		{"bare", "$C/d", "/d", []string{"C"}},
		{"escaped dollar", "$$HOME", "$HOME", nil},
		{"several", "${A:-1}:${B:-2}", "1:2", nil},
		{"error form", "${A:?set A}", "", []string{"A"}},
	}
	for _, tt := range tests {
		var unset []string
		got := interpolate(tt.in, func(v string) { unset = append(unset, v) })
		if got != tt.want || strings.Join(unset, ",") != strings.Join(tt.unset, ",") {
			t.Errorf("%s: interpolate(%q) = %q, unset %v; want %q, %v", tt.name, tt.in, got, unset, tt.want, tt.unset)
		}
	}
}

func TestFlagValues(t *testing.T) {
	args := []string{"serve", "-config", "/a.yaml", "--config=file:/b.yaml", "--set=x=1", "-v"}
	if got := flagValues(args, "config"); strings.Join(got, " ") != "/a.yaml file:/b.yaml" {
		t.Errorf("flagValues(config) = %v", got)
	}
	if got := flagValues(args, "set"); strings.Join(got, " ") != "x=1" {
		t.Errorf("flagValues(set) = %v", got)
	}
}
