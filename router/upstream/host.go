package upstream

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// Host is a provider's host adapter: where each call goes (Endpoint), how
// it is authorized (Authorize) and which gen_ai.provider.name its spans
// carry. Credentials that expire are refreshed by Run, off the request
// path.
type Host struct {
	// immutable after NewHost
	provider   string // the provider's name in the config
	kind       string
	baseURL    string
	apiVersion string // azure
	project    string // vertex
	region     string // bedrock, vertex
	api        func(model string) string
	auth       authorizer // nil: no credential is sent
	refreshers []refresher
}

// refresher is one credential cache's: prime fetches once and says when
// to fetch next; run keeps fetching from then on.
type refresher struct {
	prime func(context.Context) time.Duration
	run   func(ctx context.Context, first time.Duration)
}

// HostOptions are what NewHost takes besides the provider's config.
type HostOptions struct {
	Clock  Clock
	Logger *slog.Logger
	// Getenv reads the environment (AWS_BEARER_TOKEN_BEDROCK). Nil:
	// os.Getenv.
	Getenv func(string) string
	// AWSCredentials, when set, is where bedrock's SigV4 credentials come
	// from instead of the default chain (tests, the simulator). Only the
	// refresher calls it.
	AWSCredentials aws.CredentialsProvider
}

// GenAI provider names (gen_ai.provider.name) by kind.
var genAIProviders = map[string]string{
	config.KindOpenAI:    "openai",
	config.KindAnthropic: "anthropic",
	config.KindAzure:     "azure.ai.openai",
	config.KindBedrock:   "aws.bedrock",
	config.KindVertex:    "gcp.vertex_ai",
	config.KindGemini:    "gcp.gemini",
}

// GenAIProvider is the gen_ai.provider.name of a provider of kind.
func GenAIProvider(kind string) string { return genAIProviders[kind] }

// NewHost builds the adapter of the cloud provider name. The credential
// chosen is, by kind:
//
//	azure    api_key as api-key; else a Microsoft Entra ID token (DefaultAzureCredential)
//	bedrock  api_key, else AWS_BEARER_TOKEN_BEDROCK, as Authorization: Bearer; else SigV4 with the AWS default chain (profile)
//	vertex   an OAuth2 token from the credentials file, else Application Default Credentials
//	gemini   api_key as x-goog-api-key
func NewHost(name string, p *config.Provider, o HostOptions) *Host {
	h := &Host{provider: name, kind: p.Kind, baseURL: p.BaseURL, apiVersion: p.APIVersion, project: p.Project, region: p.Region, api: p.APIFor}
	getenv := o.Getenv
	if getenv == nil {
		getenv = osGetenv
	}
	switch p.Kind {
	case config.KindAzure:
		if p.APIKey != "" {
			h.auth = newHeaderKey("api-key", p.APIKey)
		} else {
			h.auth = h.bearer(azureEntraFetch(), o)
		}
	case config.KindBedrock:
		key := p.APIKey
		if key == "" {
			key = getenv("AWS_BEARER_TOKEN_BEDROCK") // the AWS config loader does not read it
		}
		switch {
		case key != "":
			h.auth = newHeaderKey("Authorization", "Bearer "+key)
		default:
			fetch := awsFetch(p.Region, p.Profile)
			if o.AWSCredentials != nil {
				fetch = awsProviderFetch(o.AWSCredentials)
			}
			cache := newCredentialCache(name, fetch, o.Clock, o.Logger)
			h.refreshers = append(h.refreshers, refresher{cache.refresh, cache.run})
			h.auth = newSigV4(cache, p.Region, o.Clock.now())
		}
	case config.KindVertex:
		h.auth = h.bearer(googleFetch(p.Credentials), o)
	case config.KindGemini:
		if p.APIKey != "" {
			h.auth = newHeaderKey("x-goog-api-key", p.APIKey)
		}
	}
	return h
}

// bearer is a token credential kept fresh by a refresher of h.
func (h *Host) bearer(fetch credentialFetch[[]string], o HostOptions) authorizer {
	cache := newCredentialCache(h.provider, fetch, o.Clock, o.Logger)
	h.refreshers = append(h.refreshers, refresher{cache.refresh, cache.run})
	return &bearerToken{cache: cache}
}

// Start fetches h's credentials once, waiting at most prime (so the
// first requests find one), then keeps them fresh on goroutines until ctx
// ends. A host whose credential never expires starts nothing.
func (h *Host) Start(ctx context.Context, prime time.Duration) {
	for _, r := range h.refreshers {
		pctx, cancel := context.WithTimeout(ctx, prime)
		first := r.prime(pctx)
		cancel()
		go r.run(ctx, first)
	}
}

// Kind is h's config kind.
func (h *Host) Kind() string { return h.kind }

// GenAIProvider is h's gen_ai.provider.name.
func (h *Host) GenAIProvider() string { return genAIProviders[h.kind] }

// API is the call model goes through on h (config.Provider.APIFor).
func (h *Host) API(model string) string { return h.api(model) }

// Endpoint is the URL of a call to model: op is the OpenAI-format
// operation (OpChat, OpResponses, OpEmbeddings) where the call is in that
// format, ignored elsewhere.
func (h *Host) Endpoint(op, model string, stream bool) (Endpoint, bool) {
	switch h.kind {
	case config.KindAzure:
		return AzureEndpoint(h.baseURL, h.apiVersion, op, model)
	case config.KindBedrock:
		return BedrockEndpoint(h.baseURL, h.api(model), model, stream)
	case config.KindVertex:
		return VertexEndpoint(h.baseURL, h.project, h.region, h.api(model), op, model, stream)
	case config.KindGemini:
		return GeminiEndpoint(h.baseURL, model, stream)
	}
	b, ok := parseBase(h.baseURL)
	if !ok {
		return Endpoint{}, false
	}
	return b.endpoint(op, op, ""), true
}

// Authorize puts h's credential on req, whose body is body exactly. A
// credential that cannot be had is a *CredentialError (class auth).
// Streams ask for no compression: a gzipped event stream arrives only
// when the answer is complete.
func (h *Host) Authorize(req *http.Request, body []byte, stream bool) error {
	if stream {
		req.Header["Accept-Encoding"] = identity
	}
	if h.auth == nil {
		return nil
	}
	return h.auth.authorize(req, body)
}

var identity = []string{"identity"}
