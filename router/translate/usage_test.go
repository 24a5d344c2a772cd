package translate

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// chatU and msgU are the usage a relayed body reports, which must be valid.
func chatU(t *testing.T, body string) Usage {
	t.Helper()
	u, valid := UsageFromChatResponse([]byte(body))
	if !valid {
		t.Errorf("%s: not valid", body)
	}
	return u
}

func msgU(t *testing.T, body string) Usage {
	t.Helper()
	u, valid := UsageFromMessagesResponse([]byte(body))
	if !valid {
		t.Errorf("%s: not valid", body)
	}
	return u
}

// TestUsageFromResponsesChecksTheBody: the pass that reads the usage is the
// relay's check of the body: one valid JSON value, an object or not.
func TestUsageFromResponsesChecksTheBody(t *testing.T) {
	for body, want := range map[string]bool{
		`{"usage":{"prompt_tokens":1}`: false, `{"usage":1}x`: false, ``: false, `{"a":1,}`: false,
		`[1,2]`: true, `"text"`: true, ` {"usage":null} `: true,
	} {
		if u, valid := UsageFromChatResponse([]byte(body)); valid != want || u.Known {
			t.Errorf("UsageFromChatResponse(%q): valid %v, usage %+v; want valid %v and no usage", body, valid, u, want)
		}
		if _, valid := UsageFromMessagesResponse([]byte(body)); valid != want {
			t.Errorf("UsageFromMessagesResponse(%q): valid %v, want %v", body, valid, want)
		}
	}
}

func TestUsageFromResponses(t *testing.T) {
	tests := []struct {
		name string
		got  Usage
		want Usage
	}{
		{"openai", chatU(t, `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":4}}}`),
			Usage{InputTokens: 10, OutputTokens: 3, CacheReadInputTokens: 4, Known: true}},
		{"openai, usage key inside content is not it", chatU(t, `{"choices":[{"message":{"content":"\"usage\":{\"prompt_tokens\":99}"}}]}`), Usage{}},
		{"openai without usage", chatU(t, `{"choices":[]}`), Usage{}},
		{"openai usage null", chatU(t, `{"usage":null}`), Usage{}},
		{"anthropic with caches", msgU(t, `{"content":[{"type":"tool_use","input":{"usage":{"input_tokens":99}}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":7}}`),
			Usage{InputTokens: 35, OutputTokens: 7, CacheReadInputTokens: 20, CacheCreationInputTokens: 5, Known: true}},
		{"anthropic negative count ignored", msgU(t, `{"usage":{"input_tokens":-1,"output_tokens":2}}`),
			Usage{OutputTokens: 2, Known: true}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

// The OpenAI pass-through filter changes no byte but the usage-only chunk,
// and that only when told to, wherever the stream is cut.
func TestChatUsageFilter(t *testing.T) {
	in, err := os.ReadFile("testdata/chat_stream/text.in.sse")
	if err != nil {
		t.Fatal(err)
	}
	usageEvent := []byte(`data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[],"usage":`)
	start := bytes.Index(in, usageEvent)
	end := start + bytes.Index(in[start:], []byte("\n\n")) + 2
	stripped := append(append([]byte(nil), in[:start]...), in[end:]...)
	want := Usage{InputTokens: 19, OutputTokens: 10, ReasoningKnown: true, Known: true}
	for _, strip := range []bool{false, true} {
		expect := in
		if strip {
			expect = stripped
		}
		for cut := 0; cut <= len(in); cut++ {
			f := NewChatUsageFilter(strip)
			out, err := feedPieces(f, in, cut)
			if err != nil || !bytes.Equal(out, expect) {
				t.Fatalf("strip %v, cut %d: err %v, output:\n%s", strip, cut, err, out)
			}
			if f.Usage() != want {
				t.Fatalf("strip %v, cut %d: Usage() = %+v", strip, cut, f.Usage())
			}
		}
	}
	// Without strip, once the first data event is out, every Feed gives
	// back at once exactly what it got.
	f := NewChatUsageFilter(false)
	first := bytes.Index(in, []byte("\n\n")) + 2
	if out, _ := f.Feed(nil, in[:first]); !bytes.Equal(out, in[:first]) {
		t.Errorf("Feed held the first event back: %q", out)
	}
	if out, _ := f.Feed(nil, in[first:first+10]); !bytes.Equal(out, in[first:first+10]) {
		t.Errorf("Feed held bytes back: %q", out)
	}
	// Usage on a chunk that still has choices (some servers) is recorded and
	// kept for the client.
	groq, _ := os.ReadFile("testdata/chat_stream/text_then_tool.in.sse")
	g := NewChatUsageFilter(true)
	if out, err := feedPieces(g, groq); err != nil || !bytes.Equal(out, groq) || g.Usage() != (Usage{InputTokens: 50, OutputTokens: 12, Known: true}) {
		t.Errorf("usage on a finish chunk: %v, same bytes %v, usage %+v", err, bytes.Equal(out, groq), g.Usage())
	}
}

func TestMessagesUsageScanner(t *testing.T) {
	for _, name := range []string{"text", "parallel_tools", "crlf_multiline"} {
		in, err := os.ReadFile("testdata/messages_stream/" + name + ".in.sse")
		if err != nil {
			t.Fatal(err)
		}
		native, err := checkMessagesStream(string(in), false)
		if err != nil {
			t.Fatal(err)
		}
		for cut := 0; cut <= len(in); cut += 7 {
			s := NewMessagesUsageScanner()
			out, err := feedPieces(s, in, cut)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("%s cut %d: changed the stream (%v)", name, cut, err)
			}
			if s.Usage() != *native.Usage {
				t.Fatalf("%s cut %d: Usage() = %+v, want %+v", name, cut, s.Usage(), *native.Usage)
			}
		}
	}
	// An event without a name is still read; an event that is not JSON
	// breaks the stream's API, the bytes relayed all the same.
	s := NewMessagesUsageScanner()
	in := "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":4,\"output_tokens\":1}}}\n\nevent: content_block_delta\ndata: not json at all\n\n"
	if out, err := feedPieces(s, []byte(in)); !errors.Is(err, ErrInvalidUpstream) || string(out) != in || s.Usage() != (Usage{InputTokens: 4, OutputTokens: 1, Known: true}) {
		t.Errorf("unnamed message_start: %v, usage %+v", err, s.Usage())
	}
	if strings.Contains(in, "usage") && !s.Usage().Known {
		t.Error("usage not known")
	}
}
