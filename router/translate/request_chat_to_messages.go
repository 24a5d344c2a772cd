package translate

import "strconv"

// DefaultMaxTokens is the max_tokens sent to an Anthropic upstream when an
// OpenAI request names neither max_completion_tokens nor max_tokens:
// Anthropic requires a limit, OpenAI defaults to the model's own. With
// extended thinking on, the thinking budget is added to it.
const DefaultMaxTokens = 4096

var (
	errNotJSON   = &RequestError{Param: "", Message: "request body is not valid JSON"}
	errNotObject = &RequestError{Param: "", Message: "request body must be a JSON object"}
)

// chatRequest holds the raw values of the OpenAI request members that are
// translated; everything else is dropped or refused as it is read.
type chatRequest struct {
	messages, maxCompletionTokens, maxTokens, temperature, topP, stop []byte
	stream, streamOptions, user, safetyIdentifier                     []byte
	tools, toolChoice, parallelToolCalls                              []byte
	responseFormat, reasoningEffort                                   []byte
}

// ChatToMessages turns an OpenAI Chat Completions request into an Anthropic
// Messages request for upstreamModel, through the neutral model. ids keeps the request's tool ids
// valid for Anthropic (nil: rewritten without a memory of the request).
// includeUsage reports whether the client asked for stream usage
// (stream_options.include_usage), which the answer's stream translator
// needs to know. A request the Messages API cannot express is a
// *RequestError.
func ChatToMessages(body []byte, upstreamModel string, ids *ToolIDs) (out []byte, includeUsage bool, err error) {
	out, r, err := EncodeRequest(Chat, body, Messages, upstreamModel, ids)
	if err != nil {
		return nil, false, err
	}
	return out, r.IncludeUsage, nil
}

// appendSampling writes temperature and top_p. Recent Claude models refuse
// the two together, so when both come, top_p is left out (the temperature
// alone still sets how varied the answer is). OpenAI's temperature runs to
// 2, Anthropic's to 1: a hotter request gets the hottest Anthropic allows
// rather than a refusal.
func appendSampling(out, temperature, topP []byte) []byte {
	if present(temperature) {
		out = append(out, `,"temperature":`...)
		if t, err := strconv.ParseFloat(string(temperature), 64); err == nil && t > 1 {
			out = append(out, '1')
		} else {
			out = append(out, temperature...)
		}
		return out
	}
	if present(topP) {
		out = append(out, `,"top_p":`...)
		out = append(out, topP...)
	}
	return out
}

// set records one top-level member, refusing the parameters whose loss would
// change what the client gets.
func (r *chatRequest) set(k, v []byte) error {
	switch string(k) {
	case "messages":
		r.messages = v
	case "max_completion_tokens":
		r.maxCompletionTokens = v
	case "max_tokens":
		r.maxTokens = v
	case "temperature":
		r.temperature = v
	case "top_p":
		r.topP = v
	case "stop":
		r.stop = v
	case "stream":
		r.stream = v
	case "stream_options":
		r.streamOptions = v
	case "user":
		r.user = v
	case "safety_identifier":
		r.safetyIdentifier = v
	case "tools":
		r.tools = v
	case "tool_choice":
		r.toolChoice = v
	case "parallel_tool_calls":
		r.parallelToolCalls = v
	case "response_format":
		r.responseFormat = v
	case "reasoning_effort":
		r.reasoningEffort = v
	case "n":
		if n, ok := intValue(v); present(v) && (!ok || n != 1) {
			return refuse("n", "must be 1: an Anthropic upstream generates one choice")
		}
	case "logprobs":
		if isTrue(v) {
			return refuse("logprobs", "log probabilities are not available from an Anthropic upstream")
		}
	case "top_logprobs":
		if present(v) {
			return refuse("top_logprobs", "log probabilities are not available from an Anthropic upstream")
		}
	case "audio":
		if present(v) {
			return refuse("audio", "audio output is not available from an Anthropic upstream")
		}
	case "modalities":
		if present(v) && !onlyText(v) {
			return refuse("modalities", "audio output is not available from an Anthropic upstream")
		}
	case "functions", "function_call":
		if present(v) {
			return refuse(string(k), "the deprecated functions API is not translated; use tools and tool_choice")
		}
	case "web_search_options":
		if present(v) {
			return refuse("web_search_options", "web search is not available from an Anthropic upstream")
		}
	}
	// Everything else is dropped (docs/translation.md lists what and why):
	// penalties, logit_bias, seed, store, metadata, service_tier, prediction,
	// verbosity, prompt_cache_key, and unknown members.
	return nil
}

// onlyText reports whether a modalities array asks for text alone.
func onlyText(v []byte) bool {
	return allElements(v, func(el []byte) bool { return stringIs(el, "text") })
}

// check refuses values of the wrong JSON type, naming the client's parameter
// rather than leaving the upstream to name its own.
func (r *chatRequest) check() error {
	switch {
	case r.messages == nil:
		return refuse("messages", "required")
	case !isArray(r.messages):
		return refuse("messages", "must be an array")
	case present(r.maxCompletionTokens) && !isNumber(r.maxCompletionTokens):
		return refuse("max_completion_tokens", "must be an integer")
	case present(r.maxTokens) && !isNumber(r.maxTokens):
		return refuse("max_tokens", "must be an integer")
	case present(r.temperature) && !isNumber(r.temperature):
		return refuse("temperature", "must be a number")
	case present(r.topP) && !isNumber(r.topP):
		return refuse("top_p", "must be a number")
	case present(r.stop) && !isString(r.stop) && !allStrings(r.stop):
		return refuse("stop", "must be a string or an array of strings")
	case present(r.stream) && !isBool(r.stream):
		return refuse("stream", "must be a boolean")
	case present(r.user) && !isString(r.user):
		return refuse("user", "must be a string")
	case present(r.safetyIdentifier) && !isString(r.safetyIdentifier):
		return refuse("safety_identifier", "must be a string")
	case present(r.tools) && !isArray(r.tools):
		return refuse("tools", "must be an array")
	case present(r.parallelToolCalls) && !isBool(r.parallelToolCalls):
		return refuse("parallel_tool_calls", "must be a boolean")
	}
	return nil
}

func allStrings(v []byte) bool { return allElements(v, isString) }
