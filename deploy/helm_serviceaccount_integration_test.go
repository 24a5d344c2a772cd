//go:build integration

package deploy

import (
	"os"
	"strings"
	"testing"
)

// saPod is what the service-account tests read of the gateway's pod.
type saPod struct {
	Template struct {
		Metadata objectMeta `yaml:"metadata"`
		Spec     struct {
			ServiceAccountName string `yaml:"serviceAccountName"`
		} `yaml:"spec"`
	} `yaml:"template"`
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
}

// serviceAccounts are the rendered ServiceAccounts, by name.
func serviceAccounts(t *testing.T, r *rendered) map[string]object {
	t.Helper()
	out := map[string]object{}
	for _, o := range r.all("ServiceAccount") {
		out[o.Metadata.Name] = o
	}
	return out
}

// The cloud workload identities' annotations and label.
const (
	irsaAnnotation  = "eks.amazonaws.com/role-arn"
	gkeAnnotation   = "iam.gke.io/gcp-service-account"
	azureAnnotation = "azure.workload.identity/client-id"
	azureLabel      = "azure.workload.identity/use"
)

// TestHelmServiceAccountForWorkloadIdentity: the pods run as a service
// account of the release, whose annotations give them a cloud's
// credentials without a key in a Secret (EKS IRSA, GKE Workload Identity,
// Azure workload identity, whose webhook also needs a pod label, which
// the chart adds when the account carries Azure's client-id); an existing
// account can be named instead; annotations the chart would not render
// anywhere are refused, not dropped.
func TestHelmServiceAccountForWorkloadIdentity(t *testing.T) {
	helm := requireHelm(t)
	const fullname = releaseName + "-firstbyte"

	t.Run("default", func(t *testing.T) {
		r := render(t, helm)
		sas := serviceAccounts(t, r)
		sa, ok := sas[fullname]
		if len(sas) != 1 || !ok {
			t.Fatalf("ServiceAccounts %v, want one named %s", keys(sas), fullname)
		}
		if doc := renderedDoc(r, "ServiceAccount"); !strings.Contains(doc, "\nautomountServiceAccountToken: false") {
			t.Errorf("the ServiceAccount does not turn off token automounting (the gateway never calls the API server):\n%s", doc)
		}
		set, _, _ := r.gateway(t)
		var pod saPod
		set.spec(t, &pod)
		if got := pod.Template.Spec.ServiceAccountName; got != fullname {
			t.Errorf("the gateway pods' serviceAccountName = %q, want %s", got, fullname)
		}
		if len(sa.Metadata.Annotations) != 0 || pod.Template.Metadata.Labels[azureLabel] != "" {
			t.Errorf("annotations %v, pod label %s=%q by default; want none", sa.Metadata.Annotations, azureLabel, pod.Template.Metadata.Labels[azureLabel])
		}
	})

	t.Run("cloud annotations", func(t *testing.T) {
		want := map[string]string{
			irsaAnnotation:  "arn:aws:iam::123456789012:role/firstbyte-bedrock",
			gkeAnnotation:   "firstbyte@my-project.iam.gserviceaccount.com",
			azureAnnotation: "00000000-0000-0000-0000-000000000000",
		}
		var args []string
		for k, v := range want {
			args = append(args, "--set-string", "serviceAccount.annotations."+strings.ReplaceAll(k, ".", `\.`)+"="+v)
		}
		r := render(t, helm, args...)
		sa := serviceAccounts(t, r)[fullname]
		for k, v := range want {
			if sa.Metadata.Annotations[k] != v {
				t.Errorf("ServiceAccount annotation %s = %q, want %q", k, sa.Metadata.Annotations[k], v)
			}
		}
		set, _, _ := r.gateway(t)
		var pod saPod
		set.spec(t, &pod)
		if got := pod.Template.Metadata.Labels[azureLabel]; got != "true" {
			t.Errorf("pod label %s = %q, want \"true\" (Azure's webhook injects the token only into pods so labelled)", azureLabel, got)
		}
		if _, ok := pod.Selector.MatchLabels[azureLabel]; ok {
			t.Errorf("the StatefulSet's selector has %s: a selector cannot change on upgrade", azureLabel)
		}
	})

	t.Run("existing account", func(t *testing.T) {
		r := render(t, helm, "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=team-llm")
		if sas := serviceAccounts(t, r); len(sas) != 0 {
			t.Errorf("ServiceAccounts %v rendered with create=false, want none", keys(sas))
		}
		set, _, _ := r.gateway(t)
		var pod saPod
		set.spec(t, &pod)
		if got := pod.Template.Spec.ServiceAccountName; got != "team-llm" {
			t.Errorf("serviceAccountName = %q, want team-llm", got)
		}
	})

	t.Run("annotations without an account to put them on", func(t *testing.T) {
		_, stderr, code := helmRun(t, helm, "template", releaseName, chartDir, "--set", "serviceAccount.create=false",
			"--set-string", "serviceAccount.annotations."+strings.ReplaceAll(irsaAnnotation, ".", `\.`)+"=arn:aws:iam::1:role/x")
		if code == 0 || !strings.Contains(stderr, "serviceAccount.annotations") {
			t.Errorf("annotations with create=false render (exit %d); want them refused, naming serviceAccount.annotations:\n%s", code, stderr)
		}
	})
}

// TestProvidersDocSaysHowPodsGetCloudCredentials: docs/providers.md gives
// the chart's values for each cloud's workload identity.
func TestProvidersDocSaysHowPodsGetCloudCredentials(t *testing.T) {
	b, err := os.ReadFile("../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"serviceAccount:", irsaAnnotation, gkeAnnotation, azureAnnotation, azureLabel} {
		if !strings.Contains(string(b), want) {
			t.Errorf("docs/providers.md does not say %q", want)
		}
	}
}

// renderedDoc is the text of the first rendered document of kind.
func renderedDoc(r *rendered, kind string) string {
	for _, doc := range strings.Split(r.text, "\n---") {
		if strings.Contains(doc, "\nkind: "+kind+"\n") {
			return doc
		}
	}
	return ""
}

func keys(m map[string]object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
