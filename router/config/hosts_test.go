package config

import "testing"

func TestProviderAPIFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, kind, api, model, want string
	}{
		{"bedrock anthropic id", KindBedrock, "", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", APIInvoke},
		{"bedrock other id", KindBedrock, "", "meta.llama3-70b-instruct-v1:0", APIConverse},
		{"bedrock forced converse", KindBedrock, APIConverse, "anthropic.claude-3-haiku", APIConverse},
		{"vertex claude", KindVertex, "", "claude-sonnet-4-5@20250929", APIInvoke},
		{"vertex gemini", KindVertex, "", "gemini-2.5-pro", APIGemini},
		{"vertex open model", KindVertex, "", "meta/llama-3.3-70b-instruct-maas", APIOpenAI},
		{"gemini", KindGemini, "", "gemini-2.5-flash", APIGemini},
		{"azure", KindAzure, "", "gpt-4o-east", APIOpenAI},
		{"openai", KindOpenAI, "", "gpt-4o", APIOpenAI},
		{"anthropic", KindAnthropic, "", "claude-sonnet-4-5", APIAnthropic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Provider{Kind: tt.kind, API: tt.api}
			if got := p.APIFor(tt.model); got != tt.want {
				t.Errorf("APIFor(%q) = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}

func TestDefaultBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind, region, want string
	}{
		{KindBedrock, "us-west-2", "https://bedrock-runtime.us-west-2.amazonaws.com"},
		{KindBedrock, "", ""},
		{KindBedrock, "US_WEST", ""},
		{KindVertex, "global", "https://aiplatform.googleapis.com"},
		{KindVertex, "us", "https://aiplatform.us.rep.googleapis.com"},
		{KindVertex, "eu", "https://aiplatform.eu.rep.googleapis.com"},
		{KindVertex, "us-east5", "https://us-east5-aiplatform.googleapis.com"},
		{KindGemini, "", DefaultGeminiBaseURL},
		{KindAzure, "", ""},
		{KindOpenAI, "", ""},
	}
	for _, tt := range tests {
		if got := DefaultBaseURL(tt.kind, tt.region); got != tt.want {
			t.Errorf("DefaultBaseURL(%q, %q) = %q, want %q", tt.kind, tt.region, got, tt.want)
		}
	}
}

// TestHostDefaults: a cloud provider without base_url gets its host's, an
// azure one api_version v1, every kind http2 auto.
func TestHostDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`providers:
  br: {kind: bedrock, region: eu-west-1}
  az: {kind: azure, base_url: "https://x.openai.azure.com"}
targets: [{virtual_key: br, model_map: {c: anthropic.claude-3-haiku}}, {virtual_key: az, model_map: {g: g}}]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Providers["br"].BaseURL; got != "https://bedrock-runtime.eu-west-1.amazonaws.com" {
		t.Errorf("bedrock base_url = %q", got)
	}
	if got := cfg.Providers["az"].APIVersion; got != AzureAPIV1 {
		t.Errorf("azure api_version = %q, want v1", got)
	}
	if got := cfg.Providers["br"].HTTP2; got != HTTP2Auto {
		t.Errorf("http2 = %q, want auto", got)
	}
}
