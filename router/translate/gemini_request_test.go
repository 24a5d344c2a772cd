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
