package translate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The answer goldens through the model: every Converse and Gemini answer in
// testdata/{converse,gemini}_response, written for each client format
// (NAME.chat.json, NAME.messages.json, NAME.responses.json), each valid in
// its format and carrying the usage the upstream reported.
func TestModelAnswerGolden(t *testing.T) {
	checks := map[Format]func([]byte) error{
		Chat:      func(b []byte) error { _, err := checkChatCompletion(b); return err },
		Messages:  func(b []byte) error { _, err := checkMessage(b); return err },
		Responses: func(b []byte) error { _, err := checkResponse(b); return err },
	}
	for _, up := range []Format{Converse, Gemini} {
		dir := filepath.Join("testdata", strings.TrimPrefix(up.String(), "bedrock-")+"_response")
		ins, _ := filepath.Glob(filepath.Join(dir, "*.in.json"))
		if len(ins) == 0 {
			t.Fatalf("no inputs in %s", dir)
		}
		for _, in := range ins {
			body, err := os.ReadFile(in)
			must(t, err)
			for client, check := range checks {
				out, u, err := TranslateAnswer(up, body, client, goldenAnswer)
				if err != nil {
					t.Errorf("%s for %s: %v", in, client, err)
					continue
				}
				if err := check(out); err != nil {
					t.Errorf("%s for %s: %v\n%s", in, client, err, out)
				}
				if !u.Known {
					t.Errorf("%s: usage not read", in)
				}
				goldenJSON(t, strings.TrimSuffix(in, ".in.json")+"."+clientName(client)+".json", out)
			}
		}
	}
}

func clientName(f Format) string {
	switch f {
	case Messages:
		return "messages"
	case Responses:
		return "responses"
	}
	return "chat"
}

// The stream goldens through the model: every Converse and Gemini stream
// in testdata/{converse,gemini}_stream for each client format, valid in
// its format, the same whether the upstream's bytes come whole or cut
// into pieces.
func TestModelStreamGolden(t *testing.T) {
	checks := map[Format]func(string) error{
		Chat:      func(b string) error { _, err := checkChatStream(b, true); return err },
		Messages:  func(b string) error { _, err := checkMessagesStream(b, true); return err },
		Responses: func(b string) error { _, err := checkResponsesStream(b); return err },
	}
	for _, up := range []Format{Converse, Gemini} {
		dir := filepath.Join("testdata", strings.TrimPrefix(up.String(), "bedrock-")+"_stream")
		ins, _ := filepath.Glob(filepath.Join(dir, "*.in.sse"))
		if len(ins) == 0 {
			t.Fatalf("no inputs in %s", dir)
		}
		for _, in := range ins {
			body, err := os.ReadFile(in)
			must(t, err)
			failing := strings.HasPrefix(filepath.Base(in), "error")
			for client, check := range checks {
				out, err := translateStream(NewModelStream(up, client, goldenAnswer), body)
				if failing != errors.Is(err, ErrStreamError) || (err != nil && !failing) {
					t.Errorf("%s for %s: err %v", in, client, err)
				}
				if err := check(string(out)); err != nil && !failing {
					t.Errorf("%s for %s: %v\n%s", in, client, err, out)
				}
				cut := NewModelStream(up, client, goldenAnswer)
				var pieces []byte
				for i := 0; i < len(body); i += 7 {
					pieces, _ = cut.Feed(pieces, body[i:min(i+7, len(body))])
				}
				pieces, _ = cut.Finish(pieces)
				if !bytes.Equal(pieces, out) {
					t.Errorf("%s for %s: cut in pieces\n%s\nwhole\n%s", in, client, pieces, out)
				}
				goldenText(t, strings.TrimSuffix(in, ".in.sse")+"."+clientName(client)+".sse", string(out))
			}
		}
	}
}

// A Converse stream fed as decoded events counts each as a data event, as
// the SSE form counts its events.
func TestModelStreamDataEvents(t *testing.T) {
	s := NewModelStream(Converse, Chat, goldenAnswer)
	out, err := s.FeedEvent(nil, []byte("messageStart"), []byte(`{"role":"assistant"}`))
	if err != nil || len(out) == 0 || s.DataEvents() != 1 {
		t.Fatalf("FeedEvent = %q, %v, DataEvents %d; want output, 1", out, err, s.DataEvents())
	}
	g := NewModelStream(Gemini, Messages, goldenAnswer)
	if out, err := g.Feed(nil, []byte(": keep-alive\n\n"+geminiOpening)); err != nil || len(out) == 0 || g.DataEvents() != 1 {
		t.Fatalf("Feed = %q, %v, DataEvents %d; want output, 1", out, err, g.DataEvents())
	}
}
