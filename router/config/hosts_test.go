package config

import "testing"

// The cloud hosts' rows of configErrorTests (kept beside their tests).
func init() {
	configErrorTests = append(configErrorTests, hostsErrorTests...)
}

var hostsErrorTests = []struct {
	name string
	file string
	env  map[string]string
	want []string
}{
	{name: "cloud hosts: required fields, fields of other kinds, transport settings, one call per provider", file: "hosts.yaml", want: []string{
		`providers.az.base_url: is the resource endpoint (https://NAME.openai.azure.com), without /openai/...: the deployment is the upstream model (model_map value)`,
		`providers.az.api_version: "2024-10" is neither v1 nor a dated version such as 2024-10-21`,
		`providers.az.region: not read by kind azure (only by bedrock and vertex)`,
		`providers.br.region: required: the AWS region (e.g. us-west-2): it names the host and signs each request`,
		`providers.br.project: not read by kind bedrock (only by vertex)`,
		`providers.br.headers: "bad header" is not an HTTP header name`,
		`providers.br.headers.Content-Length: is set by the gateway for each request; it cannot be configured`,
		`providers.br2.region: "US_WEST" is not a region name (lower-case letters, digits and dashes)`,
		`providers.br2.api: unknown api "chat" (want one of converse, invoke)`,
		`providers.vx.region: required: the Vertex AI location: global, us, eu or a region such as us-east5`,
		`providers.vx.project: required: the Google Cloud project id`,
		`providers.vx.kind: its models go through gemini, invoke and openai: one provider serves one of them here; put the models of each on a provider of its own`,
		`providers.vx.credentials: cannot read "/nonexistent/key.json": no such file or directory`,
		`providers.vx2.http2: unknown http2 setting "h3" (want one of auto, prior_knowledge, off)`,
		`providers.vx2.tls.ca_file: "testdata/hosts.yaml" holds no PEM certificate`,
		`providers.vx3.kind: its models go through invoke and openai: one provider serves one of them here; put the models of each on a provider of its own`,
		`providers.gem.api_key: required: the Gemini API key (Google AI Studio), sent as x-goog-api-key`,
		`providers.gem.profile: not read by kind gemini (only by bedrock)`,
		`providers.gem.query: empty parameter name`,
		`providers.oai.http2: prior_knowledge is unencrypted HTTP/2 (h2c), but base_url is https: leave it out (auto negotiates HTTP/2 over TLS)`,
		`providers.oai.tls.ca_file: cannot read "/nonexistent/ca.pem": no such file or directory`,
		`targets[1].model_map.llama: "meta.llama3-70b-instruct-v1:0" is not an Anthropic model (its id has no "anthropic."): bedrock's invoke call is served only for Anthropic models; leave api out to send it through converse`,
	}},
}

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
