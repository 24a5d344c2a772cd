package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// TestConverseSimWithOfficialClient: the AWS SDK's own Converse and
// ConverseStream calls sign, send and decode against the simulator: the
// unary answer and every stream event parse as the SDK's types, with the
// text, the stop reason and the usage.
func TestConverseSimWithOfficialClient(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostBedrock, AWSKeys: []AWSKey{simAWSKey}, Region: "us-west-2"})
	ctx := context.Background()
	c := bedrockClient(srv, simAWSKey)
	msgs := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}}
	model := aws.String("meta.llama3-3-70b-instruct-v1:0")
	out, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: model, Messages: msgs,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(64)}})
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok || len(msg.Value.Content) == 0 || out.StopReason != types.StopReasonEndTurn || out.Usage == nil || aws.ToInt32(out.Usage.OutputTokens) <= 0 {
		t.Fatalf("Converse: %#v", out)
	}
	if txt, ok := msg.Value.Content[0].(*types.ContentBlockMemberText); !ok || txt.Value == "" {
		t.Errorf("Converse content %#v", msg.Value.Content[0])
	}

	st, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: model, Messages: msgs})
	if err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	var text strings.Builder
	var kinds []string
	for ev := range st.GetStream().Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
			kinds = append(kinds, "start")
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			if d, ok := e.Value.Delta.(*types.ContentBlockDeltaMemberText); ok {
				text.WriteString(d.Value)
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			kinds = append(kinds, "block stop")
		case *types.ConverseStreamOutputMemberMessageStop:
			kinds = append(kinds, "stop:"+string(e.Value.StopReason))
		case *types.ConverseStreamOutputMemberMetadata:
			if e.Value.Usage == nil || aws.ToInt32(e.Value.Usage.OutputTokens) <= 0 {
				t.Errorf("metadata without usage: %#v", e.Value)
			}
			kinds = append(kinds, "metadata")
		}
	}
	if err := st.GetStream().Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got := strings.Join(kinds, ","); got != "start,block stop,stop:end_turn,metadata" || text.Len() == 0 {
		t.Errorf("events %s, text %q", got, text.String())
	}
}

// TestGeminiSimRefusals: the Gemini API sim refuses a wrong key as
// Google does (400, API_KEY_INVALID), a body with members generateContent
// does not have, and a stream that does not ask for SSE.
func TestGeminiSimRefusals(t *testing.T) {
	t.Parallel()
	srv := startHost(t, Host{Kind: HostGemini, APIKey: "gemini-sim-key-1"})
	good := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	for _, tc := range []struct {
		name, path, key, body string
		status                int
		want                  string
	}{
		{"wrong key", "/v1beta/models/gemini-2.5-flash:generateContent", "nope", good, 400, "API_KEY_INVALID"},
		{"chat body", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini-sim-key-1", `{"model":"x","messages":[]}`, 400, "Unknown name"},
		{"stream without sse", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-sim-key-1", good, 400, "alt=sse"},
		{"unary", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini-sim-key-1", good, 200, `"finishReason":"STOP"`},
		{"stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini-sim-key-1", good, 200, "usageMetadata"},
	} {
		req, _ := http.NewRequest("POST", srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("x-goog-api-key", tc.key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// TestHostsStopMarkerAndImages: through the Converse and Gemini fronts, a
// StopMarker's word is the answer's stop reason in the host's words, unary
// and streamed; a stop sequence ends the text before it; an image (Converse image block, Gemini inlineData) is
// counted as the plain APIs count one; a Gemini thinking budget reports
// thoughtsTokenCount.
func TestHostsStopMarkerAndImages(t *testing.T) {
	t.Parallel()
	converse := startHost(t, Host{Kind: HostBedrock, APIKey: "bedrock-sim-key"})
	gemini := startHost(t, Host{Kind: HostGemini, APIKey: "gemini-sim-key-1"})
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	for _, tc := range []struct {
		name, url, header, key, body, want string
	}{
		{"converse stop", converse.URL + "/model/meta.llama3-3-70b-instruct-v1:0/converse", "Authorization", "Bearer bedrock-sim-key",
			`{"messages":[{"role":"user","content":[{"text":"sim:stop=guardrail_intervened hi"}]}]}`, `"stopReason":"guardrail_intervened"`},
		{"converse stream stop", converse.URL + "/model/meta.llama3-3-70b-instruct-v1:0/converse-stream", "Authorization", "Bearer bedrock-sim-key",
			`{"messages":[{"role":"user","content":[{"text":"sim:stop=max_tokens hi"}]}]}`, `"stopReason":"max_tokens"`},
		{"converse image", converse.URL + "/model/meta.llama3-3-70b-instruct-v1:0/converse", "Authorization", "Bearer bedrock-sim-key",
			`{"messages":[{"role":"user","content":[{"text":"what?"},{"image":{"format":"png","source":{"bytes":"` + png + `"}}}]}]}`, "I see 1 image(s)."},
		{"converse stop sequence", converse.URL + "/model/meta.llama3-3-70b-instruct-v1:0/converse", "Authorization", "Bearer bedrock-sim-key",
			`{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"stopSequences":["brown"]}}`, `"text":"The quick"}],"role":"assistant"}},"stopReason":"stop_sequence"`},
		{"gemini stop sequence", gemini.URL + "/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key", "gemini-sim-key-1",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"stopSequences":["brown"]}}`, `"text":"The quick"}],"role":"model"},"finishReason":"STOP"`},
		{"gemini stop", gemini.URL + "/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key", "gemini-sim-key-1",
			`{"contents":[{"role":"user","parts":[{"text":"sim:stop=SAFETY hi"}]}]}`, `"finishReason":"SAFETY"`},
		{"gemini stream stop", gemini.URL + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "x-goog-api-key", "gemini-sim-key-1",
			`{"systemInstruction":{"parts":[{"text":"sim:stop=MALFORMED_FUNCTION_CALL"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, `"finishReason":"MALFORMED_FUNCTION_CALL"`},
		{"gemini thoughts", gemini.URL + "/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key", "gemini-sim-key-1",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}}`, `"thoughtsTokenCount":102`},
		{"gemini image", gemini.URL + "/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key", "gemini-sim-key-1",
			`{"contents":[{"role":"user","parts":[{"text":"what?"},{"inlineData":{"mimeType":"image/png","data":"` + png + `"}}]}]}`, "I see 1 image(s)."},
	} {
		req, _ := http.NewRequest("POST", tc.url, strings.NewReader(tc.body))
		req.Header.Set(tc.header, tc.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %q, want 200 with %s", tc.name, resp.StatusCode, body, tc.want)
		}
	}
}
