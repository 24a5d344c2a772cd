package deploy

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"

	"github.com/goccy/go-yaml"
)

// The Dockerfile, read as BuildKit reads it (stages, ARG defaults, COPY
// sources relative to the build context minus the ignore file), checked
// against the repository: what it copies exists and is all the binaries
// need, the binaries are built as `make build` and `make otelcol` build
// them, and the images run them as a non-root user on a static base.

const (
	dockerfile   = "Dockerfile"
	dockerignore = "Dockerfile.dockerignore" // BuildKit reads <Dockerfile>.dockerignore first
)

type instruction struct {
	line int
	cmd  string   // upper case
	args []string // whitespace-separated words, or the JSON array's items
	raw  string
	json bool // exec (JSON array) form
}

type stage struct {
	name, base string
	instrs     []instruction
}

type dockerFile struct {
	args   map[string]string // global ARG defaults (before the first FROM)
	stages []*stage
}

func (d *dockerFile) stage(name string) *stage {
	for _, s := range d.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (s *stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// parseDockerfile reads the instructions this repository's Dockerfiles
// use; anything else is an error, so a new instruction gets a check.
func parseDockerfile(path string) (*dockerFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &dockerFile{args: map[string]string{}}
	var cur *stage
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	lineNo, start := 0, 0
	var logical strings.Builder
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if logical.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if logical.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // comment lines inside a continuation are dropped
		}
		if logical.Len() == 0 {
			start = lineNo
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			logical.WriteString(cont + " ")
			continue
		}
		logical.WriteString(line)
		text := strings.TrimSpace(logical.String())
		logical.Reset()

		cmd, rest, _ := strings.Cut(text, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), raw: strings.TrimSpace(rest)}
		if strings.HasPrefix(in.raw, "[") {
			if err := yaml.Unmarshal([]byte(in.raw), &in.args); err != nil {
				return nil, fmt.Errorf("%s:%d: %s %s is not a JSON array: %v", path, start, in.cmd, in.raw, err)
			}
			in.json = true
		} else {
			in.args = strings.Fields(in.raw)
		}
		switch in.cmd {
		case "ARG":
			name, def, _ := strings.Cut(in.raw, "=")
			if cur == nil {
				d.args[name] = def
			}
		case "FROM":
			if len(in.args) != 1 && !(len(in.args) == 3 && strings.EqualFold(in.args[1], "AS")) {
				return nil, fmt.Errorf("%s:%d: FROM %s: want IMAGE [AS NAME]", path, start, in.raw)
			}
			cur = &stage{base: os.Expand(in.args[0], func(k string) string { return d.args[k] })}
			if len(in.args) == 3 {
				cur.name = in.args[2]
			}
			d.stages = append(d.stages, cur)
			continue
		case "WORKDIR", "COPY", "RUN", "ENV", "USER", "EXPOSE", "ENTRYPOINT", "CMD":
		default:
			return nil, fmt.Errorf("%s:%d: instruction %s is not one this test checks", path, start, in.cmd)
		}
		if cur == nil {
			if in.cmd != "ARG" {
				return nil, fmt.Errorf("%s:%d: %s before the first FROM", path, start, in.cmd)
			}
			continue
		}
		cur.instrs = append(cur.instrs, in)
	}
	if len(d.stages) == 0 {
		return nil, fmt.Errorf("%s has no FROM", path)
	}
	return d, sc.Err()
}

// copyArgs splits COPY's --flags from its sources and destination.
func copyArgs(in instruction) (flags map[string]string, srcs []string, dst string) {
	flags = map[string]string{}
	args := in.args
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		k, v, _ := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		flags[k] = v
		args = args[1:]
	}
	if len(args) < 2 {
		return flags, nil, ""
	}
	return flags, args[:len(args)-1], args[len(args)-1]
}

// ignorePatterns reads the ignore file (simple patterns: no negation).
func ignorePatterns(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dockerignore)
	if err != nil {
		t.Fatalf("reading %s: %v", dockerignore, err)
	}
	var ps []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") {
			t.Fatalf("%s: negated pattern %q; this test only knows plain ones", dockerignore, l)
		}
		ps = append(ps, filepath.Clean(l))
	}
	return ps
}

// ignored reports whether a context-relative path is left out of the
// build context: a pattern matches it or one of its parent directories.
func ignored(patterns []string, rel string) bool {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i := 1; i <= len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, prefix); ok {
				return true
			}
			if tail, ok := strings.CutPrefix(p, "**/"); ok {
				if m, _ := filepath.Match(tail, parts[i-1]); m {
					return true
				}
			}
		}
	}
	return false
}

func loadDockerfile(t *testing.T) *dockerFile {
	t.Helper()
	d, err := parseDockerfile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The build context is the repository root (compose's context: ..); every
// COPY source exists there and survives the ignore file; COPY --from
// names an earlier stage and a file one of its RUNs writes.
func TestDockerfileCopiesExist(t *testing.T) {
	d := loadDockerfile(t)
	patterns := ignorePatterns(t)
	for i, st := range d.stages {
		for _, in := range st.all("COPY") {
			flags, srcs, dst := copyArgs(in)
			if dst == "" {
				t.Errorf("%s:%d: COPY %s: want SRC... DST", dockerfile, in.line, in.raw)
				continue
			}
			if from, ok := flags["from"]; ok {
				src := d.stage(from)
				if src == nil || slices.Index(d.stages, src) >= i {
					t.Errorf("%s:%d: COPY --from=%s: no earlier stage of that name", dockerfile, in.line, from)
					continue
				}
				for _, s := range srcs {
					if !slices.ContainsFunc(src.all("RUN"), func(r instruction) bool { return strings.Contains(r.raw, "-o "+s+" ") }) {
						t.Errorf("%s:%d: COPY --from=%s %s: no RUN of stage %s writes %s (go build -o)", dockerfile, in.line, from, s, from, s)
					}
				}
				continue
			}
			for _, s := range srcs {
				matches, err := filepath.Glob(filepath.Join(repoRoot, s))
				if err != nil || len(matches) == 0 {
					t.Errorf("%s:%d: COPY source %s does not exist in the build context (the repository root)", dockerfile, in.line, s)
					continue
				}
				for _, m := range matches {
					rel, _ := filepath.Rel(repoRoot, m)
					if ignored(patterns, rel) {
						t.Errorf("%s:%d: COPY source %s is left out of the build context by %s", dockerfile, in.line, rel, dockerignore)
					}
				}
			}
		}
	}
}

// Every file the gateway binary is compiled from is copied into the build
// stage (a package added to the binary later must be added to the COPY
// lines too), and none of them is in the ignore file.
func TestDockerfileCopiesEveryGatewayPackage(t *testing.T) {
	d := loadDockerfile(t)
	st := d.stage("build")
	if st == nil {
		t.Fatal("no stage named build")
	}
	var copied []string
	for _, in := range st.all("COPY") {
		_, srcs, _ := copyArgs(in)
		copied = append(copied, srcs...)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "list", "-deps", "-f",
		`{{if not .Standard}}{{.ImportPath}}|{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}`,
		"../cmd/firstbyte").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ../cmd/firstbyte: %v\n%s", err, out)
	}
	root, _ := filepath.Abs(repoRoot)
	patterns := ignorePatterns(t)
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 || !strings.HasPrefix(f[0], "github.com/firstbyte-dev/firstbyte") {
			continue // a dependency module: go mod download fetches it
		}
		dir, err := filepath.Rel(root, f[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range append(strings.Split(f[2], ","), strings.Split(f[3], ",")...) {
			if file == "" {
				continue
			}
			rel := filepath.ToSlash(filepath.Join(dir, file))
			checked++
			if !slices.ContainsFunc(copied, func(src string) bool { return copies(src, rel) }) {
				t.Errorf("%s (package %s) is not copied into the build stage (COPY sources: %v)", rel, f[0], copied)
			}
			if ignored(patterns, rel) {
				t.Errorf("%s (package %s) is left out of the build context by %s", rel, f[0], dockerignore)
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !slices.Contains(copied, f) {
			t.Errorf("%s is not copied into the build stage", f)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d files checked: go list output not understood:\n%s", checked, out)
	}
}

// copies reports whether COPY source src brings the context-relative file.
func copies(src, file string) bool {
	src = filepath.ToSlash(src)
	if dir, ok := strings.CutSuffix(src, "/"); ok {
		return strings.HasPrefix(file, dir+"/")
	}
	if ok, _ := filepath.Match(src, file); ok {
		return true
	}
	return file == src || strings.HasPrefix(file, src+"/")
}

// The images compose builds run their binary as a non-root user on a
// static base with nothing else in it, and expose the ports the binary
// listens on.
func TestDockerfileRuntimeImages(t *testing.T) {
	d := loadDockerfile(t)
	s := loadStack(t)
	targets := map[string]bool{}
	for _, name := range s.names() {
		if b := s.services[name].Build; b != nil {
			if filepath.Clean(filepath.Join(b.Context, b.Dockerfile)) != filepath.Join(repoRoot, "deploy", dockerfile) {
				t.Errorf("service %s builds %s; this test reads deploy/%s", name, filepath.Join(b.Context, b.Dockerfile), dockerfile)
			}
			if d.stage(b.Target) == nil {
				t.Errorf("service %s builds target %q, which is no stage of %s", name, b.Target, dockerfile)
			}
			targets[b.Target] = true
		}
	}
	if last := d.stages[len(d.stages)-1]; last.name != "gateway" {
		t.Errorf("the last stage is %q: `docker build -f deploy/Dockerfile .` should give the gateway", last.name)
	}
	targets["gateway"] = true
	gw := config.Config{}
	gwCfg, err := config.Parse(nil, func(string) (string, bool) { return "", false })
	if err == nil {
		gw = *gwCfg
	}
	_, apiPort, _ := hostPort(gw.Listen)
	_, adminPort, _ := hostPort(gw.Admin.Listen)
	wantExpose := map[string][]string{
		// The gateway's default ports, which deploy/firstbyte.yaml keeps.
		"gateway": {strconv.Itoa(apiPort), strconv.Itoa(adminPort)},
		// The collector's OTLP receivers (collector/otelcol/config/*.yaml).
		"otelcol": {"4317", "4318"},
	}
	for target := range targets {
		st := d.stage(target)
		if st == nil {
			continue
		}
		if !strings.HasPrefix(st.base, "gcr.io/distroless/static") || !strings.HasSuffix(st.base, ":nonroot") {
			if st.base != "scratch" {
				t.Errorf("stage %s is based on %s, want gcr.io/distroless/static-*:nonroot or scratch", target, st.base)
			}
		}
		users := st.all("USER")
		if len(users) == 0 {
			t.Errorf("stage %s sets no USER", target)
		} else if u := strings.Split(users[len(users)-1].raw, ":")[0]; u == "root" || u == "0" || u == "" {
			t.Errorf("stage %s runs as %q, want a non-root user", target, users[len(users)-1].raw)
		}
		eps := st.all("ENTRYPOINT")
		if len(eps) != 1 || !eps[0].json || len(eps[0].args) == 0 {
			t.Errorf("stage %s: want one ENTRYPOINT in exec form (no shell in the image)", target)
		} else {
			copied := slices.ContainsFunc(st.all("COPY"), func(c instruction) bool {
				_, _, dst := copyArgs(c)
				return dst == eps[0].args[0]
			})
			if !copied {
				t.Errorf("stage %s: ENTRYPOINT %s is not a file a COPY of the stage puts there", target, eps[0].args[0])
			}
		}
		var exposed []string
		for _, e := range st.all("EXPOSE") {
			exposed = append(exposed, e.args...)
		}
		slices.Sort(exposed)
		want := slices.Sorted(slices.Values(wantExpose[target]))
		if !slices.Equal(exposed, want) {
			t.Errorf("stage %s exposes %v, want %v", target, exposed, want)
		}
	}
	// The image's default command serves a config where compose and the
	// docs put it.
	if cmds := d.stage("gateway").all("CMD"); len(cmds) != 1 || !cmds[0].json ||
		len(flagValues(cmds[0].args, "config")) != 1 || cmds[0].args[0] != "serve" {
		t.Errorf("gateway stage: want CMD [\"serve\", \"-config\", PATH], got %v", cmds)
	}
}

// The binaries are built as `make build` and `make otelcol` build them:
// static (CGO_ENABLED=0), -trimpath, the gateway with the Makefile's
// version ldflags; with the Go release go.mod asks for.
func TestDockerfileBuildsLikeTheMakefile(t *testing.T) {
	d := loadDockerfile(t)
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS\s*:?=\s*(.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no LDFLAGS in the Makefile")
	}
	// $(VERSION) in make is ${VERSION} in the Dockerfile's shell.
	wantLDFlags := regexp.MustCompile(`\$\((\w+)\)`).ReplaceAllString(strings.TrimSpace(string(m[1])), "$${$1}")

	builds := map[string]string{"build": "./cmd/firstbyte", "otelcol-build": "."}
	for name, pkg := range builds {
		st := d.stage(name)
		if st == nil {
			t.Errorf("no stage %s", name)
			continue
		}
		var goBuild *instruction
		for _, r := range st.all("RUN") {
			if strings.Contains(r.raw, "go build") {
				goBuild = &r
			}
		}
		if goBuild == nil {
			t.Errorf("stage %s runs no go build", name)
			continue
		}
		for _, want := range []string{"CGO_ENABLED=0 ", " -trimpath ", " " + pkg} {
			if !strings.Contains(goBuild.raw+" ", want) {
				t.Errorf("%s:%d: stage %s's go build lacks %q: %s", dockerfile, goBuild.line, name, strings.TrimSpace(want), goBuild.raw)
			}
		}
		if name == "build" && !strings.Contains(goBuild.raw, `-ldflags "`+wantLDFlags+`"`) {
			t.Errorf("%s:%d: the gateway's ldflags differ from the Makefile's LDFLAGS (%s): %s", dockerfile, goBuild.line, wantLDFlags, goBuild.raw)
		}
		if name == "otelcol-build" {
			wd := st.all("WORKDIR")
			if len(wd) == 0 || !strings.HasSuffix(wd[len(wd)-1].raw, "/collector/otelcol") {
				t.Errorf("stage %s builds . outside collector/otelcol (the nested module): WORKDIR %v", name, wd)
			}
		}
		for _, a := range st.all("ARG") {
			arg, _, _ := strings.Cut(a.raw, "=")
			if (arg == "VERSION" || arg == "COMMIT") && name != "build" {
				t.Errorf("stage %s declares %s, which only the gateway's build uses", name, arg)
			}
		}
	}

	goVersion := d.args["GO_VERSION"]
	for _, mod := range []string{"go.mod", "collector/otelcol/go.mod"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, mod))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(data)
		if m == nil || string(m[1]) != goVersion {
			t.Errorf("ARG GO_VERSION=%s, %s says go %s: the image would download another toolchain or fail", goVersion, mod, m[1])
		}
	}
	for _, name := range []string{"build", "otelcol-build"} {
		if st := d.stage(name); st != nil && st.base != "golang:"+goVersion {
			t.Errorf("stage %s is based on %s, want golang:%s", name, st.base, goVersion)
		}
	}
}

func TestIgnored(t *testing.T) {
	ps := []string{".git", "bin", "**/node_modules", "docs"}
	tests := []struct {
		path string
		want bool
	}{
		{"bin/firstbyte", true},
		{"examples/clients/node/node_modules/x.js", true},
		{"cmd/firstbyte/main.go", false},
		{"router/binary.go", false},
		{".git/HEAD", true},
	}
	for _, tt := range tests {
		if got := ignored(ps, tt.path); got != tt.want {
			t.Errorf("ignored(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
