package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// tok is a JSON string token of s, as a decoder hands text to the model.
func tok(s string) []byte { b, _ := json.Marshal(s); return b }

// converseFull is a request using every part and setting Converse can say:
// a cached system prompt, an image, a tool loop with an error result and
// signed thinking, a strict tool, a named tool choice, a schema, limits,
// stop sequences, top_k and a reasoning budget.
func converseFull() *Request {
	return &Request{
		Client: Messages,
		System: []Part{{Kind: PartText, Text: tok("Be brief."), Cache: []byte(`{"type":"ephemeral"}`)}},
		Turns: []Turn{
			{Role: RoleUser, At: 0, Parts: []Part{
				{Kind: PartText, Text: tok("What is \"this\"?\n"), At: 0},
				{Kind: PartImage, MediaType: []byte("image/png"), Data: []byte("iVBORw0KGgo="), At: 1},
			}},
			{Role: RoleAssistant, At: 1, Parts: []Part{
				{Kind: PartThinking, Text: tok("look it up"), Signature: tok("sig-1"), At: 0},
				{Kind: PartToolCall, ID: tok("call.1"), Name: tok("lookup"), Args: tok(`{"q":"x"}`), ArgsQuoted: true, At: 1},
				{Kind: PartToolCall, ID: tok("toolu_2"), Name: tok("now"), At: 2},
			}},
			{Role: RoleUser, At: 2, Parts: []Part{
				{Kind: PartToolResult, ID: tok("call.1"), Text: tok("not found"), IsError: true, At: 0},
				{Kind: PartToolResult, ID: tok("toolu_2"), Content: []Part{{Kind: PartText, Text: tok("noon")}}, At: 1},
			}},
			{Role: RoleUser, At: 3, Cache: []byte(`{"type":"ephemeral"}`), Parts: []Part{{Kind: PartText, Text: tok("thanks"), At: -1}}},
		},
		Tools: []Tool{
			{Name: tok("lookup"), Description: tok("Look up"), Schema: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`), Strict: []byte("true")},
			{Name: tok("now")},
		},
		ToolChoice: ToolChoice{Mode: ToolNamed, Name: tok("lookup")},
		Output:     OutputFormat{Schema: []byte(`{"type":"object"}`), Name: tok("answer")},
		Limits:     Limits{MaxTokens: []byte("512"), Temperature: []byte("0.2"), TopP: []byte("0.9"), TopK: []byte("40"), Stop: [][]byte{tok("END")}},
		Reasoning:  Reasoning{Budget: 8192},
	}
}

func TestEncodeConverseGolden(t *testing.T) {
	out, err := EncodeConverse(converseFull(), NewToolIDs(nil, Messages))
	if err != nil {
		t.Fatalf("EncodeConverse: %v", err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, out, "", "  "); err != nil {
		t.Fatalf("EncodeConverse wrote invalid JSON: %v\n%s", err, out)
	}
	indented.WriteByte('\n')
	const golden = "testdata/converse_request/full.out.json"
	if *update {
		must(t, os.WriteFile(golden, indented.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(indented.Bytes(), want) {
		t.Errorf("EncodeConverse = \n%s\nwant\n%s", indented.Bytes(), want)
	}
}

func TestEncodeConverseRefuses(t *testing.T) {
	tests := []struct {
		name, param string
		change      func(r *Request)
	}{
		{"image by URL", "messages[0].content[1]", func(r *Request) {
			r.Turns[0].Parts[1] = Part{Kind: PartImage, URL: tok("https://example.com/a.png"), At: 1}
		}},
		{"image of a format Converse lacks", "messages[0].content[1]", func(r *Request) {
			r.Turns[0].Parts[1].MediaType = []byte("image/tiff")
		}},
		{"arguments not an object", "messages[1].content[1].input", func(r *Request) {
			r.Turns[1].Parts[1].Args = tok(`[1]`)
		}},
		{"any JSON object", "response_format.type", func(r *Request) { r.Client = Chat; r.Output = OutputFormat{JSONObject: true} }},
		{"tool choice none", "tool_choice", func(r *Request) { r.ToolChoice = ToolChoice{Mode: ToolNone} }},
		{"one call at a time (Chat)", "parallel_tool_calls", func(r *Request) { r.Client, r.ParallelToolCalls = Chat, []byte("false") }},
		{"one call at a time (Messages)", "tool_choice.disable_parallel_tool_use", func(r *Request) { r.Client, r.ParallelToolCalls = Messages, []byte("false") }},
		{"a document not a PDF", "input[0].content[1]", func(r *Request) {
			r.Client = Responses
			r.Turns[0].Parts[1] = Part{Kind: PartDocument, MediaType: []byte("text/csv"), Data: []byte("YQ=="), At: 1}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := converseFull()
			tt.change(r)
			_, err := EncodeConverse(r, nil)
			var re *RequestError
			if !errors.As(err, &re) || re.Param != tt.param {
				t.Errorf("EncodeConverse(%s) = %v, want a RequestError naming %s", tt.name, err, tt.param)
			}
		})
	}
}
