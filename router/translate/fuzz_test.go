package translate

import (
	"bytes"
	"encoding/json"

	"os"
	"path/filepath"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// The fuzz targets run their seeds in every `go test`; `go test -fuzz NAME`
// explores further. Seeds are the testdata fixtures.

func addFixtures(f *testing.F, pattern string, add func(b []byte)) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s", pattern)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// fuzzStream checks a stream translator on arbitrary bytes cut at one point:
// no panic; the same output and outcome as uncut; and, when the upstream did
// not break its format, an output every event of which is what the client's
// format allows, opening as that format opens.
func fuzzStream(t *testing.T, mk func() Stream, in []byte, cut uint, client Format) {
	c := int(cut % uint(len(in)+1))
	whole, errWhole := feedPieces(mk(), in)
	split, errSplit := feedPieces(mk(), in, c)
	if !bytes.Equal(whole, split) || (errWhole == nil) != (errSplit == nil) {
		t.Fatalf("cut at %d changes the result:\n%q (%v)\nvs\n%q (%v)", c, split, errSplit, whole, errWhole)
	}
	events, err := readEvents(string(whole))
	if err != nil {
		t.Fatalf("output is not an event stream: %v\n%q", err, whole)
	}
	for i, ev := range events {
		if client == Responses {
			var typed struct{ Type string }
			if err := json.Unmarshal([]byte(ev.data), &typed); err != nil || typed.Type != ev.name {
				t.Fatalf("event %d is not a Responses event: %q", i, ev)
			}
			if i == 0 && ev.name != "response.created" && ev.name != "error" {
				t.Fatalf("the stream opens with %s", ev.name)
			}
			continue
		}
		if client == Chat {
			if ev.name != "" || (ev.data != "[DONE]" && !json.Valid([]byte(ev.data))) {
				t.Fatalf("event %d is not an OpenAI event: %q", i, ev)
			}
			if i == 0 && !bytes.Contains([]byte(ev.data), []byte(`"role":"assistant"`)) && !bytes.HasPrefix([]byte(ev.data), []byte(`{"error":`)) {
				t.Fatalf("the stream opens with %q", ev.data)
			}
			continue
		}
		var typed struct{ Type string }
		if err := json.Unmarshal([]byte(ev.data), &typed); err != nil || typed.Type != ev.name {
			t.Fatalf("event %d is not an Anthropic event: %q", i, ev)
		}
		if i == 0 && ev.name != "message_start" && ev.name != "error" {
			t.Fatalf("the stream opens with %s", ev.name)
		}
	}
}

func FuzzMessagesToChatStream(f *testing.F) {
	addFixtures(f, "messages_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/2)) })
	f.Add([]byte("event: error\ndata: {\"type\":\"error\"}\n\n"), uint(3))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\r\r"), uint(1))
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		fuzzStream(t, func() Stream {
			return NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: true})
		}, in, cut, Chat)
	})
}

func FuzzChatToMessagesStream(f *testing.F) {
	addFixtures(f, "chat_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/3)) })
	f.Add([]byte("data: [DONE]\n\n"), uint(5))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n"), uint(9))
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		fuzzStream(t, func() Stream { return NewModelStream(Chat, Messages, Answer{Model: "m"}) }, in, cut, Messages)
	})
}

func FuzzChatToResponsesStream(f *testing.F) {
	addFixtures(f, "chat_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/3)) })
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"x\",\"refusal\":\"y\"}}]}\n\ndata: [DONE]\n\n"), uint(9))
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		fuzzStream(t, func() Stream { return NewModelStream(Chat, Responses, Answer{Model: "m", Created: 1}) }, in, cut, Responses)
	})
}

func FuzzMessagesToResponsesStream(f *testing.F) {
	addFixtures(f, "messages_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/2)) })
	f.Add([]byte("event: error\ndata: {\"type\":\"error\"}\n\n"), uint(3))
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		fuzzStream(t, func() Stream { return NewModelStream(Messages, Responses, Answer{Model: "m", Created: 1}) }, in, cut, Responses)
	})
}

// The pass-through filters change no byte (but the usage chunk when
// stripping) wherever the stream is cut: what they relay is the stream as
// it came, up to where it broke its API (then they say so).
func FuzzUsageFilters(f *testing.F) {
	addFixtures(f, "*_stream/*.in.sse", func(b []byte) { f.Add(b, uint(len(b)/2)) })
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		c := int(cut % uint(len(in)+1))
		// Rewriting the model keeps every event an event, wherever cut.
		for _, format := range []Format{Chat, Messages, Responses} {
			whole, _ := feedPieces(NewPassThrough(format, false, "m"), in)
			split, _ := feedPieces(NewPassThrough(format, false, "m"), in, c)
			if !bytes.Equal(whole, split) {
				t.Fatalf("%v: rewriting the model depends on the cut at %d", format, c)
			}
		}

		for _, mk := range []func() Stream{func() Stream { return NewChatUsageFilter(false) }, NewMessagesUsageScanner, NewResponsesCheck} {
			out, err := feedPieces(mk(), in, c)
			if !bytes.HasPrefix(in, out) || err == nil && !bytes.Equal(out, in) {
				t.Fatalf("pass-through changed the stream (%v)", err)
			}
		}
		whole, _ := feedPieces(NewChatUsageFilter(true), in)
		split, _ := feedPieces(NewChatUsageFilter(true), in, c)
		if !bytes.Equal(whole, split) {
			t.Fatalf("stripping depends on the cut at %d", c)
		}
	})
}

// Requests: no panic, and a translation is a JSON object with what the target
// API requires at the top; a refusal is a *RequestError.
func FuzzChatToMessages(f *testing.F) {
	addFixtures(f, "chat_request/*.in.json", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := ChatToMessages(in, "up", nil)
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("error %T %v is not a *RequestError", err, err)
			}
			return
		}
		var r struct {
			Model     string            `json:"model"`
			MaxTokens json.RawMessage   `json:"max_tokens"`
			Messages  []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(out, &r); err != nil || r.Model != "up" || r.MaxTokens == nil || r.Messages == nil {
			t.Fatalf("translation %q of %q: %v", out, in, err)
		}
	})
}

func FuzzResponsesRequest(f *testing.F) {
	addFixtures(f, "responses_request/*.in.json", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		for name, translate := range map[string]func() ([]byte, error){
			"ResponsesToChat":     func() ([]byte, error) { return ResponsesToChat(in, "up") },
			"ResponsesToMessages": func() ([]byte, error) { return ResponsesToMessages(in, "up", NewToolIDs(in, Responses)) },
		} {
			out, err := translate()
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("%s: error %T %v is not a *RequestError", name, err, err)
				}
				continue
			}
			var r struct {
				Model    string            `json:"model"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(out, &r); err != nil || r.Model != "up" || r.Messages == nil {
				t.Fatalf("%s: translation %q of %q: %v", name, out, in, err)
			}
		}
	})
}

func FuzzMessagesToChat(f *testing.F) {
	addFixtures(f, "messages_request/*.in.json", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := MessagesToChat(in, "up")
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("error %T %v is not a *RequestError", err, err)
			}
			return
		}
		var r struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(out, &r); err != nil || r.Model != "up" || r.Messages == nil {
			t.Fatalf("translation %q of %q: %v", out, in, err)
		}
	})
}

// Answers and errors: no panic; an answer translates to valid JSON or
// ErrInvalidUpstream; an error body always becomes the caller's error shape.
func FuzzResponsesAndErrors(f *testing.F) {
	for _, p := range []string{"chat_response/*.in.json", "messages_response/*.in.json", "chat_error/*.in.json", "messages_error/*.in.json"} {
		addFixtures(f, p, func(b []byte) { f.Add(b, 400) })
	}
	f.Fuzz(func(t *testing.T, in []byte, status int) {
		if out, _, err := TranslateAnswer(Messages, in, Chat, Answer{Model: "m", Created: 1}); err == nil && !json.Valid(out) {
			t.Fatalf("TranslateAnswer(Messages, %q, Chat) = %q", in, out)
		}
		if out, _, err := TranslateAnswer(Chat, in, Messages, Answer{Model: "m"}); err == nil && !json.Valid(out) {
			t.Fatalf("TranslateAnswer(Chat, %q, Messages) = %q", in, out)
		}
		if out, _, err := TranslateAnswer(Chat, in, Responses, Answer{Model: "m"}); err == nil && !json.Valid(out) {
			t.Fatalf("TranslateAnswer(Chat, %q, Responses) = %q", in, out)
		}
		if out, _, err := TranslateAnswer(Messages, in, Responses, Answer{Model: "m"}); err == nil && !json.Valid(out) {
			t.Fatalf("TranslateAnswer(Messages, %q, Responses) = %q", in, out)
		}
		if v, ok := jsonscan.Valid(in); ok && !json.Valid(WithAnswerModel(v, "m\"x")) {
			t.Fatalf("WithAnswerModel(%q) = %q", v, WithAnswerModel(v, "m\"x"))
		}
		for _, up := range []Format{Chat, Messages, Converse, Gemini} {
			for _, client := range []Format{Chat, Messages, Responses} {
				shape := client
				if client == Responses {
					shape = Chat
				}
				if up == shape || up == Chat && client == Responses {
					continue // not translated: the body as it came
				}
				if out := TranslateError(up, status, in, client); checkErrorBody(shape, out) != nil {
					t.Fatalf("TranslateError(%v, %q, %v) = %q: %v", up, in, client, out, checkErrorBody(shape, out))
				}
			}
		}
		if out, _, err := WithStreamUsage(in); err == nil && !json.Valid(out) {
			t.Fatalf("WithStreamUsage(%q) = %q", in, out)
		}
	})
}
