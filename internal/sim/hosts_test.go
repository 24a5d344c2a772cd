package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

var simAWSKey = AWSKey{AccessKeyID: "AKIDSIMULATOR0001", SecretAccessKey: "sim-secret-access-key-0001"}

func startHost(t *testing.T, h Host) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewProvider(Provider{Name: "h-" + h.Kind, Stream: Pace{Chunks: 3}, Host: &h}, Options{}))
	t.Cleanup(srv.Close)
	return srv
}

func bedrockClient(srv *httptest.Server, key AWSKey) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-west-2",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.NewCredentialsCache(credentials(key)),
		HTTPClient:   srv.Client(),
	})
}

type credentials AWSKey

func (c credentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey}, nil
}

const bedrockBody = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`

// TestBedrockSimWithOfficialClient: the AWS SDK's own Bedrock runtime
// client signs, sends and decodes against the simulator: its SigV4 is
// accepted, its event-stream decoder reads the sim's frames, and a wrong
// secret is refused as Bedrock refuses it.
func TestBedrockSimWithOfficialClient(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostBedrock, AWSKeys: []AWSKey{simAWSKey}, Region: "us-west-2"})
	ctx := context.Background()
	model := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	out, err := bedrockClient(srv, simAWSKey).InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: []byte(bedrockBody), ContentType: aws.String("application/json")})
	if err != nil {
		t.Fatalf("InvokeModel: %v", err)
	}
	if !bytes.Contains(out.Body, []byte(`"type":"message"`)) || !bytes.Contains(out.Body, []byte(model)) {
		t.Errorf("InvokeModel body = %s", out.Body)
	}
	st, err := bedrockClient(srv, simAWSKey).InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{
		ModelId: aws.String(model), Body: []byte(bedrockBody), ContentType: aws.String("application/json")})
	if err != nil {
		t.Fatalf("InvokeModelWithResponseStream: %v", err)
	}
	var events []string
	for ev := range st.GetStream().Events() {
		chunk, ok := ev.(*types.ResponseStreamMemberChunk)
		if !ok {
			t.Fatalf("event %T", ev)
		}
		typ, _, _ := strings.Cut(strings.TrimPrefix(string(chunk.Value.Bytes), `{"type":"`), `"`)
		events = append(events, typ)
	}
	if err := st.GetStream().Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(events) < 4 || events[0] != "message_start" || events[len(events)-1] != "message_stop" {
		t.Errorf("events %v", events)
	}
	bad := simAWSKey
	bad.SecretAccessKey = "wrong"
	if _, err := bedrockClient(srv, bad).InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: []byte(bedrockBody)}); err == nil || !strings.Contains(err.Error(), "InvalidSignatureException") {
		t.Errorf("a wrong secret: %v, want InvalidSignatureException", err)
	}
}

// TestAzureSimFilterFrames: the Azure sim checks api-key, serves v1 and
// dated paths, and opens a stream with Azure's content-filter frames.
func TestAzureSimFilterFrames(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostAzure, APIKey: "azure-sim-key-1"})
	post := func(path, key, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("api-key", key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := post("/openai/v1/chat/completions", "wrong", `{"model":"d","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 401 {
		t.Errorf("a wrong api-key: %d, want 401", resp.StatusCode)
	}
	resp, body := post("/openai/deployments/gpt-4o-east/chat/completions?api-version=2024-10-21", "azure-sim-key-1", `{"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"model":"gpt-4o-east"`) {
		t.Errorf("dated path: %d %s", resp.StatusCode, body)
	}
	resp, body = post("/openai/v1/chat/completions", "azure-sim-key-1", `{"model":"gpt-4o-east","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	sc := bufio.NewScanner(strings.NewReader(body))
	var datas []string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			datas = append(datas, d)
		}
	}
	if resp.StatusCode != 200 || len(datas) < 4 || !strings.Contains(datas[0], `"choices":[]`) || !strings.Contains(datas[0], "prompt_filter_results") {
		t.Fatalf("stream: %d %v", resp.StatusCode, datas)
	}
	if !strings.Contains(strings.Join(datas, "\n"), `"content_filter_offsets"`) {
		t.Error("no filter-only frame")
	}
}

// TestVertexSimToken: rawPredict needs a token from the sim's token
// endpoint, the vertex anthropic_version and no model in the body.
func TestVertexSimToken(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostVertex})
	path := srv.URL + "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
	body := `{"anthropic_version":"vertex-2023-10-16","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	do := func(tok string) int {
		req, _ := http.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := do("made-up"); s != 401 {
		t.Errorf("a made-up token: %d, want 401", s)
	}
	resp, err := srv.Client().Post(srv.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=x"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok, _, _ := strings.Cut(strings.TrimPrefix(string(b), `{"access_token":"`), `"`)
	if s := do(tok); s != 200 {
		t.Errorf("an issued token: %d, want 200", s)
	}
}

// TestBedrockSimExceptionFrames: with Host.Exception the AWS SDK's own
// client reads the sim's exception frame as the typed error Bedrock's
// would be, before any event (after_events 0) and after some chunks, on
// invoke and on Converse.
func TestBedrockSimExceptionFrames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	model := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	for _, after := range []int{0, 2} {
		srv := startHost(t, Host{Kind: HostBedrock, AWSKeys: []AWSKey{simAWSKey}, Region: "us-west-2",
			Exception: &StreamException{Type: "modelStreamErrorException", AfterEvents: after}})
		c := bedrockClient(srv, simAWSKey)
		st, err := c.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{
			ModelId: aws.String(model), Body: []byte(bedrockBody), ContentType: aws.String("application/json")})
		if err != nil {
			t.Fatalf("InvokeModelWithResponseStream: %v", err)
		}
		n := 0
		for range st.GetStream().Events() {
			n++
		}
		var mse *types.ModelStreamErrorException
		if err := st.GetStream().Err(); !errors.As(err, &mse) || n != after {
			t.Errorf("invoke, after %d: %d events then %v, want %d then a ModelStreamErrorException", after, n, err, after)
		}
		cs, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("meta.llama3-3-70b-instruct-v1:0"),
			Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}}})
		if err != nil {
			t.Fatalf("ConverseStream: %v", err)
		}
		n = 0
		for range cs.GetStream().Events() {
			n++
		}
		if err := cs.GetStream().Err(); !errors.As(err, &mse) || n != after {
			t.Errorf("converse, after %d: %d events then %v, want %d then a ModelStreamErrorException", after, n, err, after)
		}
	}
	// A unary call is no stream: it answers as ever.
	srv := startHost(t, Host{Kind: HostBedrock, AWSKeys: []AWSKey{simAWSKey}, Region: "us-west-2", Exception: &StreamException{Type: "throttlingException"}})
	if _, err := bedrockClient(srv, simAWSKey).InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: []byte(bedrockBody), ContentType: aws.String("application/json")}); err != nil {
		t.Errorf("InvokeModel with a stream exception set: %v", err)
	}
}

// TestVertexSimOpenAIEndpoint: Vertex's OpenAI-compatible endpoint takes
// an issued token only, and answers the chat API, unary and streamed,
// for the model the body names.
func TestVertexSimOpenAIEndpoint(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostVertex})
	url := srv.URL + "/v1/projects/p/locations/us-central1/endpoints/openapi/chat/completions"
	do := func(tok, body string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const chat = `{"model":"meta/llama-3.3-70b-instruct-maas","messages":[{"role":"user","content":"hi"}]}`
	if s, b := do("made-up", chat); s != 401 || !strings.Contains(b, "UNAUTHENTICATED") {
		t.Errorf("a made-up token: %d %s, want Google's 401", s, b)
	}
	tok := vertexToken(t, srv)
	if s, b := do(tok, chat); s != 200 || !strings.Contains(b, `"object":"chat.completion"`) || !strings.Contains(b, `"model":"meta/llama-3.3-70b-instruct-maas"`) {
		t.Errorf("unary: %d %s", s, b)
	}
	if s, b := do(tok, strings.Replace(chat, `{"model"`, `{"stream":true,"model"`, 1)); s != 200 || !strings.Contains(b, "data: [DONE]") {
		t.Errorf("stream: %d %s", s, b)
	}
}
