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
