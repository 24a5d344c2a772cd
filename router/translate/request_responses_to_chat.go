package translate

// responsesRequest holds the raw values of the Responses request members
// that are translated; everything else is dropped or refused as it is read.
type responsesRequest struct {
	input, instructions, maxOutputTokens, temperature, topP []byte
	tools, toolChoice, parallelToolCalls, stream, text      []byte
	reasoning, user, safetyIdentifier                       []byte
}

// ResponsesToChat turns an OpenAI Responses request into a Chat Completions
// request for upstreamModel, for OpenAI-compatible servers without the
// Responses API, through the neutral model. A streaming request also asks for the usage chunk, which
// response.completed reports. What needs state the gateway does not keep
// (previous_response_id, store: true, conversation, background) or a tool
// that runs inside OpenAI's API is a *RequestError naming the field.
func ResponsesToChat(body []byte, upstreamModel string) ([]byte, error) {
	out, _, err := EncodeRequest(Responses, body, Chat, upstreamModel, nil)
	return out, err
}

func (r *responsesRequest) set(k, v []byte) error {
	switch string(k) {
	case "input":
		r.input = v
	case "instructions":
		r.instructions = v
	case "max_output_tokens":
		r.maxOutputTokens = v
	case "temperature":
		r.temperature = v
	case "top_p":
		r.topP = v
	case "tools":
		r.tools = v
	case "tool_choice":
		r.toolChoice = v
	case "parallel_tool_calls":
		r.parallelToolCalls = v
	case "stream":
		r.stream = v
	case "text":
		r.text = v
	case "reasoning":
		r.reasoning = v
	case "user":
		r.user = v
	case "safety_identifier":
		r.safetyIdentifier = v
	case "previous_response_id", "conversation":
		if present(v) {
			return refuse(string(k), "needs the conversation state only an OpenAI target with the Responses API keeps")
		}
	case "store":
		if isTrue(v) {
			return refuse("store", "a stored response needs an OpenAI target with the Responses API")
		}
	case "background":
		if isTrue(v) {
			return refuse("background", "a background response needs an OpenAI target with the Responses API")
		}
	case "prompt":
		if present(v) {
			return refuse("prompt", "a stored prompt template needs an OpenAI target with the Responses API")
		}
	case "top_logprobs":
		if present(v) && string(v) != "0" {
			return refuse("top_logprobs", "log probabilities are not translated")
		}
	}
	// Dropped (docs/translation.md): include, metadata, service_tier,
	// truncation, prompt_cache_key and prompt_cache_retention, max_tool_calls,
	// and unknown members.
	return nil
}

func (r *responsesRequest) check() error {
	switch {
	case r.input == nil:
		return refuse("input", "required")
	case !isString(r.input) && !isArray(r.input):
		return refuse("input", "must be a string or an array of items")
	case present(r.instructions) && !isString(r.instructions):
		return refuse("instructions", "must be a string")
	case present(r.maxOutputTokens) && !isNumber(r.maxOutputTokens):
		return refuse("max_output_tokens", "must be an integer")
	case present(r.temperature) && !isNumber(r.temperature):
		return refuse("temperature", "must be a number")
	case present(r.topP) && !isNumber(r.topP):
		return refuse("top_p", "must be a number")
	case present(r.tools) && !isArray(r.tools):
		return refuse("tools", "must be an array")
	case present(r.parallelToolCalls) && !isBool(r.parallelToolCalls):
		return refuse("parallel_tool_calls", "must be a boolean")
	case present(r.stream) && !isBool(r.stream):
		return refuse("stream", "must be a boolean")
	case present(r.text) && !isObject(r.text):
		return refuse("text", "must be an object")
	case present(r.reasoning) && !isObject(r.reasoning):
		return refuse("reasoning", "must be an object")
	case present(r.user) && !isString(r.user):
		return refuse("user", "must be a string")
	case present(r.safetyIdentifier) && !isString(r.safetyIdentifier):
		return refuse("safety_identifier", "must be a string")
	}
	return nil
}
