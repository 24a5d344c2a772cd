package upstream

import (
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

func TestHostEndpoints(t *testing.T) {
	t.Parallel()
	const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	tests := []struct {
		name string
		got  func() (Endpoint, bool)
		want string
	}{
		{"azure v1 chat", func() (Endpoint, bool) {
			return AzureEndpoint("https://east.openai.azure.com/", "v1", OpChat, "gpt-4o-east")
		}, "https://east.openai.azure.com/openai/v1/chat/completions"},
		{"azure v1 responses", func() (Endpoint, bool) {
			return AzureEndpoint("https://east.openai.azure.com", "v1", OpResponses, "gpt-4o-east")
		}, "https://east.openai.azure.com/openai/v1/responses"},
		{"azure dated", func() (Endpoint, bool) {
			return AzureEndpoint("https://east.openai.azure.com", "2024-10-21", OpChat, "gpt-4o east")
		}, "https://east.openai.azure.com/openai/deployments/gpt-4o%20east/chat/completions?api-version=2024-10-21"},
		{"bedrock invoke, the id escaped once", func() (Endpoint, bool) {
			return BedrockEndpoint("https://bedrock-runtime.us-west-2.amazonaws.com", config.APIInvoke, claude, false)
		}, "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"},
		{"bedrock invoke stream", func() (Endpoint, bool) {
			return BedrockEndpoint("http://127.0.0.1:9000/", config.APIInvoke, claude, true)
		}, "http://127.0.0.1:9000/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"},
		{"bedrock converse, an ARN's slashes escaped", func() (Endpoint, bool) {
			return BedrockEndpoint("https://bedrock-runtime.us-west-2.amazonaws.com", config.APIConverse,
				"arn:aws:bedrock:us-west-2:123:inference-profile/us.meta.llama3", false)
		}, "https://bedrock-runtime.us-west-2.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123%3Ainference-profile%2Fus.meta.llama3/converse"},
		{"bedrock converse stream", func() (Endpoint, bool) {
			return BedrockEndpoint("https://h", config.APIConverse, "meta.llama3-70b-instruct-v1:0", true)
		}, "https://h/model/meta.llama3-70b-instruct-v1%3A0/converse-stream"},
		{"vertex claude, global", func() (Endpoint, bool) {
			return VertexEndpoint(config.DefaultBaseURL(config.KindVertex, "global"), "proj", "global", config.APIInvoke, OpChat, "claude-sonnet-4-5@20250929", false)
		}, "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"},
		{"vertex claude stream, regional", func() (Endpoint, bool) {
			return VertexEndpoint(config.DefaultBaseURL(config.KindVertex, "us-east5"), "proj", "us-east5", config.APIInvoke, OpChat, "claude-haiku-4-5", true)
		}, "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5:streamRawPredict"},
		{"vertex gemini stream, rep", func() (Endpoint, bool) {
			return VertexEndpoint(config.DefaultBaseURL(config.KindVertex, "eu"), "proj", "eu", config.APIGemini, OpChat, "gemini-2.5-pro", true)
		}, "https://aiplatform.eu.rep.googleapis.com/v1/projects/proj/locations/eu/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"vertex openapi", func() (Endpoint, bool) {
			return VertexEndpoint("https://us-central1-aiplatform.googleapis.com", "proj", "us-central1", config.APIOpenAI, OpChat, "meta/llama-3.3-70b", false)
		}, "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/endpoints/openapi/chat/completions"},
		{"gemini unary", func() (Endpoint, bool) {
			return GeminiEndpoint(config.DefaultGeminiBaseURL, "gemini-2.5-flash", false)
		}, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"},
		{"gemini stream", func() (Endpoint, bool) {
			return GeminiEndpoint(config.DefaultGeminiBaseURL, "gemini-2.5-flash", true)
		}, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := tt.got()
			if !ok {
				t.Fatal("no endpoint")
			}
			if got := e.String(); got != tt.want {
				t.Errorf("URL = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestBedrockPathDecodes: the path Go's client sends is the escaped one,
// and it decodes back to the model id.
func TestBedrockPathDecodes(t *testing.T) {
	t.Parallel()
	e, _ := BedrockEndpoint("https://h", config.APIInvoke, "anthropic.claude-3-haiku-20240307-v1:0", false)
	u := e.URL()
	if got, want := u.EscapedPath(), "/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke"; got != want {
		t.Errorf("EscapedPath() = %s, want %s", got, want)
	}
	if got, want := u.Path, "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke"; got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}

// TestCloudBody: an invoke body loses model (and on Bedrock stream), gains
// the host's anthropic_version first and Bedrock the client's betas, its
// other members' bytes and order kept; a body that is not an object goes
// as it is.
func TestCloudBody(t *testing.T) {
	t.Parallel()
	br := &Cloud{Host: NewHost("br", &config.Provider{Kind: config.KindBedrock, Region: "us-west-2", APIKey: "k"}, HostOptions{}), api: config.APIInvoke}
	vx := &Cloud{Host: NewHost("vx", &config.Provider{Kind: config.KindVertex, Region: "global", Project: "p"}, HostOptions{}), api: config.APIInvoke}
	body := `{"model":"m","max_tokens":5, "stream":true,"anthropic_version":"x","messages":[{"role":"user","content":"h\u00e9"}],"anthropic_beta":["b0"]}`
	for _, tc := range []struct {
		name  string
		c     *Cloud
		betas []string
		body  string
		want  string
	}{
		{"bedrock", br, nil, body, `{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[{"role":"user","content":"h\u00e9"}],"anthropic_beta":["b0"]}`},
		{"bedrock with betas", br, []string{"b1", "b2"}, body, `{"anthropic_version":"bedrock-2023-05-31","anthropic_beta":["b1","b2"],"max_tokens":5,"messages":[{"role":"user","content":"h\u00e9"}]}`},
		{"vertex", vx, []string{"b1"}, body, `{"anthropic_version":"vertex-2023-10-16","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"h\u00e9"}],"anthropic_beta":["b0"]}`},
		{"not an object", br, nil, `[1]`, `[1]`},
		{"empty object", br, nil, `{}`, `{"anthropic_version":"bedrock-2023-05-31"}`},
	} {
		if got := string(tc.c.Body([]byte(tc.body), tc.betas)); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
