package clients

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// translatedUpstreams are the models served only by an upstream format the
// OpenAI SDK does not speak, with the finish words each sends and what a Chat client
// and a Responses client must read from them ("" : completed).
var translatedUpstreams = []struct {
	format, model, broken string
	reasoningCounted      bool
	finishes              []upstreamFinish
}{
	{"Bedrock Converse", converseModel, brokenConverse, false, []upstreamFinish{
		{"end_turn", "stop", ""}, {"stop_sequence", "stop", ""}, {"max_tokens", "length", "max_output_tokens"},
		{"model_context_window_exceeded", "length", "max_output_tokens"}, {"guardrail_intervened", "content_filter", "content_filter"},
		{"content_filtered", "content_filter", "content_filter"}, {"malformed_tool_use", "stop", ""}, {"malformed_model_output", "stop", ""},
	}},
	{"Gemini", geminiModel, brokenGemini, true, []upstreamFinish{
		{"STOP", "stop", ""}, {"MAX_TOKENS", "length", "max_output_tokens"}, {"SAFETY", "content_filter", "content_filter"},
		{"PROHIBITED_CONTENT", "content_filter", "content_filter"}, {"RECITATION", "content_filter", "content_filter"},
		{"MALFORMED_FUNCTION_CALL", "stop", ""}, {"OTHER", "stop", ""},
	}},
	// Anthropic Messages, which a Chat or Responses client's request is
	// translated for too (OpenAI Chat is these clients' own format: openai_test.go).
	{"Anthropic Messages", messagesModel, brokenMessages, false, []upstreamFinish{
		{"end_turn", "stop", ""}, {"stop_sequence", "stop", ""}, {"max_tokens", "length", "max_output_tokens"},
		{"model_context_window_exceeded", "length", "max_output_tokens"}, {"pause_turn", "stop", ""},
	}},
}

type upstreamFinish struct{ word, chat, responses string }

// testOpenAIGoUpstreams runs the Go SDK's cases against each translated
// upstream format: text with usage, parallel tool calls (one without
// arguments) and their results, an image, structured output, reasoning
// tokens, every finish word, and a stream broken mid-answer.
func testOpenAIGoUpstreams(t *testing.T, gw *gateway) {
	client := newOpenAI(gw, gw.key)
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}})
	now := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "now",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}}})
	for _, up := range translatedUpstreams {
		t.Run(up.format, func(t *testing.T) {
			t.Run("chat text, stream with usage, stop sequences", func(t *testing.T) {
				params := openai.ChatCompletionNewParams{Model: up.model, Messages: []openai.ChatCompletionMessageParamUnion{
					openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")},
					Stop:          openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END"}},
					StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
				stream := client.Chat.Completions.NewStreaming(t.Context(), params)
				defer stream.Close()
				var acc openai.ChatCompletionAccumulator
				for stream.Next() {
					acc.AddChunk(stream.Current())
				}
				if err := stream.Err(); err != nil {
					t.Fatal(err)
				}
				// The simulated model says "The quick brown fox jumps ...";
				// "END" never comes.
				if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" || acc.Choices[0].FinishReason != "stop" {
					t.Fatalf("choices = %+v", acc.Choices)
				}
				fox, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: up.model,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
					Stop:     openai.ChatCompletionNewParamsStopUnion{OfString: openai.String("fox")}})
				if err != nil {
					t.Fatal(err)
				}
				if got := fox.Choices[0].Message.Content; got != "The quick brown" || fox.Choices[0].FinishReason != "stop" {
					t.Errorf("stop fox: %q (%s), want the text before it", got, fox.Choices[0].FinishReason)
				}
				if u := acc.Usage; u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
					t.Errorf("usage = %+v", u)
				}
			})

			t.Run("chat parallel tool calls, one without arguments, then their results", func(t *testing.T) {
				params := openai.ChatCompletionNewParams{Model: up.model, Tools: []openai.ChatCompletionToolUnionParam{weather, now},
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(sim.ParallelMarker + " Weather in Paris, and the time?")}}
				resp, err := client.Chat.Completions.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				msg := resp.Choices[0].Message
				if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 2 {
					t.Fatalf("finish %q, calls %+v", resp.Choices[0].FinishReason, msg.ToolCalls)
				}
				var args [2]map[string]any
				for i, c := range msg.ToolCalls {
					if err := json.Unmarshal([]byte(c.Function.Arguments), &args[i]); err != nil {
						t.Fatalf("call %d arguments %q: %v", i, c.Function.Arguments, err)
					}
				}
				if msg.ToolCalls[0].Function.Name != "get_weather" || args[0]["city"] != "example" || msg.ToolCalls[1].Function.Name != "now" || len(args[1]) != 0 {
					t.Errorf("calls %+v", msg.ToolCalls)
				}
				params.Messages = append(params.Messages, msg.ToParam(),
					openai.ToolMessage(`{"temperature":21}`, msg.ToolCalls[0].ID), openai.ToolMessage("error: the clock is down", msg.ToolCalls[1].ID))
				next, err := client.Chat.Completions.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				if next.Choices[0].FinishReason != "stop" || next.Choices[0].Message.Content == "" {
					t.Errorf("after the results: %+v", next.Choices[0])
				}
			})

			t.Run("chat image and structured output", func(t *testing.T) {
				const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
				resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: up.model,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
						openai.TextContentPart("What is this?"), openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: png})})},
					ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
						JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Strict: openai.Bool(true),
							Schema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []string{"a"}, "additionalProperties": false}}}}})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(resp.Choices[0].Message.Content, "1 image") {
					t.Errorf("content %q does not say it saw the image", resp.Choices[0].Message.Content)
				}
			})

			t.Run("reasoning tokens", func(t *testing.T) {
				resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: up.model, ReasoningEffort: shared.ReasoningEffortLow,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Think, then say hello.")}})
				if err != nil {
					t.Fatal(err)
				}
				field, said := resp.Usage.CompletionTokensDetails.JSON.ReasoningTokens, resp.Usage.CompletionTokensDetails.ReasoningTokens
				switch {
				case up.reasoningCounted && (said <= 0 || resp.Usage.CompletionTokens <= said):
					t.Errorf("usage %s: want the upstream's reasoning count inside completion_tokens", resp.Usage.RawJSON())
				case !up.reasoningCounted && field.Valid():
					t.Errorf("usage %s: the upstream does not count reasoning; want the field left out, not claimed", resp.Usage.RawJSON())
				}
			})

			for _, f := range up.finishes {
				t.Run("finish "+f.word, func(t *testing.T) {
					ask := sim.StopMarker + f.word + " Say hello."
					resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: up.model,
						Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(ask)}})
					if err != nil {
						t.Fatal(err)
					}
					if got := resp.Choices[0].FinishReason; got != f.chat {
						t.Errorf("chat finish_reason %q, want %q", got, f.chat)
					}
					r, err := client.Responses.New(t.Context(), responses.ResponseNewParams{Model: up.model,
						Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(ask)}})
					if err != nil {
						t.Fatal(err)
					}
					status := "completed"
					if f.responses != "" {
						status = "incomplete"
					}
					if string(r.Status) != status || r.IncompleteDetails.Reason != f.responses {
						t.Errorf("responses status %q (%q), want %q (%q)", r.Status, r.IncompleteDetails.Reason, status, f.responses)
					}
				})
			}

			t.Run("stream broken mid-answer", func(t *testing.T) {
				content, streamErr, err := readChatStream(client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{Model: up.broken,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}))
				if streamErr == nil {
					t.Fatalf("stream.Err() = %v (%T), want *ssestream.StreamError", err, err)
				}
				if content == "" {
					t.Error("no content before the break")
				}
			})
		})
	}
}
