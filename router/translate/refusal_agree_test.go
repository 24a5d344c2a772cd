package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRefusalUnaryAndStreamAgree: an answer a refusal or a content filter
// stopped reads the same to a Chat and a Responses client whether it came
// whole or streamed. Text before Anthropic's stop_reason "refusal" (its
// classifier stopped the answer) stays text, and the finish says the
// filter: Chat content_filter; Responses incomplete, reason
// content_filter, with the message item it stopped incomplete too, as
// OpenAI says a filtered answer (and as a stream, which sent the text
// before it knew, can only say it). A refusal without a word is Chat's
// refusal field and one Responses refusal item, completed; a Chat
// upstream's own refusal field stays a refusal.
func TestRefusalUnaryAndStreamAgree(t *testing.T) {
	anthropic := func(text string) (unary, stream []byte) {
		content, events := `[]`, []string{aEvent("message_start", aStart)}
		if text != "" {
			content = `[{"type":"text","text":"` + text + `"}]`
			events = append(events,
				aEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				aEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+text+`"}}`),
				aEvent("content_block_stop", `{"type":"content_block_stop","index":0}`))
		}
		events = append(events,
			aEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":3}}`),
			aEvent("message_stop", `{"type":"message_stop"}`))
		return []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":` + content + `,"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":3}}`), sse(events...)
	}
	refusedAfterText, _ := anthropic("I won't")
	_, refusedAfterTextStream := anthropic("I won't")
	refusedMute, refusedMuteStream := anthropic("")
	chatRefusal := []byte(`{"id":"c","object":"chat.completion","created":1,"model":"gpt","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	chatRefusalStream := sse(oEvent(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't help with that."}}]}`),
		oEvent(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		oEvent(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), oEvent("[DONE]"))
	geminiSafety := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Once"}]},"finishReason":"SAFETY"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1},"responseId":"r"}`)
	geminiSafetyStream := sse(oEvent(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Once"}]}}],"responseId":"r"}`),
		oEvent(`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"SAFETY"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1},"responseId":"r"}`))

	const note = "the model declined to answer (stop_reason: refusal)"
	for _, tc := range []struct {
		name           string
		up             Format
		unary, stream  []byte
		chat, response string
	}{
		{"Anthropic refusal after text", Messages, refusedAfterText, refusedAfterTextStream,
			`content "I won't" refusal "" finish content_filter`,
			`incomplete content_filter [message incomplete text "I won't"]`},
		{"Anthropic refusal without a word", Messages, refusedMute, refusedMuteStream,
			`content "" refusal "` + note + `" finish content_filter`,
			`completed  [message completed refusal "` + note + `"]`},
		{"OpenAI refusal field", Chat, chatRefusal, chatRefusalStream,
			"", // pass-through
			`completed  [message completed refusal "I can't help with that."]`},
		{"Gemini SAFETY after text", Gemini, geminiSafety, geminiSafetyStream,
			`content "Once" refusal "" finish content_filter`,
			`incomplete content_filter [message incomplete text "Once"]`},
	} {
		for _, client := range []Format{Chat, Responses} {
			want := map[Format]string{Chat: tc.chat, Responses: tc.response}[client]
			if want == "" {
				continue
			}
			unary, _, err := TranslateAnswer(tc.up, tc.unary, client, Answer{Model: "m", Created: 1})
			must(t, err)
			stream, err := feedPieces(NewModelStream(tc.up, client, Answer{Model: "m", Created: 1}), tc.stream)
			must(t, err)
			u, s := readsAs(t, client, unary, false), readsAs(t, client, stream, true)
			if u != want || s != want {
				t.Errorf("%s for %s:\nunary  %s\nstream %s\nwant   %s\n%s\n%s", tc.name, client, u, s, want, unary, stream)
			}
		}
	}
}

// readsAs is what a client reads of an answer, in one line: Chat's content,
// refusal and finish_reason; Responses' status, incomplete reason and each
// output item's type, status and content.
func readsAs(t *testing.T, client Format, b []byte, stream bool) string {
	t.Helper()
	if client == Chat {
		var content, refusal, finish string
		if !stream {
			c, err := checkChatCompletion(b)
			must(t, err)
			m := c.Choices[0].Message
			if m.Content != nil {
				content = *m.Content
			}
			if m.Refusal != nil {
				refusal = *m.Refusal
			}
			return fmt.Sprintf("content %q refusal %q finish %s", content, refusal, c.Choices[0].FinishReason)
		}
		if _, err := checkChatStream(string(b), true); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		for _, line := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c chunkJSON
			must(t, json.Unmarshal([]byte(data), &c))
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil {
					content += *ch.Delta.Content
				}
				if ch.Delta.Refusal != nil {
					refusal += *ch.Delta.Refusal
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		return fmt.Sprintf("content %q refusal %q finish %s", content, refusal, finish)
	}
	resp := b
	if stream {
		if _, err := checkResponsesStream(string(b)); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && (strings.Contains(data, `"type":"response.completed"`) || strings.Contains(data, `"type":"response.incomplete"`)) {
				var e struct{ Response json.RawMessage }
				must(t, json.Unmarshal([]byte(data), &e))
				resp = e.Response
			}
		}
	} else if _, err := checkResponse(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	var r struct {
		Status            string
		IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
		Output            []struct {
			Type, Status string
			Content      []struct{ Type, Text, Refusal string }
		}
	}
	must(t, json.Unmarshal(resp, &r))
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	var items []string
	for _, it := range r.Output {
		s := it.Type + " " + it.Status
		for _, c := range it.Content {
			if c.Type == "refusal" {
				s += fmt.Sprintf(" refusal %q", c.Refusal)
			} else {
				s += fmt.Sprintf(" text %q", c.Text)
			}
		}
		items = append(items, s)
	}
	return fmt.Sprintf("%s %s [%s]", r.Status, reason, strings.Join(items, "; "))
}
