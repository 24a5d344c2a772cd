package translate

// messagesRequest holds the raw values of the Anthropic request members that
// are translated.
type messagesRequest struct {
	messages, system, maxTokens, stopSequences, temperature, topP []byte
	stream, metadata, tools, toolChoice                           []byte
	thinking, outputConfig, outputFormat                          []byte
}

// MessagesToChat turns an Anthropic Messages request into an OpenAI Chat
// Completions request for upstreamModel, through the neutral model. A
// streaming request also asks the
// upstream for its usage (stream_options.include_usage), which the stream
// translator needs for Anthropic's message_delta. A request Chat Completions
// cannot express is a *RequestError.
func MessagesToChat(body []byte, upstreamModel string) ([]byte, error) {
	out, _, err := EncodeRequest(Messages, body, Chat, upstreamModel, nil)
	return out, err
}

// set records one top-level member, refusing what no other format can say.
func (r *messagesRequest) set(k, v []byte) error {
	switch string(k) {
	case "messages":
		r.messages = v
	case "system":
		r.system = v
	case "max_tokens":
		r.maxTokens = v
	case "stop_sequences":
		r.stopSequences = v
	case "temperature":
		r.temperature = v
	case "top_p":
		r.topP = v
	case "stream":
		r.stream = v
	case "metadata":
		r.metadata = v
	case "tools":
		r.tools = v
	case "tool_choice":
		r.toolChoice = v
	case "thinking":
		r.thinking = v
	case "output_config":
		r.outputConfig = v
	case "output_format":
		r.outputFormat = v
	case "mcp_servers":
		if present(v) && string(v) != "[]" {
			return refuse("mcp_servers", "MCP servers are reached by Anthropic's API itself and cannot be used through an upstream of another format")
		}
	}
	// Dropped (docs/translation.md): service_tier, container, (top_k for an
	// OpenAI upstream; decodeMessages reads it for the others),
	// context_management, cache_control anywhere, and unknown members.
	return nil
}

func (r *messagesRequest) check() error {
	switch {
	case r.messages == nil:
		return refuse("messages", "required")
	case !isArray(r.messages):
		return refuse("messages", "must be an array")
	case present(r.maxTokens) && !isNumber(r.maxTokens):
		return refuse("max_tokens", "must be an integer")
	case present(r.stopSequences) && !allStrings(r.stopSequences):
		return refuse("stop_sequences", "must be an array of strings")
	case present(r.temperature) && !isNumber(r.temperature):
		return refuse("temperature", "must be a number")
	case present(r.topP) && !isNumber(r.topP):
		return refuse("top_p", "must be a number")
	case present(r.stream) && !isBool(r.stream):
		return refuse("stream", "must be a boolean")
	case present(r.metadata) && !isObject(r.metadata):
		return refuse("metadata", "must be an object")
	case present(r.tools) && !isArray(r.tools):
		return refuse("tools", "must be an array")
	case present(r.system) && !isString(r.system) && !isArray(r.system):
		return refuse("system", "must be a string or an array of text blocks")
	}
	return nil
}
