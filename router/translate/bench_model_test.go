package translate

import "testing"

// The model's costs: a 4 KB request from each client to each upstream
// format, and a stream's content chunk from Gemini and Converse (beside
// BenchmarkStreamChunk's figures for the OpenAI and Anthropic streams).

func BenchmarkRequestPaths(b *testing.B) {
	chatReq, msgReq, respReq := chatRequest4K(), messagesRequest4K(), responsesRequest4K()
	cases := []struct {
		name string
		body []byte
		op   func(body []byte) error
	}{
		{"chat_to_messages/model", chatReq, func(body []byte) error { _, _, err := EncodeRequest(Chat, body, Messages, "claude", nil); return err }},
		{"messages_to_chat/model", msgReq, func(body []byte) error { _, _, err := EncodeRequest(Messages, body, Chat, "gpt-4o", nil); return err }},
		{"responses_to_chat/model", respReq, func(body []byte) error { _, _, err := EncodeRequest(Responses, body, Chat, "llama", nil); return err }},
		{"responses_to_messages/model", respReq, func(body []byte) error {
			_, _, err := EncodeRequest(Responses, body, Messages, "claude", NewToolIDs(body, Responses))
			return err
		}},
		{"chat_to_converse/model", chatReq, func(body []byte) error { _, _, err := EncodeRequest(Chat, body, Converse, "", nil); return err }},
		{"chat_to_gemini/model", chatReq, func(body []byte) error { _, _, err := EncodeRequest(Chat, body, Gemini, "", nil); return err }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			measure(b, func() {
				if err := c.op(c.body); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

const (
	geminiOpening   = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"The quick\"}],\"role\":\"model\"},\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"r-1\"}\r\n\r\n"
	geminiTextChunk = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" jumps over\"}],\"role\":\"model\"},\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"r-1\"}\r\n\r\n"
)

// BenchmarkModelStreamChunk is the cost of one content chunk through the
// model, beside BenchmarkStreamChunk's pairwise figures.
func BenchmarkModelStreamChunk(b *testing.B) {
	cases := []struct {
		name   string
		client Format
	}{{"gemini_to_openai", Chat}, {"gemini_to_anthropic", Messages}, {"gemini_to_responses", Responses}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := NewModelStream(Gemini, c.client, Answer{Model: "m", Created: 1, IncludeUsage: true})
			dst, err := s.Feed(nil, []byte(geminiOpening))
			if err != nil {
				b.Fatal(err)
			}
			chunk := []byte(geminiTextChunk)
			b.SetBytes(int64(len(chunk)))
			measure(b, func() {
				if dst, err = s.Feed(dst[:0], chunk); err != nil || len(dst) == 0 {
					b.Fatal(err)
				}
			})
		})
	}
	b.Run("converse_to_openai", func(b *testing.B) {
		s := NewModelStream(Converse, Chat, Answer{Model: "m", Created: 1})
		dst, err := s.FeedEvent(nil, []byte("messageStart"), []byte(`{"role":"assistant"}`))
		if err != nil {
			b.Fatal(err)
		}
		name, payload := []byte("contentBlockDelta"), []byte(`{"delta":{"text":" jumps over"},"contentBlockIndex":0}`)
		b.SetBytes(int64(len(payload)))
		measure(b, func() {
			if dst, err = s.FeedEvent(dst[:0], name, payload); err != nil || len(dst) == 0 {
				b.Fatal(err)
			}
		})
	})
}
