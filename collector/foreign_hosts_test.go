package collector

import "testing"

// TestProviderAgreesCloudHosts: a foreign span maps to a cloud target by
// the cloud's own provider name, or the Anthropic SDK's for that cloud; an
// Azure target takes what an OpenAI-format target takes.
func TestProviderAgreesCloudHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind string
		want       bool
	}{
		{"aws.bedrock", "aws.bedrock", true},
		{"anthropic", "aws.bedrock", true},
		{"openai", "aws.bedrock", false},
		{"gcp.vertex_ai", "gcp.vertex_ai", true},
		{"gcp.gen_ai", "gcp.vertex_ai", true},
		{"anthropic", "gcp.vertex_ai", true},
		{"aws.bedrock", "gcp.vertex_ai", false},
		{"azure.ai.openai", "azure.ai.openai", true},
		{"openai", "azure.ai.openai", true},
		{"anthropic", "azure.ai.openai", false},
		{"aws.bedrock", "anthropic", false},
	} {
		if got := providerAgrees(tc.name, "", tc.kind); got != tc.want {
			t.Errorf("providerAgrees(%q, kind %q) = %v, want %v", tc.name, tc.kind, got, tc.want)
		}
	}
}
