package config

import "strings"

// Provider kinds: the host a provider is, which decides its URLs, its
// credentials, its framing and the wire format each upstream model speaks.
const (
	KindOpenAI    = "openai"    // any OpenAI-compatible host
	KindAnthropic = "anthropic" // api.anthropic.com or a compatible one
	KindAzure     = "azure"     // Azure OpenAI
	KindBedrock   = "bedrock"   // AWS Bedrock runtime
	KindVertex    = "vertex"    // Google Vertex AI
	KindGemini    = "gemini"    // the Gemini API (AI Studio)
)

// Kinds are the values kind accepts.
var Kinds = []string{KindOpenAI, KindAnthropic, KindAzure, KindBedrock, KindVertex, KindGemini}

var kinds = Kinds

// The calls an upstream model can go through on a cloud host (api, and
// what APIFor answers).
const (
	// APIConverse is Bedrock Converse / ConverseStream (the Converse format).
	APIConverse = "converse"
	// APIInvoke is Anthropic's Messages body on a cloud host: Bedrock
	// InvokeModel / InvokeModelWithResponseStream, Vertex rawPredict /
	// streamRawPredict.
	APIInvoke = "invoke"
	// APIOpenAI is the OpenAI format: openai and azure providers, and
	// Vertex's OpenAI-compatible endpoint.
	APIOpenAI = "openai"
	// APIGemini is generateContent / streamGenerateContent (Gemini API,
	// and Vertex's Google models).
	APIGemini = "gemini"
	// APIAnthropic is an anthropic provider's Messages API (never written
	// as api; APIFor's answer for that kind).
	APIAnthropic = "anthropic"
)

// apisByKind are the api values each kind accepts; a kind not here takes
// none.
var apisByKind = map[string][]string{
	KindBedrock: {APIConverse, APIInvoke},
	KindVertex:  {APIInvoke, APIGemini, APIOpenAI},
}

// HTTP/2 settings (http2).
const (
	HTTP2Auto           = "auto"
	HTTP2PriorKnowledge = "prior_knowledge"
	HTTP2Off            = "off"
)

var http2Modes = []string{HTTP2Auto, HTTP2PriorKnowledge, HTTP2Off}

// AzureAPIV1 is the api_version of Azure OpenAI's v1 API, its default.
const AzureAPIV1 = "v1"

// DefaultGeminiBaseURL is a gemini provider's base_url when it has none.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// TLS is what an upstream's certificate is checked against.
type TLS struct {
	// CAFile is a PEM file of CA certificates trusted beside the system
	// pool (a private endpoint's). Empty: the system pool only.
	CAFile string `yaml:"ca_file"`
}

// applyHostDefaults fills what a host has by default: its base_url when
// the kind knows it, Azure's api_version, http2.
func (p *Provider) applyHostDefaults() {
	setDefault(&p.HTTP2, HTTP2Auto)
	if p.Kind == KindAzure {
		setDefault(&p.APIVersion, AzureAPIV1)
	}
	if p.BaseURL == "" {
		p.BaseURL = DefaultBaseURL(p.Kind, p.Region)
	}
}

// DefaultBaseURL is the base_url of a provider of kind in region that
// writes none; "" when the kind has no default or needs a region it lacks.
// Bedrock: https://bedrock-runtime.{region}.amazonaws.com. Vertex: the
// bare host, https://aiplatform.googleapis.com for global,
// https://aiplatform.{us|eu}.rep.googleapis.com for the multi-regions,
// https://{region}-aiplatform.googleapis.com otherwise.
func DefaultBaseURL(kind, region string) string {
	switch kind {
	case KindGemini:
		return DefaultGeminiBaseURL
	case KindBedrock:
		if region != "" && validRegion(region) {
			return "https://bedrock-runtime." + region + ".amazonaws.com"
		}
	case KindVertex:
		switch {
		case region == "global":
			return "https://aiplatform.googleapis.com"
		case region == "us" || region == "eu":
			return "https://aiplatform." + region + ".rep.googleapis.com"
		case region != "" && validRegion(region):
			return "https://" + region + "-aiplatform.googleapis.com"
		}
	}
	return ""
}

// validRegion reports whether s can be a cloud region in a host name:
// lower-case letters, digits and dashes.
func validRegion(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return s != "" && s[0] != '-' && s[len(s)-1] != '-'
}

// APIFor is the call upstream model goes through on p's host: api when
// set, else by the host and the model's name. Bedrock: invoke for an
// Anthropic model (its id contains "anthropic."), converse otherwise.
// Vertex: invoke for claude*, gemini for gemini*, openai otherwise (the
// OpenAI-compatible endpoint; partner and open models). gemini: gemini.
// openai and azure: openai; anthropic: anthropic.
func (p *Provider) APIFor(model string) string {
	if p.API != "" {
		return p.API
	}
	switch p.Kind {
	case KindAnthropic:
		return APIAnthropic
	case KindGemini:
		return APIGemini
	case KindBedrock:
		if strings.Contains(model, "anthropic.") {
			return APIInvoke
		}
		return APIConverse
	case KindVertex:
		switch {
		case strings.HasPrefix(model, "claude"):
			return APIInvoke
		case strings.HasPrefix(model, "gemini"):
			return APIGemini
		}
	}
	return APIOpenAI
}

// AzureDated reports whether an azure provider uses a dated api-version
// (/openai/deployments/{deployment}/...) rather than the v1 API.
func (p *Provider) AzureDated() bool {
	return p.Kind == KindAzure && p.APIVersion != AzureAPIV1
}
