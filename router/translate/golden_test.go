package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.out.* from the translators' output")

// The golden tests: every testdata/DIR/NAME.in.EXT, shaped like a payload the
// provider documents, is translated; the result must be valid in the target
// format and equal testdata/DIR/NAME.out.EXT (JSON is stored indented, so a
// reviewer can read it; the comparison is still byte for byte after indenting
// the output the same way).

const (
	goldenCreated = 1700000000
	clientModel   = "client-model"
)

// goldenAnswer presents answers as the gateway does by default: under the
// model the upstream says answered ("sent-model" when it names none).
var goldenAnswer = Answer{Model: "sent-model", UpstreamModel: true, Created: goldenCreated, IncludeUsage: true}

type goldenDir struct {
	dir       string
	translate func(t *testing.T, name string, in []byte) []byte
}

var goldenDirs = []goldenDir{
	{"chat_request", func(t *testing.T, _ string, in []byte) []byte {
		out, _, err := ChatToMessages(in, "claude-upstream", nil)
		must(t, err)
		must(t, checkMessagesRequest(out))
		return out
	}},
	{"messages_request", func(t *testing.T, _ string, in []byte) []byte {
		out, err := MessagesToChat(in, "gpt-upstream")
		must(t, err)
		must(t, checkChatRequest(out))
		return out
	}},
	{"messages_response", func(t *testing.T, _ string, in []byte) []byte {
		out, u, err := TranslateAnswer(Messages, in, Chat, goldenAnswer)
		must(t, err)
		_, err = checkChatCompletion(out)
		must(t, err)
		// Every count crosses over, cache writes included (in the fields
		// the gateway adds to OpenAI's usage).
		fromIn, inValid := UsageFromMessagesResponse(in)
		fromOut, outValid := UsageFromChatResponse(out)
		if u != fromIn || u != fromOut || !inValid || !outValid {
			t.Errorf("usage %+v; read from the input %+v (valid %v), from the output %+v (valid %v)", u, fromIn, inValid, fromOut, outValid)
		}
		return out
	}},
	{"chat_response", func(t *testing.T, _ string, in []byte) []byte {
		out, u, err := TranslateAnswer(Chat, in, Messages, goldenAnswer)
		must(t, err)
		_, err = checkMessage(out)
		must(t, err)
		if fromIn, valid := UsageFromChatResponse(in); u != fromIn || !valid {
			t.Errorf("usage %+v, read from the input %+v (valid %v)", u, fromIn, valid)
		}
		if back, _ := UsageFromMessagesResponse(out); u.Known && back != tokenCounts(u) {
			t.Errorf("usage %+v, read back from the output %+v", u, back)
		}
		return out
	}},
	{"messages_stream", func(t *testing.T, name string, in []byte) []byte {
		out, err := translateStream(NewModelStream(Messages, Chat, goldenAnswer), in)
		must(t, streamErr(name, err))
		_, err = checkChatStream(string(out), true)
		must(t, err)
		return out
	}},
	{"chat_stream", func(t *testing.T, name string, in []byte) []byte {
		out, err := translateStream(NewModelStream(Chat, Messages, goldenAnswer), in)
		must(t, streamErr(name, err))
		_, err = checkMessagesStream(string(out), true)
		must(t, err)
		return out
	}},
	{"responses_request", func(t *testing.T, _ string, in []byte) []byte {
		chat, err := ResponsesToChat(in, "gpt-upstream")
		must(t, err)
		must(t, checkChatRequest(chat))
		msgs, err := ResponsesToMessages(in, "claude-upstream", NewToolIDs(in, Responses))
		must(t, err)
		must(t, checkMessagesRequest(msgs))
		return []byte(`{"chat":` + string(chat) + `,"messages":` + string(msgs) + `}`)
	}},
	{"responses_from_chat", func(t *testing.T, _ string, in []byte) []byte {
		out, u, err := TranslateAnswer(Chat, in, Responses, goldenAnswer)
		must(t, err)
		_, err = checkResponse(out)
		must(t, err)
		if fromIn, _ := UsageFromChatResponse(in); u != fromIn {
			t.Errorf("usage %+v, read from the input %+v", u, fromIn)
		}
		return out
	}},
	{"responses_from_messages", func(t *testing.T, _ string, in []byte) []byte {
		out, u, err := TranslateAnswer(Messages, in, Responses, goldenAnswer)
		must(t, err)
		_, err = checkResponse(out)
		must(t, err)
		if fromIn, _ := UsageFromMessagesResponse(in); u != fromIn {
			t.Errorf("usage %+v, read from the input %+v", u, fromIn)
		}
		return out
	}},
	{"responses_from_chat_stream", func(t *testing.T, name string, in []byte) []byte {
		out, err := translateStream(NewModelStream(Chat, Responses, goldenAnswer), in)
		must(t, streamErr(name, err))
		_, err = checkResponsesStream(string(out))
		must(t, err)
		return out
	}},
	{"responses_from_messages_stream", func(t *testing.T, name string, in []byte) []byte {
		out, err := translateStream(NewModelStream(Messages, Responses, goldenAnswer), in)
		must(t, streamErr(name, err))
		_, err = checkResponsesStream(string(out))
		must(t, err)
		return out
	}},
	{"messages_error", func(t *testing.T, name string, in []byte) []byte {
		status := statusOf(t, name)
		out := TranslateError(Messages, status, in, Chat)
		must(t, checkErrorBody(Chat, out))
		if IsContextOverflow(status, in) != IsContextOverflow(status, out) {
			t.Errorf("context overflow recognised in the input %v, in the output %v", IsContextOverflow(status, in), IsContextOverflow(status, out))
		}
		return out
	}},
	{"chat_error", func(t *testing.T, name string, in []byte) []byte {
		status := statusOf(t, name)
		out := TranslateError(Chat, status, in, Messages)
		must(t, checkErrorBody(Messages, out))
		if IsContextOverflow(status, in) != IsContextOverflow(status, out) {
			t.Errorf("context overflow recognised in the input %v, in the output %v", IsContextOverflow(status, in), IsContextOverflow(status, out))
		}
		return out
	}},
}

func TestGolden(t *testing.T) {
	for _, gd := range goldenDirs {
		ins, err := filepath.Glob(filepath.Join("testdata", gd.dir, "*.in.*"))
		if err != nil || len(ins) == 0 {
			t.Fatalf("no fixtures in testdata/%s (%v)", gd.dir, err)
		}
		for _, in := range ins {
			name := strings.SplitN(filepath.Base(in), ".in.", 2)[0]
			t.Run(gd.dir+"/"+name, func(t *testing.T) {
				input, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				got := gd.translate(t, name, input)
				if t.Failed() {
					t.Logf("output:\n%s", got)
					return
				}
				if strings.HasSuffix(in, ".json") {
					got = indent(t, got)
				}
				golden := strings.Replace(in, ".in.", ".out.", 1)
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// statusOf reads the HTTP status an error fixture is named after: 529_overloaded.
func statusOf(t *testing.T, name string) int {
	s, _, _ := strings.Cut(name, "_")
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("fixture %s is not named STATUS_what", name)
	}
	return n
}

// translateStream feeds in whole, then finishes.
// streamErr is a golden stream's error: ErrStreamError is what an upstream
// stream that ends with its own error event (the error.* inputs) ends with.
func streamErr(name string, err error) error {
	if strings.HasPrefix(name, "error") && errors.Is(err, ErrStreamError) {
		return nil
	}
	return err
}

func translateStream(s Stream, in []byte) ([]byte, error) {
	out, err := s.Feed(nil, in)
	if err != nil {
		return out, err
	}
	return s.Finish(out)
}

// tokenCounts is u without its reasoning count, which a chat completion's
// usage gives and neither the relay's usage reader nor a message carries.
func tokenCounts(u Usage) Usage {
	u.ReasoningTokens, u.ReasoningKnown = 0, false
	return u
}
