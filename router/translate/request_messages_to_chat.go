package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// messagesRequest holds the raw values of the Anthropic request members that
// are translated.
type messagesRequest struct {
	messages, system, maxTokens, stopSequences, temperature, topP []byte
	stream, metadata, tools, toolChoice                           []byte
	thinking, outputConfig, outputFormat                          []byte
}

// MessagesToChat turns an Anthropic Messages request into an OpenAI Chat
// Completions request for upstreamModel. A streaming request also asks the
// upstream for its usage (stream_options.include_usage), which the stream
// translator needs for Anthropic's message_delta. A request Chat Completions
// cannot express is a *RequestError.
func MessagesToChat(body []byte, upstreamModel string) ([]byte, error) {
	var r messagesRequest
	v, err := readRequest(body, r.set, r.check)
	if err != nil {
		return nil, err
	}

	out := appendRequestHead(make([]byte, 0, len(v)+len(v)/16+256), upstreamModel)
	c := chatMessages{out: out}
	if err := c.system(r.system); err != nil {
		return nil, err
	}
	msgs := jsonscan.ElementsOf(r.messages)
	for i := 0; ; i++ {
		msg, ok := msgs.Next()
		if !ok {
			break
		}
		if err := c.message(i, msg); err != nil {
			return nil, err
		}
	}
	out = append(c.out, ']')
	if present(r.maxTokens) {
		// max_tokens is deprecated in Chat Completions and refused by OpenAI's
		// reasoning models; max_completion_tokens is what every current
		// OpenAI-compatible API takes.
		out = append(out, `,"max_completion_tokens":`...)
		out = append(out, r.maxTokens...)
	}
	if present(r.stopSequences) && string(r.stopSequences) != "[]" {
		out = append(out, `,"stop":`...)
		out = append(out, r.stopSequences...)
	}
	if present(r.temperature) {
		out = append(out, `,"temperature":`...)
		out = append(out, r.temperature...)
	}
	if present(r.topP) {
		out = append(out, `,"top_p":`...)
		out = append(out, r.topP...)
	}
	if user := jsonscan.Field(r.metadata, "user_id"); isString(user) {
		out = append(out, `,"user":`...)
		out = append(out, user...)
	}
	if present(r.tools) && string(r.tools) != "[]" {
		var err error
		if out, err = appendChatTools(out, r.tools); err != nil {
			return nil, err
		}
		if out, err = appendChatToolChoice(out, r.toolChoice); err != nil {
			return nil, err
		}
	}
	if out, err = appendReasoning(out, r); err != nil {
		return nil, err
	}
	if isTrue(r.stream) {
		out = append(out, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(out, '}'), nil
}

// appendReasoning writes the structured output format and the reasoning
// effort: the thinking budget's, else output_config.effort's.
func appendReasoning(out []byte, r messagesRequest) ([]byte, error) {
	if present(r.outputConfig) && !isObject(r.outputConfig) {
		return out, refuse("output_config", "must be an object")
	}
	format, path := jsonscan.Field(r.outputConfig, "format"), "output_config.format"
	if !present(format) {
		format, path = r.outputFormat, "output_format"
	}
	out, err := appendResponseFormat(out, format, path)
	if err != nil {
		return out, err
	}
	effort, err := reasoningEffort(r.thinking)
	if err != nil {
		return out, err
	}
	if effort == "" {
		if effort, err = effortLevel(jsonscan.Field(r.outputConfig, "effort")); err != nil {
			return out, err
		}
	}
	if effort != "" {
		out = append(out, `,"reasoning_effort":"`...)
		out = append(out, effort...)
		out = append(out, '"')
	}
	return out, nil
}

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
			return refuse("mcp_servers", "MCP servers are reached by Anthropic's API itself and cannot be used through an OpenAI upstream")
		}
	}
	// Dropped (docs/translation.md): top_k, service_tier, container,
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

// appendChatTools writes Anthropic client tools as OpenAI function tools.
// Server tools (web search, code execution, ...) run inside Anthropic's API
// and cannot cross over.
func appendChatTools(out, tools []byte) ([]byte, error) {
	return appendTools(out, tools, appendChatToolOfAnthropic)
}

func appendChatToolOfAnthropic(out, tool []byte, path string) ([]byte, error) {
	// cache_control is dropped: OpenAI caches prompts on its own.
	f := readFunctionTool(tool, "input_schema")
	switch {
	case present(f.typ) && !stringIs(f.typ, "custom"):
		return out, refuse(path+".type", "server tools run inside Anthropic's API and cannot be used through an OpenAI upstream")
	case !isString(f.name):
		return out, refuse(path+".name", "must be a string")
	case present(f.strict) && !isBool(f.strict):
		return out, refuse(path+".strict", "must be a boolean")
	}
	if !isObject(f.schema) {
		f.schema = nil // a schema that is not an object is left out
	}
	return appendChatTool(out, f), nil
}

// appendChatToolChoice maps tool_choice: auto -> auto, any -> required, tool
// -> the named function, none -> none; disable_parallel_tool_use true ->
// parallel_tool_calls false.
func appendChatToolChoice(out, choice []byte) ([]byte, error) {
	if !present(choice) {
		return out, nil
	}
	if !isObject(choice) {
		return out, refuse("tool_choice", "must be an object")
	}
	typ := jsonscan.Field(choice, "type")
	switch {
	case stringIs(typ, "auto"):
		out = append(out, `,"tool_choice":"auto"`...)
	case stringIs(typ, "any"):
		out = append(out, `,"tool_choice":"required"`...)
	case stringIs(typ, "none"):
		return append(out, `,"tool_choice":"none"`...), nil
	case stringIs(typ, "tool"):
		name := jsonscan.Field(choice, "name")
		if !isString(name) {
			return out, refuse("tool_choice.name", "must be a string")
		}
		out = append(out, `,"tool_choice":{"type":"function","function":{"name":`...)
		out = append(out, name...)
		out = append(out, "}}"...)
	default:
		return out, refuse("tool_choice.type", "must be auto, any, tool or none")
	}
	if isTrue(jsonscan.Field(choice, "disable_parallel_tool_use")) {
		out = append(out, `,"parallel_tool_calls":false`...)
	}
	return out, nil
}
