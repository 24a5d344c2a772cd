package translate

// How an answer stopped, in each API's words. Both tables are in
// docs/translation.md; a reason the other side has no word for takes the
// nearest one a client would act on in the same way.

// finishReason is the OpenAI finish_reason for an Anthropic stop_reason.
func finishReason(stopReason []byte) string {
	switch string(stopReason) {
	case "max_tokens", "model_context_window_exceeded":
		return "length" // cut short: the client may ask for more
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter" // the provider's classifiers stopped the answer
	}
	// end_turn, stop_sequence (OpenAI says "stop" for both), pause_turn (a
	// server-side tool loop paused: the answer so far is whole), or none given.
	return "stop"
}

// stopReason is the Anthropic stop_reason for an OpenAI finish_reason.
func stopReason(finishReason []byte) string {
	switch string(finishReason) {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	// "stop": OpenAI does not say whether a stop sequence matched, so it is
	// the natural end of a turn; likewise when none was given.
	return "end_turn"
}
