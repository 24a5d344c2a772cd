package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// The translators against the simulated providers over real HTTP on the
// loopback: the client's request is translated, sent to a provider of the
// other format, and its answer translated back and held to the client
// format's rules, as the gateway will do it.

func startProvider(t *testing.T, p sim.Provider) string {
	t.Helper()
	if p.Name == "" {
		p.Name = "sim"
	}
	r, err := sim.StartProvider(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.URL()
}

func send(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// relay feeds a streamed answer to s in small reads, as the network delivers
// it, and finishes.
func relay(t *testing.T, s Stream, body io.Reader) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 61)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			var ferr error
			if out, ferr = s.Feed(out, buf[:n]); ferr != nil {
				t.Fatalf("Feed: %v", ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.Finish(out)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return out
}

const chatToolsJSON = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function","function":{"name":"get_time"}}]`

func TestOpenAIClientAnthropicSim(t *testing.T) {
	url := startProvider(t, sim.Provider{Stream: sim.Pace{Chunks: 5}}) + "/messages"

	t.Run("unary text", func(t *testing.T) {
		req, _, err := ChatToMessages([]byte(`{"model":"gpt","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`), "claude-up", nil)
		must(t, err)
		resp := send(t, url, req)
		body, _ := io.ReadAll(resp.Body)
		out, u, err := TranslateAnswer(Messages, body, Chat, Answer{Model: "gpt", Created: 1})
		must(t, err)
		c, err := checkChatCompletion(out)
		must(t, err)
		if resp.StatusCode != 200 || *c.Choices[0].Message.Content != "The quick brown fox jumps" || !u.Known || u.OutputTokens != 5 || c.Usage.PromptTokens != u.InputTokens {
			t.Errorf("%d %s, usage %+v", resp.StatusCode, out, u)
		}
	})

	t.Run("streamed parallel tool calls", func(t *testing.T) {
		req, includeUsage, err := ChatToMessages([]byte(`{"model":"gpt","stream":true,"stream_options":{"include_usage":true},`+chatToolsJSON+
			`,"messages":[{"role":"user","content":"`+sim.ParallelMarker+`"}]}`), "claude-up", nil)
		must(t, err)
		s := NewModelStream(Messages, Chat, Answer{Model: "gpt", Created: 1, IncludeUsage: includeUsage})
		out := relay(t, s, send(t, url, req).Body)
		r, err := checkChatStream(string(out), true)
		must(t, err)
		if r.Stop != "tool_calls" || len(r.Tools) != 2 || r.Tools[0].Name != "get_weather" || r.Tools[0].Args != `{"city":"example"}` ||
			r.Tools[1].Args != "{}" || r.Usage == nil || !s.Usage().Known || r.Usage.OutputTokens != s.Usage().OutputTokens {
			t.Errorf("assembled %+v, Usage() %+v\n%s", r, s.Usage(), out)
		}
	})

	t.Run("context overflow stays recognisable", func(t *testing.T) {
		over := startProvider(t, sim.Provider{Name: "over", ContextOverflow: true}) + "/messages"
		req, _, err := ChatToMessages([]byte(`{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`), "claude-up", nil)
		must(t, err)
		resp := send(t, over, req)
		body, _ := io.ReadAll(resp.Body)
		out := TranslateError(Messages, resp.StatusCode, body, Chat)
		must(t, checkErrorBody(Chat, out))
		if resp.StatusCode != 400 || !IsContextOverflow(400, out) || !strings.Contains(string(out), `"code":"context_length_exceeded"`) {
			t.Errorf("%d %s", resp.StatusCode, out)
		}
	})
}

func TestAnthropicClientOpenAISim(t *testing.T) {
	url := startProvider(t, sim.Provider{Stream: sim.Pace{Chunks: 4}}) + "/chat/completions"
	const anthropicTools = `"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},{"name":"get_time","input_schema":{"type":"object"}}]`

	t.Run("unary tool call to the named tool", func(t *testing.T) {
		req, err := MessagesToChat([]byte(`{"model":"claude","max_tokens":50,`+anthropicTools+`,"tool_choice":{"type":"tool","name":"get_time"},"messages":[{"role":"user","content":"time?"}]}`), "gpt-up")
		must(t, err)
		resp := send(t, url, req)
		body, _ := io.ReadAll(resp.Body)
		out, u, err := TranslateAnswer(Chat, body, Messages, Answer{Model: "claude"})
		must(t, err)
		m, err := checkMessage(out)
		must(t, err)
		if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Name != "get_time" || string(m.Content[0].Input) != "{}" || !u.Known {
			t.Errorf("%s", out)
		}
	})

	t.Run("streamed text about an image, after a tool result", func(t *testing.T) {
		req, err := MessagesToChat([]byte(`{"model":"claude","max_tokens":50,"stream":true,`+anthropicTools+`,"messages":[`+
			`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"weather here?"}]},`+
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo"}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"rain"}]}]}`), "gpt-up")
		must(t, err)
		s := NewModelStream(Chat, Messages, Answer{Model: "claude"})
		out := relay(t, s, send(t, url, req).Body)
		r, err := checkMessagesStream(string(out), true)
		must(t, err)
		if r.Text != "I see 1 image(s). The quick brown" || r.Stop != "end_turn" || r.Usage.InputTokens == 0 || r.Usage.OutputTokens != 4 || s.Usage() != *r.Usage {
			t.Errorf("assembled %+v, usage %+v, Usage() %+v\n%s", r, r.Usage, s.Usage(), out)
		}
	})

	t.Run("pass-through stream keeps the client's bytes but the usage chunk it did not ask for", func(t *testing.T) {
		client := []byte(`{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		req, asked, err := WithStreamUsage(client)
		must(t, err)
		f := NewChatUsageFilter(!asked)
		out := relay(t, f, send(t, url, req).Body)
		if bytes.Contains(out, []byte(`"usage"`)) || !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) || f.Usage().OutputTokens != 4 {
			t.Errorf("asked %v, usage %+v:\n%s", asked, f.Usage(), out)
		}
		r, err := checkChatStream(string(out), false)
		if err != nil || r.Text != "The quick brown fox" {
			t.Errorf("%+v %v", r, err)
		}
	})

	t.Run("upstream error in the caller's shape", func(t *testing.T) {
		down := startProvider(t, sim.Provider{Name: "down", Errors: sim.ErrorRate{Rate: 1, Status: 529}}) + "/chat/completions"
		req, err := MessagesToChat([]byte(`{"model":"claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), "gpt-up")
		must(t, err)
		resp := send(t, down, req)
		body, _ := io.ReadAll(resp.Body)
		out := TranslateError(Chat, resp.StatusCode, body, Messages)
		var e struct {
			Error struct{ Type, Message string }
		}
		json.Unmarshal(out, &e)
		if resp.StatusCode != 529 || e.Error.Type != "overloaded_error" || !strings.HasPrefix(e.Error.Message, "Simulated 529") {
			t.Errorf("%d %s", resp.StatusCode, out)
		}
	})
}
