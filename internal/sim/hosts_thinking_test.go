package sim

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHostsThinkingSignatures: a thinking request to the Gemini and
// Converse fronts gets signed parts (a thoughtSignature on the first call,
// or on a text answer's last part; a thought part with includeThoughts;
// Converse's reasoningContent first), unary and streamed; the next turn
// that carries them back unchanged is answered with the note of how many
// were verified, and one whose signature was altered or moved, or (Gemini)
// left off a thinking turn's call, is refused with 400.
func TestHostsThinkingSignatures(t *testing.T) {
	t.Parallel()
	converse := startHost(t, Host{Kind: HostBedrock, APIKey: "bedrock-sim-key"})
	gemini := startHost(t, Host{Kind: HostGemini, APIKey: "gemini-sim-key-1"})
	callSig := thoughtSignature("call", "get_weather")
	textSig := thoughtSignature("text", "")
	reasonSig := thoughtSignature("reasoning", "")
	const (
		gTools    = `"tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]`
		gThinks   = `"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}`
		gSummary  = `"generationConfig":{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`
		gAsk      = `{"role":"user","parts":[{"text":"weather?"}]}`
		gResult   = `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"get_weather","response":{"result":"sunny"}}}]}`
		cTools    = `"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}}]}`
		cReasons  = `"additionalModelRequestFields":{"reasoningConfig":{"type":"enabled","maxReasoningEffort":"low"}}`
		cAsk      = `{"role":"user","content":[{"text":"weather?"}]}`
		cResult   = `{"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[{"text":"sunny"}]}}]}`
		cToolUse  = `{"toolUse":{"toolUseId":"c1","name":"get_weather","input":{"city":"example"}}}`
		gGenerate = "/v1beta/models/gemini-2.5-flash:generateContent"
		gStream   = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
		cUnary    = "/model/meta.llama3-3-70b-instruct-v1:0/converse"
		cStream   = "/model/meta.llama3-3-70b-instruct-v1:0/converse-stream"
	)
	gCall := func(sig string) string {
		s := ""
		if sig != "" {
			s = `,"thoughtSignature":"` + sig + `"`
		}
		return `{"role":"model","parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"example"}}` + s + `}]}`
	}
	cReasoning := func(sig string) string {
		return `{"reasoningContent":{"reasoningText":{"text":"` + thoughtText + `","signature":"` + sig + `"}}}`
	}
	for _, tc := range []struct {
		name, url, body string
		status          int
		want            []string
	}{
		{"gemini call signed", gemini.URL + gGenerate, `{"contents":[` + gAsk + `],` + gTools + `,` + gThinks + `}`, 200,
			[]string{`"functionCall"`, `"thoughtSignature":"` + callSig + `"`}},
		{"gemini stream call signed, thought first", gemini.URL + gStream, `{"contents":[` + gAsk + `],` + gTools + `,` + gSummary + `}`, 200,
			[]string{`"thought":true`, `"thoughtSignature":"` + callSig + `"`}},
		{"gemini text signed last", gemini.URL + gGenerate, `{"contents":[` + gAsk + `],` + gThinks + `}`, 200,
			[]string{`"text":"The quick brown","thoughtSignature":"` + textSig + `"`}},
		{"gemini stream text signed on an empty last part", gemini.URL + gStream, `{"contents":[` + gAsk + `],` + gThinks + `}`, 200,
			[]string{`{"text":"","thoughtSignature":"` + textSig + `"}`}},
		{"gemini no thinking, no signature", gemini.URL + gGenerate, `{"contents":[` + gAsk + `],` + gTools + `}`, 200, []string{`"functionCall"`}},
		{"gemini signature back", gemini.URL + gGenerate, `{"contents":[` + gAsk + `,` + gCall(callSig) + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 200,
			[]string{`"text":"` + SignatureNote(1) + `The quick`}},
		{"gemini signature back, streamed", gemini.URL + gStream, `{"contents":[` + gAsk + `,` + gCall(callSig) + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 200,
			[]string{`"text":"` + SignatureNote(1) + `The"`}},
		{"gemini skip value", gemini.URL + gGenerate, `{"contents":[` + gAsk + `,` + gCall(geminiSkipSignature) + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 200,
			[]string{`"text":"The quick`}},
		{"gemini signature altered", gemini.URL + gGenerate, `{"contents":[` + gAsk + `,` + gCall("x"+callSig[1:]) + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 400,
			[]string{"invalid thought signature"}},
		{"gemini signature moved", gemini.URL + gGenerate, `{"contents":[` + gAsk + `,` + gCall(textSig) + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 400,
			[]string{"invalid thought signature"}},
		{"gemini thinking call unsigned", gemini.URL + gGenerate, `{"contents":[` + gAsk + `,` + gCall("") + `,` + gResult + `],` + gTools + `,` + gThinks + `}`, 400,
			[]string{"missing a thought_signature"}},
		{"converse reasoning first", converse.URL + cUnary, `{"messages":[` + cAsk + `],` + cTools + `,` + cReasons + `}`, 200,
			[]string{`"content":[{"reasoningContent":{"reasoningText":{"signature":"` + reasonSig + `","text":"` + thoughtText + `"}}},{"toolUse"`}},
		{"converse stream reasoning", converse.URL + cStream, `{"messages":[` + cAsk + `],` + cReasons + `}`, 200,
			[]string{`{"reasoningContent":{"text":"` + thoughtText + `"}}`, `{"reasoningContent":{"signature":"` + reasonSig + `"}}`, `"contentBlockIndex":1,"delta":{"text":"The"}`}},
		{"converse signature back", converse.URL + cUnary, `{"messages":[` + cAsk + `,{"role":"assistant","content":[` + cReasoning(reasonSig) + `,` + cToolUse + `]},` + cResult + `],` + cTools + `,` + cReasons + `}`, 200,
			[]string{`{"text":"` + SignatureNote(1) + `The quick`}},
		{"converse signature altered", converse.URL + cUnary, `{"messages":[` + cAsk + `,{"role":"assistant","content":[` + cReasoning("x"+reasonSig[1:]) + `,` + cToolUse + `]},` + cResult + `],` + cTools + `,` + cReasons + `}`, 400,
			[]string{"Invalid `signature`"}},
		{"converse reasoning left out: nothing verified", converse.URL + cUnary, `{"messages":[` + cAsk + `,{"role":"assistant","content":[` + cToolUse + `]},` + cResult + `],` + cTools + `,` + cReasons + `}`, 200,
			[]string{`{"text":"The quick`}},
		{"converse no reasoning asked", converse.URL + cUnary, `{"messages":[` + cAsk + `,{"role":"assistant","content":[` + cToolUse + `]},` + cResult + `],` + cTools + `}`, 200,
			[]string{`{"text":"The quick`}},
	} {
		req, _ := http.NewRequest("POST", tc.url, strings.NewReader(tc.body))
		if strings.HasPrefix(tc.url, gemini.URL) {
			req.Header.Set("x-goog-api-key", "gemini-sim-key-1")
		} else {
			req.Header.Set("Authorization", "Bearer bedrock-sim-key")
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.status)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: %s\nwant %s in it", tc.name, body, w)
			}
		}
	}
}
