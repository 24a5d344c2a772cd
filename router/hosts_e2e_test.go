package router_test

// End to end through real HTTP: the cloud hosts (Azure OpenAI, Bedrock
// invoke with SigV4 and with an API key, Vertex AI Claude with OAuth
// tokens from a token endpoint) served by the simulator speaking each
// host's API, for both client formats, unary and streaming.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/router"
	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

var simAWS = sim.AWSKey{AccessKeyID: "AKIDSIMULATOR0001", SecretAccessKey: "sim-secret-access-key-0001"}

// startHostSim serves a simulated provider speaking host h; its bare URL.
func startHostSim(t *testing.T, name string, h sim.Host) string {
	t.Helper()
	r, err := sim.StartProvider(sim.Provider{Name: name, Stream: sim.Pace{Chunks: 4}, Host: &h}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return strings.TrimSuffix(r.URL(), "/v1")
}

// serviceAccountFile writes a Google service-account file whose token_uri
// is the simulator's token endpoint.
func serviceAccountFile(t testing.TB, tokenURI string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "gw@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI,
	})
	f := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(f, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// hostGateway serves client model m from the one provider written in
// providerYAML (named p), with its attempt spans exported to exp.
func hostGateway(t *testing.T, providerYAML, upstream string) (*httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	text := "strategy: {mode: fallback}\nproviders:\n  p: " + providerYAML + "\ntargets:\n  - {virtual_key: p, model_map: {m: " + fmt.Sprintf("%q", upstream) + "}}\n"
	cfg, err := config.Parse([]byte(text), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v\n%s", err, text)
	}
	tracker := collector.NewTracker(collector.TrackerOptions{})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		Aggregator: collector.NewAggregator(tracker, collector.AggregatorOptions{}), Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	exp := tracetest.NewInMemoryExporter()
	sdk.TracerProvider.RegisterSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp))
	gw := newGatewayFromConfig(t, cfg, router.Options{TracerProvider: sdk.TracerProvider, Stats: tracker})
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv, exp
}

// hostCalls are the four ways a client asks: both APIs, unary and stream.
var hostCalls = []struct {
	name, path, body, want string
}{
	{"chat unary", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `"object":"chat.completion"`},
	{"chat stream", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: [DONE]"},
	{"messages unary", "/v1/messages", `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, `"type":"message"`},
	{"messages stream", "/v1/messages", `{"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "event: message_stop"},
}

// checkHostCalls makes every call of hostCalls through srv and checks the
// answer and the attempt span's provider name and host.
func checkHostCalls(t *testing.T, srv *httptest.Server, exp *tracetest.InMemoryExporter, provider string) {
	t.Helper()
	for i, c := range hostCalls {
		resp := post(t, srv.URL, c.path, c.body)
		body := readAll(t, resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		if !strings.Contains(body, "filler") && !strings.Contains(body, "Lorem") && len(body) < 100 {
			t.Errorf("%s: no content: %s", c.name, body)
		}
		attrs := attemptAttrs(t, exp, 2*(i+1)-1)
		last := attrs[len(attrs)-1]
		if last["gen_ai.provider.name"] != provider || last["server.address"] != "127.0.0.1" {
			t.Errorf("%s: span provider %v at %v, want %s at 127.0.0.1", c.name, last["gen_ai.provider.name"], last["server.address"], provider)
		}
		// Usage on the span is what tokens and cost are counted from
		// (firstbyte_tokens_total, firstbyte_cost_usd_total).
		in, _ := last["gen_ai.usage.input_tokens"].(int64)
		out, _ := last["gen_ai.usage.output_tokens"].(int64)
		if in <= 0 || out <= 0 {
			t.Errorf("%s: span usage %v in, %v out; want both > 0", c.name, last["gen_ai.usage.input_tokens"], last["gen_ai.usage.output_tokens"])
		}
	}
}

func TestAzureHostEndToEnd(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"v1", "2024-10-21"} {
		t.Run(version, func(t *testing.T) {
			base := startHostSim(t, "az", sim.Host{Kind: sim.HostAzure, APIKey: "azure-sim-key-1"})
			srv, exp := hostGateway(t, fmt.Sprintf("{kind: azure, base_url: %q, api_key: azure-sim-key-1, api_version: %q}", base, version), "gpt-4o-east")
			checkHostCalls(t, srv, exp, "azure.ai.openai")
		})
	}
}

func TestBedrockHostEndToEnd(t *testing.T) {
	// The AWS default chain reads the environment: not parallel.
	t.Setenv("AWS_ACCESS_KEY_ID", simAWS.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", simAWS.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	t.Run("SigV4", func(t *testing.T) {
		base := startHostSim(t, "br", sim.Host{Kind: sim.HostBedrock, AWSKeys: []sim.AWSKey{simAWS}, Region: "us-west-2"})
		// A configured header is signed with the rest (the sim checks).
		srv, exp := hostGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, headers: {X-Tenant: t1}}", base), model)
		checkHostCalls(t, srv, exp, "aws.bedrock")
		// Token counting is no Bedrock call: it is not sent as an invoke.
		if resp := post(t, srv.URL, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode == 200 {
			t.Errorf("count_tokens through a bedrock-only pool: 200 %s", readAll(t, resp.Body))
		}
	})
	t.Run("API key", func(t *testing.T) {
		base := startHostSim(t, "br", sim.Host{Kind: sim.HostBedrock, APIKey: "bedrock-sim-api-key-1", Region: "us-west-2"})
		srv, exp := hostGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-sim-api-key-1}", base), model)
		checkHostCalls(t, srv, exp, "aws.bedrock")
	})
}

func TestVertexClaudeEndToEnd(t *testing.T) {
	t.Parallel()
	base := startHostSim(t, "vx", sim.Host{Kind: sim.HostVertex})
	creds := serviceAccountFile(t, base+"/token")
	srv, exp := hostGateway(t, fmt.Sprintf("{kind: vertex, region: us-east5, project: p, base_url: %q, credentials: %q}", base, creds), "claude-sonnet-4-5@20250929")
	checkHostCalls(t, srv, exp, "gcp.vertex_ai")
}

// TestVertexOpenAIEndToEnd: a partner or open model on Vertex goes
// through its OpenAI-compatible endpoint with an OAuth token, for both
// client formats, unary and streamed, with usage.
func TestVertexOpenAIEndToEnd(t *testing.T) {
	t.Parallel()
	base := startHostSim(t, "vx", sim.Host{Kind: sim.HostVertex})
	creds := serviceAccountFile(t, base+"/token")
	srv, exp := hostGateway(t, fmt.Sprintf("{kind: vertex, region: us-central1, project: p, base_url: %q, credentials: %q}", base, creds), "meta/llama-3.3-70b-instruct-maas")
	checkHostCalls(t, srv, exp, "gcp.vertex_ai")
}

// TestBedrockRefusedKeyFailsOverAsAuth: a Bedrock API key the host
// refuses (403, X-Amzn-ErrorType UnrecognizedClientException) is class
// auth: the request fails over to the next target.
func TestBedrockRefusedKeyFailsOverAsAuth(t *testing.T) {
	t.Parallel()
	base := startHostSim(t, "br", sim.Host{Kind: sim.HostBedrock, APIKey: "the-right-bedrock-key", Region: "us-west-2"})
	next, err := sim.StartProvider(sim.Provider{Name: "claude", Stream: sim.Pace{Chunks: 2}}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close() })
	srv, exp := twoTargetGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, api_key: a-wrong-bedrock-key}", base),
		"anthropic.claude-3-haiku-20240307-v1:0", next.URL())
	resp := post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	attrs := attemptAttrs(t, exp, 2)
	if len(attrs) != 2 || attrs[0]["error.type"] != "auth" || attrs[0]["gen_ai.provider.name"] != "aws.bedrock" {
		t.Errorf("attempts %v, want bedrock's refused as auth, then claude", attrs)
	}
}

// TestBedrockExceptionBeforeFirstByteFailsOver: a throttlingException
// frame as a Bedrock stream's first message fails over as a rate limit
// (429), and the next target serves the stream.
func TestBedrockExceptionBeforeFirstByteFailsOver(t *testing.T) {
	t.Parallel()
	throttled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m eventstream.Message
		m.Headers.Set(":message-type", eventstream.StringValue("exception"))
		m.Headers.Set(":exception-type", eventstream.StringValue("throttlingException"))
		m.Payload = []byte(`{"message":"Too many tokens, please wait before trying again."}`)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_ = eventstream.NewEncoder().Encode(w, m)
	}))
	t.Cleanup(throttled.Close)
	next, err := sim.StartProvider(sim.Provider{Name: "claude", Stream: sim.Pace{Chunks: 2}}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close() })
	srv, exp := twoTargetGateway(t, fmt.Sprintf("{kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-test-key-1}", throttled.URL),
		"anthropic.claude-3-haiku-20240307-v1:0", next.URL())
	resp := post(t, srv.URL, "/v1/messages", `{"model":"m","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.Contains(body, "message_stop") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	attrs := attemptAttrs(t, exp, 2)
	if len(attrs) != 2 || attrs[0]["error.type"] != "429" {
		t.Errorf("attempts %v, want bedrock's exception as a 429, then claude", attrs)
	}
}

// twoTargetGateway serves client model m from provider br (providerYAML,
// upstream model brModel), then an anthropic provider at claudeURL.
func twoTargetGateway(t *testing.T, providerYAML, brModel, claudeURL string) (*httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	text := fmt.Sprintf(`strategy: {mode: fallback}
providers:
  br: %s
  claude: {kind: anthropic, base_url: %q, api_key: key-claude-1}
targets:
  - {virtual_key: br, model_map: {m: %q}}
  - {virtual_key: claude, model_map: {m: claude-3-haiku}}
`, providerYAML, claudeURL, brModel)
	cfg, err := config.Parse([]byte(text), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tracker := collector.NewTracker(collector.TrackerOptions{})
	sdk, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{
		Aggregator: collector.NewAggregator(tracker, collector.AggregatorOptions{}), Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	exp := tracetest.NewInMemoryExporter()
	sdk.TracerProvider.RegisterSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp))
	srv := httptest.NewServer(newGatewayFromConfig(t, cfg, router.Options{TracerProvider: sdk.TracerProvider, Stats: tracker}).Handler())
	t.Cleanup(srv.Close)
	return srv, exp
}

// TestProviderHeadersAndQuery: a provider's headers go on every upstream
// request and its query parameters on every URL, the host's own (Azure's
// api-version) kept. (TestBedrockHostEndToEnd's SigV4 provider has a
// header too: it is signed with the rest.)
func TestProviderHeadersAndQuery(t *testing.T) {
	t.Parallel()
	type seen struct {
		query, header string
	}
	got := make(chan seen, 4)
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.RawQuery, r.Header.Get("X-Tenant")}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(stub.Close)
	for _, tc := range []struct {
		name, provider, want string
	}{
		{"openai", fmt.Sprintf("{kind: openai, base_url: %q, headers: {X-Tenant: t1}, query: {team: a b}}", stub.URL+"/v1"), "team=a+b"},
		{"azure dated", fmt.Sprintf("{kind: azure, base_url: %q, api_key: azure-key-123, api_version: \"2024-10-21\", headers: {x-tenant: t1}, query: {team: a b}}", stub.URL), "api-version=2024-10-21&team=a+b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := hostGateway(t, tc.provider, "up")
			resp := post(t, srv.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if body := readAll(t, resp.Body); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if s := <-got; s.query != tc.want || s.header != "t1" {
				t.Errorf("upstream saw query %q, X-Tenant %q; want %q, t1", s.query, s.header, tc.want)
			}
		})
	}
}

// TestBedrockCredentialRefusalsAreAuth: Bedrock's credential refusals
// fail over as auth. AccessDeniedException disables only the (provider,
// upstream model) target it came from (the type cannot tell a key
// refused everything from a key refused that model), so the provider's
// other model keeps serving; UnrecognizedClientException and
// ExpiredTokenException refuse the key itself and disable the provider.
func TestBedrockCredentialRefusalsAreAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		awsType  string
		wholeKey bool
	}{
		{"AccessDeniedException", false},
		{"UnrecognizedClientException", true},
		{"ExpiredTokenException", true},
	} {
		t.Run(tc.awsType, func(t *testing.T) {
			t.Parallel()
			br := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.Path, "denied") || tc.wholeKey {
					w.Header().Set("X-Amzn-ErrorType", tc.awsType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
					jsonAnswer(403, `{"message":"refused"}`)(w, r)
					return
				}
				jsonAnswer(200, `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`)(w, r)
			})
			claude := newUpstream(t, apiAnswer)
			gw := gatewayFromYAML(t, fmt.Sprintf(`strategy: {mode: fallback}
providers:
  br: {kind: bedrock, region: us-west-2, base_url: %q, api_key: bedrock-test-key-1}
  claude: {kind: anthropic, base_url: %q, api_key: key-claude-1}
targets:
  - {virtual_key: br, model_map: {m: anthropic.denied-v1:0, m2: anthropic.allowed-v1:0}}
  - {virtual_key: claude, model_map: {m: claude-3-haiku, m2: claude-3-haiku}}
`, br.URL, claude.URL+"/v1"), router.Options{})
			srv := httptest.NewServer(gw.Handler())
			t.Cleanup(srv.Close)
			msg := func(model string) *http.Response {
				return post(t, srv.URL, "/v1/messages", `{"model":"`+model+`","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
			}
			if resp := msg("m"); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "claude" {
				t.Fatalf("m: %d from %q, want 200 from claude: %s", resp.StatusCode, resp.Header.Get(router.HeaderTarget), readAll(t, resp.Body))
			}
			if d := routingRow(t, gw, "m", "br"); d.Disabled != "auth" {
				t.Errorf("(br, m) disabled %q, want auth", d.Disabled)
			}
			want, wantDisabled := "br", ""
			if tc.wholeKey {
				want, wantDisabled = "claude", "auth"
			}
			if d := routingRow(t, gw, "m2", "br"); d.Disabled != wantDisabled {
				t.Errorf("(br, m2) disabled %q, want %q", d.Disabled, wantDisabled)
			}
			if resp := msg("m2"); resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != want {
				t.Errorf("m2: %d from %q, want 200 from %s", resp.StatusCode, resp.Header.Get(router.HeaderTarget), want)
			}
		})
	}
}

// matrixHosts are the simulated hosts of the refusal matrix: a provider
// entry (%[1]s the sim's bare URL, %[2]s a service-account file) and the
// upstream model that picks the call.
var matrixHosts = []struct {
	name     string
	host     sim.Host
	provider string
	model    string
}{
	{"azure", sim.Host{Kind: sim.HostAzure, APIKey: "azure-sim-key-1"}, "{kind: azure, base_url: %[1]q, api_key: azure-sim-key-1}", "gpt-4o-east"},
	{"bedrock invoke", sim.Host{Kind: sim.HostBedrock, APIKey: "bedrock-sim-api-key-1", Region: "us-west-2"},
		"{kind: bedrock, region: us-west-2, base_url: %[1]q, api_key: bedrock-sim-api-key-1}", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
	{"bedrock converse", sim.Host{Kind: sim.HostBedrock, APIKey: "bedrock-sim-api-key-1", Region: "us-west-2"},
		"{kind: bedrock, region: us-west-2, base_url: %[1]q, api_key: bedrock-sim-api-key-1}", "meta.llama3-3-70b-instruct-v1:0"},
	{"vertex claude", sim.Host{Kind: sim.HostVertex}, "{kind: vertex, region: us-east5, project: p, base_url: %[1]q, credentials: %[2]q}", "claude-sonnet-4-5@20250929"},
	{"vertex gemini", sim.Host{Kind: sim.HostVertex}, "{kind: vertex, region: global, project: p, base_url: %[1]q, credentials: %[2]q}", "gemini-2.5-pro"},
	{"vertex openai", sim.Host{Kind: sim.HostVertex}, "{kind: vertex, region: us-central1, project: p, base_url: %[1]q, credentials: %[2]q}", "meta/llama-3.3-70b-instruct-maas"},
	{"gemini", sim.Host{Kind: sim.HostGemini, APIKey: "gemini-sim-key-1"}, "{kind: gemini, base_url: \"%[1]s/v1beta\", api_key: gemini-sim-key-1}", "gemini-2.5-flash"},
}

// matrixGateway starts a sim of h with fault p (its Host and name set
// here) first, an Anthropic sim second.
func matrixGateway(t *testing.T, h sim.Host, provider, model string, p sim.Provider) (*httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	p.Name, p.Host = "h", &h
	if p.Stream.Chunks == 0 {
		p.Stream.Chunks = 4
	}
	r, err := sim.StartProvider(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	base := strings.TrimSuffix(r.URL(), "/v1")
	creds := ""
	if h.Kind == sim.HostVertex {
		creds = serviceAccountFile(t, base+"/token")
	}
	return twoTargetGateway(t, fmt.Sprintf(provider, base, creds), model, fallbackSim(t))
}

// TestEveryHostsRefusalsFailOver: a 429 and a 403 of every cloud host
// (each in the host's own words: ThrottlingException and
// AccessDeniedException, RESOURCE_EXHAUSTED and PERMISSION_DENIED, ...),
// for both client formats, fail over to the next target: the 429 as a
// rate limit (error.type 429), the 403 as a refused credential (auth).
func TestEveryHostsRefusalsFailOver(t *testing.T) {
	t.Parallel()
	for _, h := range matrixHosts {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
			t.Run(fmt.Sprintf("%s %d", h.name, status), func(t *testing.T) {
				t.Parallel()
				want := "429"
				if status == http.StatusForbidden {
					want = "auth"
				}
				for _, c := range []struct{ path, body string }{
					{"/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
					{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
				} {
					// A gateway a call: the first refusal cools or disables
					// the target, and the next request would not try it.
					srv, exp := matrixGateway(t, h.host, h.provider, h.model, sim.Provider{Errors: sim.ErrorRate{Rate: 1, Status: status}})
					resp := post(t, srv.URL, c.path, c.body)
					if body := readAll(t, resp.Body); resp.StatusCode != 200 {
						t.Fatalf("%s: %d %s", c.path, resp.StatusCode, body)
					}
					attrs := attemptAttrs(t, exp, 2)
					if len(attrs) != 2 || attrs[0]["error.type"] != want || attrs[1]["gen_ai.provider.name"] != "anthropic" {
						t.Errorf("%s: attempts %v, want the host's refusal as %s, then the next target", c.path, attrs, want)
					}
				}
			})
		}
	}
}

// TestBedrockSimExceptionFrames: the sim's exception frame (host.exception)
// on invoke and Converse streams, for both client formats: before the
// first byte the request fails over to the next target; after it the
// client's stream ends with an error event and without its terminator.
func TestBedrockSimExceptionFrames(t *testing.T) {
	t.Parallel()
	calls := []struct{ path, body, done string }{
		{"/v1/messages", `{"model":"m","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "message_stop"},
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "[DONE]"},
	}
	for _, h := range matrixHosts[1:3] {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range calls {
				before := sim.Provider{}
				hb := h.host
				hb.Exception = &sim.StreamException{Type: "modelStreamErrorException"}
				srv, exp := matrixGateway(t, hb, h.provider, h.model, before)
				resp := post(t, srv.URL, c.path, c.body)
				if body := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.Contains(body, c.done) {
					t.Fatalf("before the first byte, %s: %d %s", c.path, resp.StatusCode, body)
				}
				if attrs := attemptAttrs(t, exp, 2); len(attrs) != 2 || attrs[0]["error.type"] != "502" || attrs[1]["gen_ai.provider.name"] != "anthropic" {
					t.Errorf("before the first byte, %s: attempts %v, want the exception as a 502, then the next target", c.path, attrs)
				}

				ha := h.host
				ha.Exception = &sim.StreamException{Type: "modelStreamErrorException", AfterEvents: 3}
				srv, _ = matrixGateway(t, ha, h.provider, h.model, sim.Provider{})
				resp = post(t, srv.URL, c.path, c.body)
				body := readAll(t, resp.Body)
				if resp.StatusCode != 200 || resp.Header.Get(router.HeaderTarget) != "br" || !strings.Contains(body, "error") || strings.Contains(body, c.done) {
					t.Errorf("after the first byte, %s: %d from %q, want br's stream ended by an error event: %s", c.path, resp.StatusCode, resp.Header.Get(router.HeaderTarget), body)
				}
			}
		})
	}
}
