package translate_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// An OpenAI client's streaming request served by an Anthropic upstream: the
// request is translated, then every read of the upstream's body is fed to the
// stream translator and whatever it appends is written and flushed at once,
// the first of it as soon as the upstream's first event is in. A clean end of
// the body goes through Finish; a Feed or Finish error ends the client's
// stream with its format's error event instead.
func ExampleNewModelStream() {
	clientBody := []byte(`{"model":"claude-sonnet","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	upstreamBody, includeUsage, err := translate.ChatToMessages(clientBody, "claude-sonnet-4-5", nil)
	if err != nil {
		var refused *translate.RequestError
		if errors.As(err, &refused) {
			fmt.Println("400", refused.Param, refused.Message)
		}
		return
	}
	fmt.Println(string(upstreamBody))

	// What the upstream answers, arriving in reads cut anywhere.
	upstream := strings.NewReader("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	s := translate.NewModelStream(translate.Messages, translate.Chat, translate.Answer{Model: "claude-sonnet", Created: 1700000000, IncludeUsage: includeUsage})
	var out []byte
	buf := make([]byte, 100)
	for {
		n, readErr := upstream.Read(buf)
		if n > 0 {
			if out, err = s.Feed(out[:0], buf[:n]); err != nil {
				fmt.Print(string(translate.StreamErrorEvent(translate.Chat, "upstream stream broken")))
				return
			}
			fmt.Print(string(out)) // write and flush
		}
		if readErr == io.EOF {
			break
		}
	}
	if out, err = s.Finish(out[:0]); err != nil {
		fmt.Print(string(translate.StreamErrorEvent(translate.Chat, "upstream stream ended early")))
		return
	}
	fmt.Print(string(out))
	fmt.Printf("usage: %+v\n", s.Usage())
	// Output:
	// {"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],"max_tokens":4096,"stream":true}
	// data: {"id":"msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-sonnet","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-sonnet","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-sonnet","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
	//
	// data: [DONE]
	//
	// usage: {InputTokens:9 OutputTokens:2 CacheReadInputTokens:0 CacheCreationInputTokens:0 ReasoningTokens:0 ReasoningKnown:false Known:true}
}
