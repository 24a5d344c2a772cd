package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// goldenJSON compares out, indented, with the golden file (rewritten with
// -update).
func goldenJSON(t *testing.T, golden string, out []byte) {
	t.Helper()
	var indented bytes.Buffer
	if err := json.Indent(&indented, out, "", "  "); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	indented.WriteByte('\n')
	if *update {
		must(t, os.WriteFile(golden, indented.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(indented.Bytes(), want) {
		t.Errorf("%s: got\n%s\nwant\n%s", golden, indented.Bytes(), want)
	}
}

func TestEncodeGeminiGolden(t *testing.T) {
	r := converseFull()
	r.Reasoning.Summary = true
	r.Turns[1].Parts[1].Signature = tok("gsig") // a thoughtSignature Gemini gave on the call
	out, err := EncodeGemini(r)
	must(t, err)
	goldenJSON(t, "testdata/gemini_request/full.out.json", out)
}

func TestEncodeGeminiSettings(t *testing.T) {
	tests := []struct {
		name, want string
		change     func(r *Request)
	}{
		{"any JSON", `"responseMimeType":"application/json"}`, func(r *Request) { r.Output = OutputFormat{JSONObject: true}; r.Reasoning = Reasoning{} }},
		{"thinking off", `"thinkingConfig":{"thinkingBudget":0}`, func(r *Request) { r.Reasoning = Reasoning{Off: true, Budget: 10} }},
		{"effort", `"thinkingConfig":{"thinkingBudget":2048}`, func(r *Request) { r.Reasoning = Reasoning{Effort: "low"} }},
		{"tool choice none", `"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`, func(r *Request) { r.ToolChoice = ToolChoice{Mode: ToolNone} }},
		{"tool choice any", `"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`, func(r *Request) { r.ToolChoice = ToolChoice{Mode: ToolAny} }},
		{"image by URL", `{"fileData":{"mimeType":"image/jpeg","fileUri":"https://x.test/a.JPG?s=1"}}`, func(r *Request) {
			r.Turns[0].Parts[1] = Part{Kind: PartImage, URL: tok("https://x.test/a.JPG?s=1"), At: 1}
		}},
	}
	for _, tt := range tests {
		r := converseFull()
		tt.change(r)
		out, err := EncodeGemini(r)
		must(t, err)
		if !json.Valid(out) || !bytes.Contains(out, []byte(tt.want)) {
			t.Errorf("%s: EncodeGemini = %s, want it to hold %s", tt.name, out, tt.want)
		}
	}
}

func TestEncodeGeminiRefuses(t *testing.T) {
	tests := []struct {
		name, param string
		change      func(r *Request)
	}{
		{"image by URL of no known type", "messages[0].content[1]", func(r *Request) {
			r.Turns[0].Parts[1] = Part{Kind: PartImage, URL: tok("https://example.com/image"), At: 1}
		}},
		{"arguments not an object", "messages[1].content[1].input", func(r *Request) { r.Turns[1].Parts[1].Args = tok(`[1]`) }},
		{"image in a tool result", "messages[2].content[1].content[1]", func(r *Request) {
			r.Turns[2].Parts[1].Content = append(r.Turns[2].Parts[1].Content, Part{Kind: PartImage, MediaType: []byte("image/png"), Data: []byte("AA=="), At: 1})
		}},
		{"a result answering no call", "messages[2].content[0]", func(r *Request) { r.Turns[2].Parts[0].ID = tok("nowhere") }},
		{"one call at a time (Chat)", "parallel_tool_calls", func(r *Request) { r.Client, r.ParallelToolCalls = Chat, []byte("false") }},
		{"one call at a time (Responses)", "parallel_tool_calls", func(r *Request) { r.Client, r.ParallelToolCalls = Responses, []byte("false") }},
		{"one call at a time (Messages)", "tool_choice.disable_parallel_tool_use", func(r *Request) { r.Client, r.ParallelToolCalls = Messages, []byte("false") }},
	}
	for _, tt := range tests {
		r := converseFull()
		tt.change(r)
		_, err := EncodeGemini(r)
		var re *RequestError
		if !errors.As(err, &re) || re.Param != tt.param {
			t.Errorf("EncodeGemini(%s) = %v, want a RequestError naming %s", tt.name, err, tt.param)
		}
	}
}

// TestEncodeSerialCallsRefusedOnlyWhenTheyMatter: a request that forbids
// parallel calls is refused by Gemini and Converse only when the model
// could call tools: with no tools, or (Gemini) tool choice none, it forbids
// nothing and goes; parallel_tool_calls true goes as well.
func TestEncodeSerialCallsRefusedOnlyWhenTheyMatter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(r *Request)
	}{
		{"parallel allowed", func(r *Request) { r.ParallelToolCalls = []byte("true") }},
		{"no tools", func(r *Request) { r.ParallelToolCalls, r.Tools = []byte("false"), nil }},
	} {
		r := converseFull()
		tt.change(r)
		if _, err := EncodeGemini(r); err != nil {
			t.Errorf("EncodeGemini(%s): %v", tt.name, err)
		}
		r = converseFull()
		tt.change(r)
		if _, err := EncodeConverse(r, nil); err != nil {
			t.Errorf("EncodeConverse(%s): %v", tt.name, err)
		}
	}
	r := converseFull()
	r.ParallelToolCalls, r.ToolChoice = []byte("false"), ToolChoice{Mode: ToolNone}
	if _, err := EncodeGemini(r); err != nil {
		t.Errorf("EncodeGemini(tool choice none): %v", err)
	}
}
