//go:build integration

package main

// What the cloud-host tests share: the simulator speaking each host, the
// credentials each host's sim accepts, and the gateway provider entry that
// reaches it.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// simAWSKey is the key pair the Bedrock sims verify SigV4 against; the
// gateway finds it in its environment (the AWS default chain).
var simAWSKey = sim.AWSKey{AccessKeyID: "AKIDHOSTSIM000001", SecretAccessKey: "host-sim-secret-access-key-1"}

// awsEnv is a gateway environment whose AWS default chain yields only
// simAWSKey: no shared files, no profile, no instance metadata, no Bedrock
// API key.
func awsEnv(t *testing.T) []string {
	none := filepath.Join(t.TempDir(), "none")
	return []string{
		"AWS_ACCESS_KEY_ID=" + simAWSKey.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + simAWSKey.SecretAccessKey,
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_BEARER_TOKEN_BEDROCK=",
		"AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none, "AWS_EC2_METADATA_DISABLED=true",
	}
}

// hostOf is the sim.Host a provider of kind speaks (nil: the plain
// OpenAI or Anthropic API). Azure's key is per provider, so that a key
// sent to the wrong region is refused.
func hostOf(kind, name string) *sim.Host {
	switch kind {
	case sim.HostAzure:
		return &sim.Host{Kind: sim.HostAzure, APIKey: "azure-sim-key-" + name}
	case sim.HostBedrock:
		return &sim.Host{Kind: sim.HostBedrock, AWSKeys: []sim.AWSKey{simAWSKey}, Region: "us-west-2"}
	case sim.HostVertex:
		return &sim.Host{Kind: sim.HostVertex}
	case sim.HostGemini:
		return &sim.Host{Kind: sim.HostGemini, APIKey: "gemini-sim-key-" + name}
	}
	return nil
}

// providerEntry is the gateway's provider entry (flow YAML) for a sim of
// kind named name at url (the sim's ".../v1" URL); extra is appended
// inside the braces (", pricing: {...}").
func providerEntry(t *testing.T, kind, name, url, extra string) string {
	t.Helper()
	base := strings.TrimSuffix(url, "/v1")
	switch kind {
	case sim.HostAzure:
		return fmt.Sprintf("{kind: azure, base_url: %q, api_key: azure-sim-key-%s%s}", base, name, extra)
	case sim.HostBedrock:
		return fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q%s}", base, extra)
	case sim.HostVertex:
		return fmt.Sprintf("{kind: vertex, project: p, region: us-east5, base_url: %q, credentials: %q%s}", base, serviceAccountFile(t, base+"/token"), extra)
	case sim.HostGemini:
		return fmt.Sprintf("{kind: gemini, base_url: %q, api_key: gemini-sim-key-%s%s}", base+"/v1beta", name, extra)
	}
	return fmt.Sprintf("{kind: %s, base_url: %q, api_key: sim-key-%s%s}", kind, url, name, extra)
}

// upstreamModel is the model id each host names a model by.
func upstreamModel(kind, family string) string {
	switch {
	case family == "llama" && kind == sim.HostBedrock: // Converse
		return "meta.llama3-3-70b-instruct-v1:0"
	case family == "llama" && kind == sim.HostVertex: // the OpenAI-compatible endpoint
		return "meta/llama-3.3-70b-instruct-maas"
	case family == "gemini":
		return "gemini-2.5-flash"
	case family == "claude" && kind == sim.HostBedrock:
		return "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	case family == "claude" && kind == sim.HostVertex:
		return "claude-sonnet-4-5@20250929"
	case family == "claude":
		return "claude-sonnet-4-5-20250929"
	case kind == sim.HostAzure:
		return "gpt-4o-deployment"
	}
	return "gpt-4o"
}

// serviceAccountFile writes a Google service-account file whose token_uri
// is a Vertex sim's token endpoint: the demo's own (writeDemoServiceAccount).
func serviceAccountFile(t *testing.T, tokenURI string) string {
	t.Helper()
	f, err := writeDemoServiceAccount(t.TempDir(), tokenURI)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
