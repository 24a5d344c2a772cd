package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Usage is the token usage an upstream reported for one answer.
type Usage struct {
	// InputTokens counts every prompt token, those read from or written to a
	// prompt cache included (OpenAI's prompt_tokens; Anthropic's input_tokens +
	// cache_read_input_tokens + cache_creation_input_tokens): what the
	// OpenTelemetry GenAI conventions ask gen_ai.usage.input_tokens to hold.
	InputTokens int64
	// OutputTokens counts generated tokens, reasoning included
	// (completion_tokens; output_tokens).
	OutputTokens int64
	// CacheReadInputTokens is the part of InputTokens read from a prompt cache
	// (prompt_tokens_details.cached_tokens; cache_read_input_tokens).
	CacheReadInputTokens int64
	// CacheCreationInputTokens is the part of InputTokens written to a prompt
	// cache (Anthropic's cache_creation_input_tokens; OpenAI reports none,
	// and the gateway shows it to OpenAI clients under the same name).
	CacheCreationInputTokens int64
	// ReasoningTokens is the part of OutputTokens the model spent thinking
	// (OpenAI's completion_tokens_details.reasoning_tokens, Gemini's
	// thoughtsTokenCount); ReasoningKnown is false when the upstream does
	// not say (Anthropic, Converse), which is not the same as 0.
	ReasoningTokens int64
	ReasoningKnown  bool
	// Known is true when the upstream reported usage at all; the counts are
	// meaningless otherwise.
	Known bool
}

// chatUsage reads an OpenAI usage object: prompt_tokens, completion_tokens,
// prompt_tokens_details.cached_tokens, completion_tokens_details.
// reasoning_tokens (a reasoning model's count, which a Responses client
// reads), and the cache_creation_input_tokens the gateway (and LiteLLM) add
// for Anthropic's cache writes.
func chatUsage(v []byte) Usage {
	if !isObject(v) { // most chunks have none
		return Usage{}
	}
	return openAIUsage(v, "prompt_tokens", "completion_tokens", "prompt_tokens_details")
}

// responsesUsage reads a response's usage object (input_tokens,
// output_tokens, input_tokens_details.cached_tokens).
func responsesUsage(v []byte) Usage {
	return openAIUsage(v, "input_tokens", "output_tokens", "input_tokens_details")
}

// openAIUsage reads an OpenAI usage object, which Chat Completions and the
// Responses API shape alike under their own names: the input and output
// counts, the cached count inside details, the reasoning count inside the
// output's details (completion_tokens_details, output_tokens_details),
// and cache_creation_input_tokens.
func openAIUsage(v []byte, input, output, details string) Usage {
	var u Usage
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case input:
			u.InputTokens, u.Known = count(val, u.Known)
		case output:
			u.OutputTokens, u.Known = count(val, u.Known)
		case details:
			u.CacheReadInputTokens, _ = count(jsonscan.Field(val, "cached_tokens"), false)
		case "completion_tokens_details", "output_tokens_details":
			u.ReasoningTokens, u.ReasoningKnown = count(jsonscan.Field(val, "reasoning_tokens"), false)
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens, _ = count(val, false)
		}
	}
	return u
}

// messagesUsage reads an Anthropic usage object into u: input_tokens,
// output_tokens and the two cache counts. Counts the object leaves out keep
// their value in u, since message_delta repeats only some of them; and as a
// stream's counts are cumulative, a count never goes down (a message_delta
// that says input_tokens 0 has not un-read the prompt).
func messagesUsage(u Usage, v []byte) Usage {
	if !isObject(v) {
		return u
	}
	base := u.InputTokens - u.CacheReadInputTokens - u.CacheCreationInputTokens
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "input_tokens":
			if n, ok := count(val, false); ok {
				base, u.Known = max(base, n), true
			}
		case "output_tokens":
			if n, ok := count(val, false); ok {
				u.OutputTokens, u.Known = max(u.OutputTokens, n), true
			}
		case "cache_read_input_tokens":
			if n, ok := count(val, false); ok {
				u.CacheReadInputTokens = max(u.CacheReadInputTokens, n)
			}
		case "cache_creation_input_tokens":
			if n, ok := count(val, false); ok {
				u.CacheCreationInputTokens = max(u.CacheCreationInputTokens, n)
			}
		}
	}
	u.InputTokens = base + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return u
}

// count reads a token count: a non-negative integer.
func count(v []byte, known bool) (int64, bool) {
	n, ok := intValue(v)
	if !ok || n < 0 {
		return 0, known
	}
	return n, true
}

// appendChatUsage writes u as OpenAI's usage object. Prompt-cache use is
// shown whenever there was any: the tokens read in
// prompt_tokens_details.cached_tokens, as OpenAI reports them, and the
// tokens written, which OpenAI has no field for, where the two gateways
// cost tools know put them: prompt_tokens_details.cache_write_tokens
// (OpenRouter) and cache_creation_input_tokens (LiteLLM). A cache write
// costs more than a plain input token, so pricing needs it.
func appendChatUsage(out []byte, u Usage) []byte {
	out = append(out, `{"prompt_tokens":`...)
	out = appendInt(out, u.InputTokens)
	out = append(out, `,"completion_tokens":`...)
	out = appendInt(out, u.OutputTokens)
	out = append(out, `,"total_tokens":`...)
	out = appendInt(out, u.InputTokens+u.OutputTokens)
	if u.ReasoningKnown {
		out = append(out, `,"completion_tokens_details":{"reasoning_tokens":`...)
		out = append(appendInt(out, u.ReasoningTokens), '}')
	}
	if u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
		out = append(out, `,"prompt_tokens_details":{"cached_tokens":`...)
		out = appendInt(out, u.CacheReadInputTokens)
		out = append(out, `,"cache_write_tokens":`...)
		out = appendInt(out, u.CacheCreationInputTokens)
		out = append(out, `},"cache_creation_input_tokens":`...)
		out = appendInt(out, u.CacheCreationInputTokens)
	}
	return append(out, '}')
}

// appendMessagesUsage writes u as Anthropic's usage object, whose
// input_tokens leaves out the cached tokens it counts separately.
func appendMessagesUsage(out []byte, u Usage) []byte {
	out = append(out, `{"input_tokens":`...)
	out = appendInt(out, max(0, u.InputTokens-u.CacheReadInputTokens-u.CacheCreationInputTokens))
	if u.CacheCreationInputTokens > 0 {
		out = append(out, `,"cache_creation_input_tokens":`...)
		out = appendInt(out, u.CacheCreationInputTokens)
	}
	if u.CacheReadInputTokens > 0 {
		out = append(out, `,"cache_read_input_tokens":`...)
		out = appendInt(out, u.CacheReadInputTokens)
	}
	out = append(out, `,"output_tokens":`...)
	out = appendInt(out, u.OutputTokens)
	return append(out, '}')
}

// UsageFromChatResponse reads the usage of an OpenAI chat completion body the
// gateway relays unchanged (only the top level's "usage" member). valid is
// false when the body is not one valid JSON value: it is checked in the
// same pass, so the relay needs no check of its own.
func UsageFromChatResponse(body []byte) (u Usage, valid bool) {
	v, valid := topLevel(body, "usage")
	return chatUsage(v), valid
}

// UsageFromMessagesResponse reads the usage of an Anthropic message body the
// gateway relays unchanged; valid as for UsageFromChatResponse.
func UsageFromMessagesResponse(body []byte) (u Usage, valid bool) {
	v, valid := topLevel(body, "usage")
	return messagesUsage(Usage{}, v), valid
}

// UsageFromResponsesResponse reads the usage of a Responses API response
// object the gateway relays unchanged; valid as for UsageFromChatResponse.
func UsageFromResponsesResponse(body []byte) (u Usage, valid bool) {
	v, valid := topLevel(body, "usage")
	return responsesUsage(v), valid
}

// topLevel finds a member of a body's top-level object (the last one of
// that name, as encoding/json reads it) in the pass that checks the body.
// valid reports whether the body is one valid JSON value: a value that is
// not an object is valid but has no member (that costs a second pass, only
// then).
func topLevel(body []byte, key string) (member []byte, valid bool) {
	if jsonscan.Object(body, func(k, v []byte) {
		if string(k) == key {
			member = v
		}
	}) {
		return member, true
	}
	_, valid = jsonscan.Valid(body)
	return nil, valid
}
