// Package sim runs simulated LLM providers: fake OpenAI- and Anthropic-compatible
// upstreams whose time to first byte, streaming pace, error rate and failure modes are
// set by configuration, so that the gateway's routing can be demonstrated, tested end
// to end and benchmarked without a real provider, an API key or a network.
//
// It backs `firstbyte sim -config FILE` and `firstbyte demo`, and tests use it through
// [NewProvider] (an [http.Handler]), [StartProvider] and [Start]. Time and randomness
// are injected through [Options], so a test can make every delay exact and every
// error draw reproducible.
//
// # What a chat completion or a message answers
//
// Both formats answer alike, decided from the request alone:
//
//   - Tool calls, when the request defines tools, its tool_choice is not "none",
//     and its last message is a user turn that is not a tool result (OpenAI: role
//     user; Anthropic: role user without a tool_result block). The call is to the
//     tool tool_choice names, else to the first tool; its arguments hold each
//     property the tool's schema requires, in order, with a plain value of its type
//     ("example" for a string, the first value of an enum, 1, true, [] or {}).
//     The finish reason is tool_calls (stop_reason tool_use). A stream sends each
//     call's arguments in two pieces, one step apart: OpenAI tool_calls deltas,
//     Anthropic content_block_start (tool_use) and two input_json_delta events.
//   - Two calls at once, to the first two tools, when the request defines at
//     least two, names none, does not forbid parallel calls (parallel_tool_calls
//     false, disable_parallel_tool_use true), and either its first message (or an
//     Anthropic system prompt) contains [ParallelMarker] or the provider sets
//     parallel_tool_calls.
//   - The stop reason a request asks for with [StopMarker] ("sim:stop=WORD" in
//     its first message or system prompt), said as WORD in the provider's format
//     (finish_reason, stop_reason, Converse's stopReason, Gemini's finishReason),
//     in place of the usual one: every finish a provider can send, on demand.
//   - A text answer that would say one of the request's stop sequences
//     (stop_sequences, stop, Converse's inferenceConfig.stopSequences, Gemini's
//     generationConfig.stopSequences) ends before the chunk that holds it:
//     stop_reason stop_sequence with the sequence in stop_sequence (OpenAI:
//     finish_reason stop; Converse: stopReason stop_sequence; Gemini: STOP).
//   - Text otherwise (after a tool result, for instance): the fixed filler, one word
//     per chunk; when the request carries images (image_url parts, image blocks,
//     Converse image blocks, Gemini inlineData parts),
//     the first chunk says how many: "I see 2 image(s)."
//   - Thinking across turns, on the Converse and Gemini hosts: a request that
//     asks the model to think (Gemini thinkingConfig.thinkingBudget above 0;
//     Converse additionalModelRequestFields.reasoningConfig enabled) gets
//     signed parts as the real models give them (Gemini: a thoughtSignature
//     on the first functionCall, or on a text answer's last part, and a
//     thought part first with includeThoughts; Converse: a signed
//     reasoningContent block first). The next turn must carry each back
//     unchanged on its part: an altered or moved signature, or (Gemini) a
//     thinking turn's call without one, is refused with 400; an answer to a request
//     that carried signatures back starts with [SignatureNote]
//     ("[1 thought signature(s) verified] "), so a test through a gateway can
//     see they arrived whole.
//
// Usage is in every answer: prompt (input) tokens are the request body's length /
// 4 (a Gemini request with a thinkingConfig.thinkingBudget above 0 also reports a
// tenth of the budget as thoughtsTokenCount); completion (output) tokens are one per text chunk, or a quarter of each tool
// call's name and arguments in bytes. OpenAI streams end with a usage-only chunk
// when stream_options.include_usage is true; Anthropic streams carry input tokens
// in message_start and output tokens in message_delta.
//
// # Failing as real providers fail
//
// An error rate of 1 gives every request the same error answer: status 401 is a
// revoked key, answered in each API's own words (OpenAI's invalid_api_key, Anthropic's
// authentication_error "invalid x-api-key"). A [RateLimit] counts requests (and
// tokens) in fixed windows of the clock and refuses what is beyond them with 429,
// Retry-After and retry-after-ms; every answer says the limit, what remains and when
// it resets (x-ratelimit-* from OpenAI-shaped endpoints, anthropic-ratelimit-* from
// /v1/messages), so a gateway can pace itself before it is refused. An outage of every
// provider is a phase whose errors have rate 1.
//
// # Providers that react to their load
//
// A provider with MaxConcurrency serves that many requests at once and queues the
// rest, first come first served, so the fastest provider sent everything becomes the
// slowest; [Server.Slots] reports its queue (in service, waiting, and the peaks). A
// [PromptCache] answers a prompt prefix it answered lately in a share of the time and
// reports its tokens as cached in usage, the prefix named as the gateway's affinity
// names it (system prompt, tools, every message but the last; at least
// CacheMinBytes); [Server.PromptCacheStats] counts hits and misses. [Spikes] make a
// share of the TTFB draws several times as long: a provider having slow moments.
//
// What it must not do: listen on anything but a loopback address (every listener is
// checked after it is bound, whatever the configuration says), echo any part of a
// request's messages in its answers (the reply text is fixed filler; only the names
// a tool call must carry, the tool's and its schema's property names, come from the
// request), or keep working for a client that has gone away (every wait selects on
// the request's context).
package sim
