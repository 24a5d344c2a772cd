package clients

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// testOpenAIGo drives the gateway with the official Go SDK, configured the way
// a user points it at firstbyte: base URL with /v1, a key from auth.keys.
func testOpenAIGo(t *testing.T, gw *gateway) {
	client := newOpenAI(gw, gw.key)
	chat := func(model string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{
			Model:    model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
		}
	}

	t.Run("chat unary", func(t *testing.T) {
		var raw *http.Response
		resp, err := client.Chat.Completions.New(t.Context(), chat(chatModel), option.WithResponseInto(&raw))
		if err != nil {
			t.Fatalf("Chat.Completions.New: %v", err)
		}
		if len(resp.Choices) == 0 || resp.Choices[0].Message.Content == "" {
			t.Fatalf("choices = %+v, want content", resp.Choices)
		}
		if resp.Model != chatUpstream {
			t.Errorf("model = %q, want %q (the model_map value, as the upstream answered)", resp.Model, chatUpstream)
		}
		if target, _ := checkRouting(t, raw.Header); target != "sim-openai" {
			t.Errorf("X-Firstbyte-Target = %q, want sim-openai", target)
		}
	})

	t.Run("chat streaming with accumulator", func(t *testing.T) {
		params := chat(chatModel)
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		var raw *http.Response
		stream := client.Chat.Completions.NewStreaming(t.Context(), params, option.WithResponseInto(&raw))
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		chunks, finished := 0, ""
		for stream.Next() {
			chunks++
			acc.AddChunk(stream.Current())
			if content, ok := acc.JustFinishedContent(); ok {
				finished = content
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream ended with %v after %d chunks", err, chunks)
		}
		if chunks < 2 {
			t.Errorf("got %d chunks, want several", chunks)
		}
		if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" {
			t.Fatalf("accumulated choices = %+v, want content", acc.Choices)
		}
		if got := acc.Choices[0].Message.Content; finished != got {
			t.Errorf("JustFinishedContent = %q, accumulated %q", finished, got)
		}
		if acc.Choices[0].FinishReason != "stop" {
			t.Errorf("finish_reason = %q, want stop", acc.Choices[0].FinishReason)
		}
		if acc.Usage.TotalTokens == 0 {
			t.Errorf("usage = %+v, want the include_usage chunk", acc.Usage)
		}
		if ct := raw.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Content-Type = %q, want text/event-stream", ct)
		}
		checkRouting(t, raw.Header)
	})

	// An Anthropic-format provider behind an OpenAI client: the gateway
	// translates the request and every streamed event.
	t.Run("chat streaming served by an Anthropic-format provider", func(t *testing.T) {
		params := chat(messagesModel)
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		var raw *http.Response
		stream := client.Chat.Completions.NewStreaming(t.Context(), params, option.WithResponseInto(&raw))
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			chunks++
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream ended with %v after %d chunks", err, chunks)
		}
		if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" || acc.Choices[0].FinishReason != "stop" {
			t.Fatalf("accumulated choices = %+v, want content that stopped", acc.Choices)
		}
		if acc.Usage.PromptTokens == 0 || acc.Usage.CompletionTokens == 0 {
			t.Errorf("usage = %+v, want the Anthropic stream's usage as the include_usage chunk", acc.Usage)
		}
		if target, _ := checkRouting(t, raw.Header); target != "sim-anthropic" {
			t.Errorf("X-Firstbyte-Target = %q, want sim-anthropic", target)
		}
	})

	t.Run("models list", func(t *testing.T) {
		var ids []string
		iter := client.Models.ListAutoPaging(t.Context())
		for iter.Next() {
			ids = append(ids, iter.Current().ID)
		}
		if err := iter.Err(); err != nil {
			t.Fatalf("Models.ListAutoPaging: %v", err)
		}
		for _, want := range []string{chatModel, embeddingModel} {
			if !slices.Contains(ids, want) {
				t.Errorf("models = %v, want %s in it", ids, want)
			}
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		resp, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
			Model: embeddingModel,
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first", "second"}},
		})
		if err != nil {
			t.Fatalf("Embeddings.New: %v", err)
		}
		if len(resp.Data) != 2 || len(resp.Data[0].Embedding) == 0 {
			t.Errorf("data = %+v, want 2 non-empty embeddings", resp.Data)
		}
	})

	t.Run("responses unary", func(t *testing.T) {
		resp, err := client.Responses.New(t.Context(), responses.ResponseNewParams{
			Model: chatModel,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		})
		if err != nil {
			t.Fatalf("Responses.New: %v", err)
		}
		if resp.Status != "completed" || resp.OutputText() == "" {
			t.Errorf("status %q, output_text %q; want completed with text", resp.Status, resp.OutputText())
		}
	})

	t.Run("responses streaming", func(t *testing.T) {
		stream := client.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{
			Model: chatModel,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		})
		defer stream.Close()
		var types []string
		var text strings.Builder
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			if ev.Type == "response.output_text.delta" {
				text.WriteString(ev.Delta)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream ended with %v after %v", err, types)
		}
		if len(types) == 0 || types[len(types)-1] != "response.completed" || text.Len() == 0 {
			t.Errorf("events %v, text %q; want deltas and a final response.completed", types, text.String())
		}
	})

	t.Run("unknown model is a 404 model_not_found", func(t *testing.T) {
		_, err := client.Chat.Completions.New(t.Context(), chat(unknownModel))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("err = %v (%T), want *openai.Error", err, err)
		}
		if apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
			t.Errorf("status %d code %q, want 404 model_not_found (body %s)", apiErr.StatusCode, apiErr.Code, apiErr.RawJSON())
		}
	})

	t.Run("wrong key is a 401", func(t *testing.T) {
		wrong := newOpenAI(gw, gw.key+"-wrong")
		_, err := wrong.Chat.Completions.New(t.Context(), chat(chatModel))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
			t.Fatalf("err = %v, want *openai.Error with status 401", err)
		}
	})

	t.Run("stream broken after the first byte ends with an error event", func(t *testing.T) {
		content, streamErr, err := readChatStream(client.Chat.Completions.NewStreaming(t.Context(), chat(brokenChat)))
		if streamErr == nil || !strings.Contains(streamErr.Message, "stream_interrupted") {
			t.Fatalf("stream.Err() = %v (%T), want *ssestream.StreamError naming stream_interrupted", err, err)
		}
		if content == "" {
			t.Error("no content before the break: the gateway should relay the chunks it had")
		}
	})
}

// readChatStream reads a chat stream to its end: the text its chunks
// carried, and its error, also as the SDK's StreamError when it is one
// (an error event from the gateway).
func readChatStream(stream *ssestream.Stream[openai.ChatCompletionChunk]) (string, *ssestream.StreamError, error) {
	defer stream.Close()
	var content strings.Builder
	for stream.Next() {
		if ch := stream.Current().Choices; len(ch) > 0 {
			content.WriteString(ch[0].Delta.Content)
		}
	}
	err := stream.Err()
	var streamErr *ssestream.StreamError
	errors.As(err, &streamErr)
	return content.String(), streamErr, err
}

func newOpenAI(gw *gateway, key string) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(gw.url+"/v1"),
		option.WithAPIKey(key),
		option.WithMaxRetries(0), // errors must surface, not be retried away
		option.WithRequestTimeout(requestWithin),
	)
}
