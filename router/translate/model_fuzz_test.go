package translate

import (
	"encoding/json"
	"errors"
	"testing"
)

// Fuzz targets of the neutral model's decoders: a client request decoded
// and encoded for every upstream format, and Converse and Gemini answers
// and streams written for every client.

// FuzzDecodeRequest: any body decodes into the model or is a
// *RequestError; a decoded request encodes for every upstream format as
// one valid JSON object, or is refused by name.
func FuzzDecodeRequest(f *testing.F) {
	for pattern, format := range map[string]Format{"chat_request/*.in.json": Chat, "messages_request/*.in.json": Messages, "responses_request/*.in.json": Responses} {
		addFixtures(f, pattern, func(b []byte) { f.Add(b, uint8(format)) })
	}
	f.Fuzz(func(t *testing.T, in []byte, format uint8) {
		from := Format(format%3 + 1)
		for _, to := range []Format{Chat, Messages, Converse, Gemini} {
			out, _, err := EncodeRequest(from, in, to, "up", nil)
			if err != nil {
				var re *RequestError
				if !errors.As(err, &re) {
					t.Fatalf("%v to %v: error %T %v is not a *RequestError", from, to, err, err)
				}
				continue
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(out, &obj); err != nil {
				t.Fatalf("%v to %v: output is not a JSON object: %v\n%s", from, to, err, out)
			}
		}
	})
}

// FuzzModelAnswers: any Converse or Gemini body is an answer written as
// valid JSON for every client, or ErrInvalidUpstream.
func FuzzModelAnswers(f *testing.F) {
	addFixtures(f, "converse_response/*.in.json", func(b []byte) { f.Add(b, false) })
	addFixtures(f, "gemini_response/*.in.json", func(b []byte) { f.Add(b, true) })
	f.Fuzz(func(t *testing.T, in []byte, gemini bool) {
		up := Converse
		if gemini {
			up = Gemini
		}
		for _, client := range []Format{Chat, Messages, Responses} {
			out, _, err := TranslateAnswer(up, in, client, Answer{Model: "m", Created: 1})
			if err != nil {
				if !errors.Is(err, ErrInvalidUpstream) {
					t.Fatalf("%v for %v: error %v is not ErrInvalidUpstream", up, client, err)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%v for %v: invalid JSON\n%s", up, client, out)
			}
		}
	})
}

// FuzzModelStreams: any Converse or Gemini stream, cut anywhere, gives the
// same events as uncut, each one the client's format allows.
func FuzzModelStreams(f *testing.F) {
	addFixtures(f, "converse_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/2), false) })
	addFixtures(f, "gemini_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/3), true) })
	f.Fuzz(func(t *testing.T, in []byte, cut uint, gemini bool) {
		up := Converse
		if gemini {
			up = Gemini
		}
		for _, client := range []Format{Chat, Messages, Responses} {
			fuzzStream(t, func() Stream { return NewModelStream(up, client, Answer{Model: "m", Created: 1, IncludeUsage: true}) }, in, cut, client)
		}
	})
}

// FuzzAnthropicSchema: any JSON value, as a structured-output schema
// normalised for Anthropic, is one valid JSON value, an object when it was
// one.
func FuzzAnthropicSchema(f *testing.F) {
	addFixtures(f, "anthropic_schema/cases.in.json", func(b []byte) {
		var cases []json.RawMessage
		if json.Unmarshal(b, &cases) == nil {
			for _, c := range cases {
				f.Add([]byte(c))
			}
		}
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		out := anthropicSchema(in)
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("invalid JSON: %v\n%s\nfrom %s", err, out, in)
		}
		if _, obj := v.(map[string]any); isObject(in) != obj {
			t.Fatalf("an object became a non-object or back: %s from %s", out, in)
		}
	})
}

// FuzzFitForAnthropic: any Anthropic request body, held to Anthropic's
// rules (Gemini-signed thinking left out among them), is still one valid
// JSON object, and never keeps a Gemini-signed thinking block.
func FuzzFitForAnthropic(f *testing.F) {
	addFixtures(f, "messages_request/*.in.json", func(b []byte) { f.Add(b) })
	f.Add([]byte(`{"model":"m","thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"gemini~next~c2ln"},{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"thinking","signature":"gemini~x"}]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		out := FitForAnthropic(in)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s\nfrom %s", out, in)
		}
		var req struct {
			Messages []struct {
				Role    json.RawMessage `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(out, &req) != nil {
			return
		}
		for _, m := range req.Messages {
			var blocks []struct {
				Type, Signature json.RawMessage // as they came: the rules read the bytes
			}
			if string(m.Role) == `"assistant"` && json.Unmarshal(m.Content, &blocks) == nil {
				for _, b := range blocks {
					if string(b.Type) == `"thinking"` && originOf(b.Signature) >= sigGemini {
						t.Fatalf("kept a Gemini-signed thinking block: %s\nfrom %s", out, in)
					}
				}
			}
		}
	})
}
