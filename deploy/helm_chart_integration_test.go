//go:build integration

package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// Reading the Helm chart as Kubernetes would: `helm template` renders it
// (the real helm, built from its Go module by `make helm`), and the
// objects are decoded into the fields the tests look at. Nothing here
// needs a cluster.

// requireHelm finds the helm binary; a missing one fails the test (make
// test-deploy builds it), it is never skipped.
func requireHelm(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM_BIN")
	if st, err := os.Stat(p); p == "" || err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("HELM_BIN=%q is not an executable (run `make helm`, or `make test-deploy`)", p)
	}
	return p
}

// helmRun runs helm with args; the environment is only PATH and a
// temporary HOME, so no developer's helm config or repositories matter.
func helmRun(t *testing.T, helm string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(helm, args...)
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_CONFIG_HOME=" + home, "HELM_DATA_HOME=" + home}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("helm %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// releaseName is the release every render uses.
const releaseName = "fb"

// render runs `helm template` on the chart with extra args (--set ...)
// and decodes what it prints; a failed render fails the test.
func render(t *testing.T, helm string, args ...string) *rendered {
	t.Helper()
	stdout, stderr, code := helmRun(t, helm, append([]string{"template", releaseName, chartDir}, args...)...)
	if code != 0 {
		t.Fatalf("helm template %s %v: exit %d\n%s", chartDir, args, code, stderr)
	}
	r, err := decodeObjects(stdout)
	if err != nil {
		t.Fatalf("helm template %v printed what is not Kubernetes YAML: %v", args, err)
	}
	r.text = stdout
	return r
}

// object is one rendered Kubernetes object: the fields every kind has,
// and the rest as decoded YAML for the kind's own decoder.
type object struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	Spec       map[string]any    `yaml:"spec"`
}

type objectMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type rendered struct {
	objects []object
	text    string
}

func decodeObjects(text string) (*rendered, error) {
	r := &rendered{}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if o.Kind == "" {
			continue // an empty document
		}
		if o.APIVersion == "" || o.Metadata.Name == "" {
			return nil, fmt.Errorf("a %s without apiVersion or metadata.name", o.Kind)
		}
		r.objects = append(r.objects, o)
	}
	if len(r.objects) == 0 {
		return nil, errors.New("no objects")
	}
	return r, nil
}

func (r *rendered) all(kind string) []object {
	var out []object
	for _, o := range r.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r *rendered) get(t *testing.T, kind, name string) object {
	t.Helper()
	for _, o := range r.objects {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("no %s named %q rendered", kind, name)
	return object{}
}

// spec decodes an object's spec into v.
func (o object) spec(t *testing.T, v any) {
	t.Helper()
	raw, err := yaml.Marshal(o.Spec)
	if err == nil {
		err = yaml.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("%s %s: spec: %v", o.Kind, o.Metadata.Name, err)
	}
}

type workloadSpec struct {
	Replicas    int    `yaml:"replicas"`
	ServiceName string `yaml:"serviceName"`
	Selector    struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template struct {
		Metadata objectMeta `yaml:"metadata"`
		Spec     podSpec    `yaml:"spec"`
	} `yaml:"template"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int        `yaml:"terminationGracePeriodSeconds"`
	Containers                    []container `yaml:"containers"`
	Volumes                       []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
	} `yaml:"volumes"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []envVar `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *secretKeyRef `yaml:"secretKeyRef"`
		FieldRef     *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type secretKeyRef struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

func (e envVar) secret() *secretKeyRef {
	if e.ValueFrom == nil {
		return nil
	}
	return e.ValueFrom.SecretKeyRef
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
	TCPSocket *struct {
		Port any `yaml:"port"`
	} `yaml:"tcpSocket"`
}

type serviceSpec struct {
	ClusterIP                string            `yaml:"clusterIP"`
	PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
	Selector                 map[string]string `yaml:"selector"`
	Ports                    []struct {
		Name       string `yaml:"name"`
		Port       int    `yaml:"port"`
		TargetPort any    `yaml:"targetPort"`
	} `yaml:"ports"`
}

// port resolves a probe's or Service's port (a number or a port name) to
// the container's port number; 0 when the container has no such port.
func (c container) port(p any) int {
	switch v := p.(type) {
	case string:
		for _, cp := range c.Ports {
			if cp.Name == v {
				return cp.ContainerPort
			}
		}
		n, _ := strconv.Atoi(v)
		return n
	case uint64:
		return int(v)
	case int64:
		return int(v)
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// gateway is the StatefulSet's spec and its one container.
func (r *rendered) gateway(t *testing.T) (object, workloadSpec, container) {
	t.Helper()
	sets := r.all("StatefulSet")
	if len(sets) != 1 {
		t.Fatalf("%d StatefulSets rendered, want the gateway's one", len(sets))
	}
	var ws workloadSpec
	sets[0].spec(t, &ws)
	if len(ws.Template.Spec.Containers) != 1 {
		t.Fatalf("the gateway pod has %d containers, want 1", len(ws.Template.Spec.Containers))
	}
	return sets[0], ws, ws.Template.Spec.Containers[0]
}

// mountedConfigMapFile is the text a container reads at path: the data
// key of the ConfigMap volume mounted at path's directory, followed
// through the pod's mounts and volumes as the kubelet would.
func (r *rendered) mountedConfigMapFile(t *testing.T, ps podSpec, c container, file string) string {
	t.Helper()
	dir, key := path.Split(file)
	for _, m := range c.VolumeMounts {
		if strings.TrimSuffix(m.MountPath, "/") != strings.TrimSuffix(dir, "/") {
			continue
		}
		for _, v := range ps.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				cm := r.get(t, "ConfigMap", v.ConfigMap.Name)
				text, ok := cm.Data[key]
				if !ok {
					t.Fatalf("ConfigMap %s has no key %q, which container %s reads as %s", cm.Metadata.Name, key, c.Name, file)
				}
				return text
			}
		}
	}
	t.Fatalf("container %s reads %s, but no ConfigMap volume is mounted at %s", c.Name, file, dir)
	return ""
}

// gatewayConfig is the config file the gateway container serves: the
// path its -config argument names, in the ConfigMap mounted there.
func (r *rendered) gatewayConfig(t *testing.T) string {
	t.Helper()
	_, ws, c := r.gateway(t)
	vs := flagValues(c.Args, "config")
	if len(vs) != 1 || len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("gateway container args %v, want serve -config FILE", c.Args)
	}
	return r.mountedConfigMapFile(t, ws.Template.Spec, c, vs[0])
}

// collector is the collector Deployment's pod spec, its container and
// its config file (the --config=file: argument, through its mounts).
func (r *rendered) collector(t *testing.T) (workloadSpec, container, string) {
	t.Helper()
	var found []object
	for _, d := range r.all("Deployment") {
		if d.Metadata.Labels["app.kubernetes.io/component"] == "otelcol" {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d collector Deployments rendered, want 1", len(found))
	}
	var ws workloadSpec
	found[0].spec(t, &ws)
	if len(ws.Template.Spec.Containers) != 1 {
		t.Fatalf("the collector pod has %d containers, want 1", len(ws.Template.Spec.Containers))
	}
	c := ws.Template.Spec.Containers[0]
	var file string
	for _, a := range c.Args {
		if f, ok := strings.CutPrefix(a, "--config=file:"); ok {
			file = f
		}
	}
	if file == "" {
		t.Fatalf("collector args %v: no --config=file:PATH", c.Args)
	}
	return ws, c, r.mountedConfigMapFile(t, ws.Template.Spec, c, file)
}

// selects reports whether a selector's labels are all on the pod.
func selects(selector, podLabels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if podLabels[k] != v {
			return false
		}
	}
	return true
}

// envRefs are the ${VAR} names a text refers to.
var envRefRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

func envRefs(text string) []string {
	var out []string
	for _, m := range envRefRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// podEnv is a container's environment as the kubelet would give it, with
// every Secret value replaced by "test-value-of-NAME": enough for the
// binaries to run, and recognisable.
func podEnv(c container) []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	vals := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.secret() != nil:
			v = "test-value-of-" + e.Name
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v = "test-" + strings.ReplaceAll(e.ValueFrom.FieldRef.FieldPath, ".", "-")
		}
		// $(NAME) refers to an earlier variable, as Kubernetes expands it.
		v = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(v, func(m string) string {
			if x, ok := vals[m[2:len(m)-1]]; ok {
				return x
			}
			return m
		})
		vals[e.Name] = v
		env = append(env, e.Name+"="+v)
	}
	return env
}
