package translate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/benchutil"
)

// The goals: a translated stream adds < 20 µs per chunk and < 300 µs to the
// first chunk; a translated unary exchange (a 4 KiB request and a 4 KiB
// answer) adds < 50 µs. Each is measured next to what the gateway does for the
// same bytes when it does not translate (pass-through, which still reads
// usage), in the same run.

// prose is n bytes of JSON string contents: ordinary text with the escapes a
// real prompt has.
func prose(n int) string {
	const s = `The quick brown fox jumps over the lazy dog; \"quoted\", a tab\t and a newline\n. `
	p := strings.Repeat(s, n/len(s)+1)[:n]
	if strings.HasSuffix(p, `\`) { // an escape cut in two
		p = p[:n-1] + "."
	}
	return p
}

// chatRequest4K is an OpenAI request of about 4 KiB: a system prompt, three
// turns, a tool call and its result, one tool.
func chatRequest4K() []byte {
	return []byte(`{"model":"gpt-4o","max_tokens":512,"temperature":0.2,"stream":false,"messages":[` +
		`{"role":"system","content":"` + prose(600) + `"},` +
		`{"role":"user","content":"` + prose(1200) + `"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"query\":\"fox\",\"limit\":3}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"` + prose(800) + `"},` +
		`{"role":"user","content":"` + prose(1000) + `"}],` +
		`"tools":[{"type":"function","function":{"name":"lookup","description":"Look a thing up","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}}}]}`)
}

func messagesRequest4K() []byte {
	return []byte(`{"model":"claude","max_tokens":512,"temperature":0.2,"system":"` + prose(600) + `","messages":[` +
		`{"role":"user","content":"` + prose(1200) + `"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"query":"fox","limit":3}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + prose(800) + `"},{"type":"text","text":"` + prose(1000) + `"}]}],` +
		`"tools":[{"name":"lookup","description":"Look a thing up","input_schema":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}}]}`)
}

// responsesRequest4K is a Responses request of about 4 KiB, shaped like an
// agent's second turn: instructions, a question, a function call and its
// output, a follow-up, one tool.
func responsesRequest4K() []byte {
	return []byte(`{"model":"gpt-4.1","max_output_tokens":512,"temperature":0.2,"instructions":"` + prose(600) + `","input":[` +
		`{"role":"user","content":"` + prose(1200) + `"},` +
		`{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{\"query\":\"fox\",\"limit\":3}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"` + prose(800) + `"},` +
		`{"role":"user","content":[{"type":"input_text","text":"` + prose(1000) + `"}]}],` +
		`"tools":[{"type":"function","name":"lookup","description":"Look a thing up","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}}]}`)
}

func messagesAnswer4K() []byte {
	return []byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"` + prose(4000) +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":900}}`)
}

func chatAnswer4K() []byte {
	return []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` + prose(4000) +
		`","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":900,"total_tokens":1900}}`)
}

// measure runs op under b.Loop and reports cpu-ns/op next to ns/op.
func measure(b *testing.B, op func()) {
	b.ReportAllocs()
	start := benchutil.ProcessCPU(b)
	for b.Loop() {
		op()
	}
	benchutil.ReportCPU(b, start)
}

func BenchmarkUnary(b *testing.B) {
	chatReq, msgReq, msgAns, chatAns := chatRequest4K(), messagesRequest4K(), messagesAnswer4K(), chatAnswer4K()
	b.Run("openai_client_anthropic_upstream", func(b *testing.B) {
		b.SetBytes(int64(len(chatReq) + len(msgAns)))
		measure(b, func() {
			if _, _, err := ChatToMessages(chatReq, "claude", nil); err != nil {
				b.Fatal(err)
			}
			if _, _, err := TranslateAnswer(Messages, msgAns, Chat, Answer{Model: "gpt-4o", Created: 1}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("anthropic_client_openai_upstream", func(b *testing.B) {
		b.SetBytes(int64(len(msgReq) + len(chatAns)))
		measure(b, func() {
			if _, err := MessagesToChat(msgReq, "gpt-4o"); err != nil {
				b.Fatal(err)
			}
			if _, _, err := TranslateAnswer(Chat, chatAns, Messages, Answer{Model: "claude"}); err != nil {
				b.Fatal(err)
			}
		})
	})
	respReq := responsesRequest4K()
	b.Run("responses_client_anthropic_upstream", func(b *testing.B) {
		b.SetBytes(int64(len(respReq) + len(msgAns)))
		measure(b, func() {
			if _, err := ResponsesToMessages(respReq, "claude", NewToolIDs(respReq, Responses)); err != nil {
				b.Fatal(err)
			}
			if _, _, err := TranslateAnswer(Messages, msgAns, Responses, Answer{Model: "gpt-4.1", Created: 1}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("responses_client_openai_chat_upstream", func(b *testing.B) {
		b.SetBytes(int64(len(respReq) + len(chatAns)))
		measure(b, func() {
			if _, err := ResponsesToChat(respReq, "llama"); err != nil {
				b.Fatal(err)
			}
			if _, _, err := TranslateAnswer(Chat, chatAns, Responses, Answer{Model: "gpt-4.1", Created: 1}); err != nil {
				b.Fatal(err)
			}
		})
	})
	// Pass-through: the body goes as it came; only the usage is read.
	b.Run("pass_through_usage", func(b *testing.B) {
		b.SetBytes(int64(len(chatAns)))
		measure(b, func() {
			if u, valid := UsageFromChatResponse(chatAns); !u.Known || !valid {
				b.Fatal("no usage")
			}
		})
	})
}

// Upstream events as providers send them, for the stream benchmarks.
const (
	anthropicOpening = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1000,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n"
	openAIOpening = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n"
)

func anthropicTextEvent(text string) []byte {
	return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":" + strconv.Quote(text) + "}}\n\n")
}

func openAITextEvent(text string) []byte {
	return []byte("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":" + strconv.Quote(text) + "},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n")
}

// BenchmarkStreamFirstChunk is the cost from a new stream to the client's
// opening bytes: the translator is built and fed the upstream's first read.
func BenchmarkStreamFirstChunk(b *testing.B) {
	cases := []struct {
		name  string
		new   func() Stream
		first []byte
	}{
		{"anthropic_to_openai", func() Stream {
			return NewModelStream(Messages, Chat, Answer{Model: "gpt-4o", Created: 1, IncludeUsage: true})
		}, []byte(anthropicOpening)},
		{"openai_to_anthropic", func() Stream { return NewModelStream(Chat, Messages, Answer{Model: "claude"}) }, []byte(openAIOpening)},
		{"anthropic_to_responses", func() Stream { return NewModelStream(Messages, Responses, Answer{Model: "gpt-4.1", Created: 1}) }, []byte(anthropicOpening)},
		{"openai_to_responses", func() Stream { return NewModelStream(Chat, Responses, Answer{Model: "gpt-4.1", Created: 1}) }, []byte(openAIOpening)},
		{"pass_through_openai", func() Stream { return NewChatUsageFilter(true) }, []byte(openAIOpening)},
		{"pass_through_anthropic", NewMessagesUsageScanner, []byte(anthropicOpening)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var dst []byte
			measure(b, func() {
				var err error
				if dst, err = c.new().Feed(dst[:0], c.first); err != nil || len(dst) == 0 {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkStreamChunk is the cost of one content chunk in the middle of a
// stream (a token or a few, as providers send them).
func BenchmarkStreamChunk(b *testing.B) {
	cases := []struct {
		name  string
		new   func() Stream
		first []byte
		chunk []byte
	}{
		{"anthropic_to_openai", func() Stream {
			return NewModelStream(Messages, Chat, Answer{Model: "gpt-4o", Created: 1, IncludeUsage: true})
		}, []byte(anthropicOpening), anthropicTextEvent(" jumps over")},
		{"openai_to_anthropic", func() Stream { return NewModelStream(Chat, Messages, Answer{Model: "claude"}) }, []byte(openAIOpening), openAITextEvent(" jumps over")},
		{"anthropic_to_responses", func() Stream { return NewModelStream(Messages, Responses, Answer{Model: "gpt-4.1", Created: 1}) }, []byte(anthropicOpening), anthropicTextEvent(" jumps over")},
		{"openai_to_responses", func() Stream { return NewModelStream(Chat, Responses, Answer{Model: "gpt-4.1", Created: 1}) }, []byte(openAIOpening), openAITextEvent(" jumps over")},
		{"pass_through_openai", func() Stream { return NewChatUsageFilter(true) }, []byte(openAIOpening), openAITextEvent(" jumps over")},
		{"pass_through_openai_requested_model", func() Stream { return NewPassThrough(Chat, true, "my-model") }, []byte(openAIOpening), openAITextEvent(" jumps over")},
		{"pass_through_anthropic", NewMessagesUsageScanner, []byte(anthropicOpening), anthropicTextEvent(" jumps over")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := c.new()
			dst, err := s.Feed(nil, c.first)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(c.chunk)))
			measure(b, func() {
				if dst, err = s.Feed(dst[:0], c.chunk); err != nil || len(dst) == 0 {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkAnswer is a unary answer's translation alone, for each pair of
// formats a client and its upstream can differ by: a 4 KiB text answer,
// and a short one with thinking and two tool calls.
func BenchmarkAnswer(b *testing.B) {
	msgAns, chatAns := messagesAnswer4K(), chatAnswer4K()
	msgTools, chatTools := messagesToolAnswer(), chatToolAnswer()
	cases := []struct {
		name             string
		body             []byte
		upstream, client Format
	}{
		{"chat_client_messages_upstream", msgAns, Messages, Chat},
		{"messages_client_chat_upstream", chatAns, Chat, Messages},
		{"responses_client_chat_upstream", chatAns, Chat, Responses},
		{"responses_client_messages_upstream", msgAns, Messages, Responses},
		{"chat_client_messages_upstream_tools", msgTools, Messages, Chat},
		{"messages_client_chat_upstream_tools", chatTools, Chat, Messages},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			measure(b, func() {
				if _, _, err := TranslateAnswer(c.upstream, c.body, c.client, Answer{Model: "m", Created: 1}); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func messagesToolAnswer() []byte {
	return []byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude","content":[{"type":"thinking","thinking":"let me look","signature":"sig"},{"type":"text","text":"Looking it up."},{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"query":"fox","limit":3}},{"type":"tool_use","id":"toolu_2","name":"lookup","input":{"query":"dog"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":90}}`)
}

func chatToolAnswer() []byte {
	return []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Looking it up.","refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"query\":\"fox\",\"limit\":3}"}},{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{\"query\":\"dog\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1000,"completion_tokens":90,"total_tokens":1090}}`)
}
