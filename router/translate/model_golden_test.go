package translate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The request goldens through the model: every client request the pairwise
// goldens translate, decoded and encoded for each upstream format, is
// testdata/model_request/CLIENT_NAME.FORMAT.json (or .refused, the field a
// refusal names).
func TestModelRequestGolden(t *testing.T) {
	encoders := map[string]func(r *Request) ([]byte, error){
		"converse": func(r *Request) ([]byte, error) { return EncodeConverse(r, nil) },
		"gemini":   EncodeGemini,
		"chat": func(r *Request) ([]byte, error) {
			out, err := EncodeChat(r, "gpt-upstream")
			if err == nil {
				err = checkChatRequest(out)
			}
			return out, err
		},
		"messages": func(r *Request) ([]byte, error) {
			out, err := EncodeMessages(r, "claude-upstream", nil)
			if err == nil {
				err = checkMessagesRequest(out)
			}
			return out, err
		},
	}
	for dir, f := range map[string]Format{"chat_request": Chat, "messages_request": Messages, "responses_request": Responses} {
		ins, _ := filepath.Glob(filepath.Join("testdata", dir, "*.in.json"))
		for _, in := range ins {
			body, err := os.ReadFile(in)
			must(t, err)
			name := strings.TrimSuffix(dir, "_request") + "_" + strings.TrimSuffix(filepath.Base(in), ".in.json")
			for fname, enc := range encoders {
				r, err := DecodeRequest(f, body)
				must(t, err)
				out, err := enc(r)
				golden := filepath.Join("testdata", "model_request", name+"."+fname)
				var re *RequestError
				switch {
				case errors.As(err, &re):
					goldenText(t, golden+".refused", re.Param+"\n")
				case err != nil:
					t.Errorf("%s to %s: %v", in, fname, err)
				default:
					goldenJSON(t, golden+".json", out)
				}
			}
		}
	}
}

// goldenText compares text with the golden file (rewritten with -update).
func goldenText(t *testing.T, golden, text string) {
	t.Helper()
	if *update {
		must(t, os.WriteFile(golden, []byte(text), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if string(want) != text {
		t.Errorf("%s: got %q, want %q", golden, text, want)
	}
}
