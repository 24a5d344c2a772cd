package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// geminiTurnTwo is the next turn's request of a client that got the Gemini
// answer in (a testdata/gemini_response fixture) translated for it: the
// answer's content (Messages) or output items (Responses) sent back as
// they came, then a result for each call.
func geminiTurnTwo(t *testing.T, client Format, fixture string) []byte {
	t.Helper()
	in, err := os.ReadFile("testdata/gemini_response/" + fixture)
	must(t, err)
	out, _, err := TranslateAnswer(Gemini, in, client, goldenAnswer)
	must(t, err)
	var answer struct {
		Content []map[string]any `json:"content"`
		Output  []map[string]any `json:"output"`
	}
	must(t, json.Unmarshal(out, &answer))
	var req map[string]any
	switch client {
	case Messages:
		var results []any
		for _, b := range answer.Content {
			if b["type"] == "tool_use" {
				results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"})
			}
		}
		msgs := []any{
			map[string]any{"role": "user", "content": "weather?"},
			map[string]any{"role": "assistant", "content": answer.Content},
		}
		if results != nil {
			msgs = append(msgs, map[string]any{"role": "user", "content": results})
		} else {
			msgs = append(msgs, map[string]any{"role": "user", "content": "and?"})
		}
		req = map[string]any{"model": "m", "max_tokens": 4096, "messages": msgs,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}
	case Responses:
		input := []any{map[string]any{"role": "user", "content": "weather?"}}
		for _, it := range answer.Output {
			delete(it, "status")
			input = append(input, it)
		}
		req = map[string]any{"model": "m", "input": input, "include": []any{"reasoning.encrypted_content"}}
	}
	body, err := json.Marshal(req)
	must(t, err)
	return body
}

// A signature Gemini gave reaches a Messages or Responses client (a
// thinking block, a reasoning item's encrypted_content), goes back to
// Gemini on the part it came with, and never to Anthropic or Bedrock.
func TestGeminiSignatureRoundTrip(t *testing.T) {
	for _, client := range []Format{Messages, Responses} {
		t.Run(client.String(), func(t *testing.T) {
			body := geminiTurnTwoWithOutputs(t, client, "function_calls.in.json")
			if !bytes.Contains(body, []byte(`gemini-next:c2ln`)) {
				t.Fatalf("the client never got the signature: %s", body)
			}
			r, err := DecodeRequest(client, body)
			must(t, err)
			gem, err := EncodeGemini(r)
			must(t, err)
			var g struct {
				Contents []struct {
					Role  string           `json:"role"`
					Parts []map[string]any `json:"parts"`
				} `json:"contents"`
			}
			must(t, json.Unmarshal(gem, &g))
			model := g.Contents[1]
			if model.Role != "model" || len(model.Parts) != 2 {
				t.Fatalf("model turn = %+v, want the two calls: %s", model, gem)
			}
			if sig := model.Parts[0]["thoughtSignature"]; sig != "c2ln" || model.Parts[0]["functionCall"] == nil {
				t.Errorf("first call's part = %v, want functionCall with thoughtSignature c2ln", model.Parts[0])
			}
			if _, ok := model.Parts[1]["thoughtSignature"]; ok {
				t.Errorf("second call's part = %v, want no signature (Gemini gave none)", model.Parts[1])
			}
			for name, out := range encodeElsewhere(t, r) {
				if bytes.Contains(out, []byte("gemini")) || bytes.Contains(out, []byte("c2ln")) {
					t.Errorf("%s got Gemini's signature: %s", name, out)
				}
			}
		})
	}
}

// encodeElsewhere is r for the upstreams that cannot check a Gemini
// signature.
func encodeElsewhere(t *testing.T, r *Request) map[string][]byte {
	t.Helper()
	msgs, err := EncodeMessages(r, "claude", nil)
	must(t, err)
	must(t, checkMessagesRequest(msgs))
	conv, err := EncodeConverse(r, nil)
	must(t, err)
	chat, err := EncodeChat(r, "gpt")
	must(t, err)
	return map[string][]byte{"messages": msgs, "converse": conv, "chat": chat}
}

// geminiTurnTwoWithOutputs is geminiTurnTwo with a Responses client's
// function_call_output items after its calls.
func geminiTurnTwoWithOutputs(t *testing.T, client Format, fixture string) []byte {
	body := geminiTurnTwo(t, client, fixture)
	if client != Responses {
		return body
	}
	var req map[string]any
	must(t, json.Unmarshal(body, &req))
	input := req["input"].([]any)
	for _, it := range input {
		if m, ok := it.(map[string]any); ok && m["type"] == "function_call" {
			input = append(input, map[string]any{"type": "function_call_output", "call_id": m["call_id"], "output": "ok"})
		}
	}
	req["input"] = input
	out, err := json.Marshal(req)
	must(t, err)
	return out
}

// A Messages history holding a Gemini-signed thinking block, going to an
// Anthropic target as it came, loses that block (Anthropic would refuse the
// request); thinking then goes off, as after any tool turn without it.
func TestFitForAnthropicDropsGeminiThinking(t *testing.T) {
	body := geminiTurnTwo(t, Messages, "function_calls.in.json")
	out := FitForAnthropic(body)
	if bytes.Contains(out, []byte("gemini")) {
		t.Fatalf("FitForAnthropic kept Gemini's signature: %s", out)
	}
	if !json.Valid(out) || bytes.Contains(out, []byte(`"thinking":{`)) {
		t.Errorf("FitForAnthropic = %s, want valid JSON without thinking on", out)
	}
	if !strings.Contains(string(out), `"type":"tool_use"`) {
		t.Errorf("FitForAnthropic lost the calls: %s", out)
	}
	// An Anthropic signature stays.
	anth := []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqQB"},{"type":"text","text":"gemini:"}]}]}`)
	if got := FitForAnthropic(anth); !bytes.Equal(got, anth) {
		t.Errorf("FitForAnthropic changed an Anthropic history: %s", got)
	}
}

// The signature on a text answer goes back on its text; a signature Gemini
// sent on an empty last part goes back as that part.
func TestGeminiSignatureOnText(t *testing.T) {
	body := geminiTurnTwo(t, Messages, "text.in.json")
	r, err := DecodeRequest(Messages, body)
	must(t, err)
	gem, err := EncodeGemini(r)
	must(t, err)
	want := `{"role":"model","parts":[{"text":"Let me think about unicorns.","thought":true},{"text":"Unicorns are \"mythical\".","thoughtSignature":"Z3NpZw=="}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}

	r = &Request{Client: Messages, Turns: []Turn{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: tok("hi")}}},
		{Role: RoleAssistant, Parts: []Part{
			{Kind: PartText, Text: tok("hello")},
			{Kind: PartThinking, Text: tok(""), Signature: tok("gemini-next:U0lH")},
		}},
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: tok("more")}}},
	}}
	gem, err = EncodeGemini(r)
	must(t, err)
	want = `{"role":"model","parts":[{"text":"hello"},{"text":"","thoughtSignature":"U0lH"}]}`
	if !bytes.Contains(gem, []byte(want)) {
		t.Errorf("EncodeGemini = %s\nwant it to hold %s", gem, want)
	}
}
