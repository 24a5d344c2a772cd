package translate

// How an answer stopped, in each format's words: one table, which every
// codec reads and docs/translation.md is generated from. A reason a format
// has no word for takes the nearest one its client would act on the same
// way (a paused server-side tool loop is a whole answer so far: stop).
var finishWords = [...]struct {
	finish Finish
	// chat is the finish_reason; messages the stop_reason; responses the
	// incomplete_details.reason ("" : the response is completed);
	// converse the stopReason; gemini the finishReason.
	chat, messages, responses, converse, gemini string
}{
	{FinishStop, "stop", "end_turn", "", "end_turn", "STOP"},
	{FinishStopSequence, "stop", "stop_sequence", "", "stop_sequence", "STOP"},
	{FinishLength, "length", "max_tokens", "max_output_tokens", "max_tokens", "MAX_TOKENS"},
	{FinishContextWindow, "length", "model_context_window_exceeded", "max_output_tokens", "model_context_window_exceeded", "MAX_TOKENS"},
	{FinishToolCalls, "tool_calls", "tool_use", "", "tool_use", "STOP"},
	{FinishRefusal, "content_filter", "refusal", "", "content_filtered", "SAFETY"},
	{FinishContentFilter, "content_filter", "refusal", "content_filter", "content_filtered", "SAFETY"},
	{FinishPause, "stop", "pause_turn", "", "end_turn", "STOP"},
	{FinishMalformedCall, "stop", "end_turn", "", "malformed_tool_use", "MALFORMED_FUNCTION_CALL"},
	{FinishOther, "stop", "end_turn", "", "end_turn", "OTHER"},
}

// finishIn are the words each format's answers use, read back into a
// Finish; a word not listed is FinishOther.
var finishIn = [...]struct {
	format Format
	word   string
	finish Finish
}{
	{Chat, "stop", FinishStop},
	{Chat, "length", FinishLength},
	{Chat, "tool_calls", FinishToolCalls},
	{Chat, "function_call", FinishToolCalls},
	{Chat, "content_filter", FinishContentFilter},
	{Messages, "end_turn", FinishStop},
	{Messages, "stop_sequence", FinishStopSequence},
	{Messages, "max_tokens", FinishLength},
	{Messages, "model_context_window_exceeded", FinishContextWindow},
	{Messages, "tool_use", FinishToolCalls},
	{Messages, "refusal", FinishRefusal},
	{Messages, "pause_turn", FinishPause},
	{Converse, "end_turn", FinishStop},
	{Converse, "stop_sequence", FinishStopSequence},
	{Converse, "max_tokens", FinishLength},
	{Converse, "model_context_window_exceeded", FinishContextWindow},
	{Converse, "tool_use", FinishToolCalls},
	{Converse, "guardrail_intervened", FinishContentFilter},
	{Converse, "content_filtered", FinishContentFilter},
	{Converse, "malformed_tool_use", FinishMalformedCall},
	{Converse, "malformed_model_output", FinishOther},
	{Gemini, "STOP", FinishStop},
	{Gemini, "MAX_TOKENS", FinishLength},
	{Gemini, "SAFETY", FinishContentFilter},
	{Gemini, "RECITATION", FinishContentFilter},
	{Gemini, "BLOCKLIST", FinishContentFilter},
	{Gemini, "PROHIBITED_CONTENT", FinishContentFilter},
	{Gemini, "SPII", FinishContentFilter},
	{Gemini, "IMAGE_SAFETY", FinishContentFilter},
	{Gemini, "MALFORMED_FUNCTION_CALL", FinishMalformedCall},
	{Gemini, "UNEXPECTED_TOOL_CALL", FinishMalformedCall},
	{Gemini, "TOO_MANY_TOOL_CALLS", FinishOther},
	{Gemini, "LANGUAGE", FinishOther},
	{Gemini, "OTHER", FinishOther},
}

// finishOf reads a format's stop word (a string token) as a Finish: none
// when the token is absent or null, other when the word is not known.
func finishOf(f Format, word []byte) Finish {
	if !isString(word) {
		return FinishNone
	}
	for _, w := range finishIn {
		if w.format == f && stringIs(word, w.word) {
			return w.finish
		}
	}
	return FinishOther
}

// finishWord is the word format f says fin with ("" for a Responses answer
// that completed, and for FinishNone).
func finishWord(f Format, fin Finish) string {
	for _, w := range finishWords {
		if w.finish != fin {
			continue
		}
		switch f {
		case Chat:
			return w.chat
		case Messages:
			return w.messages
		case Responses:
			return w.responses
		case Converse:
			return w.converse
		case Gemini:
			return w.gemini
		}
	}
	return ""
}
