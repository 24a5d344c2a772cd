package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// responsesRequest holds the raw values of the Responses request members
// that are translated; everything else is dropped or refused as it is read.
type responsesRequest struct {
	input, instructions, maxOutputTokens, temperature, topP []byte
	tools, toolChoice, parallelToolCalls, stream, text      []byte
	reasoning, user, safetyIdentifier                       []byte
}

// ResponsesToChat turns an OpenAI Responses request into a Chat Completions
// request for upstreamModel, for OpenAI-compatible servers without the
// Responses API. A streaming request also asks for the usage chunk, which
// response.completed reports. What needs state the gateway does not keep
// (previous_response_id, store: true, conversation, background) or a tool
// that runs inside OpenAI's API is a *RequestError naming the field.
func ResponsesToChat(body []byte, upstreamModel string) ([]byte, error) {
	out, _, err := responsesToChat(body, upstreamModel)
	return out, err
}

// responsesToChat is ResponsesToChat, with where each chat message came
// from in the Responses request (for naming the field of a later refusal).
func responsesToChat(body []byte, upstreamModel string) ([]byte, *chatSources, error) {
	var r responsesRequest
	v, err := readRequest(body, r.set, r.check)
	if err != nil {
		return nil, nil, err
	}
	out := appendRequestHead(make([]byte, 0, len(v)+len(v)/8+256), upstreamModel)
	w := itemWriter{out: out, src: &chatSources{}}
	if present(r.instructions) && !isEmptyString(r.instructions) {
		w.begin("system", fromInstructions)
		w.out = append(w.out, r.instructions...)
		w.out = append(w.out, '}')
	}
	if err := w.input(r.input); err != nil {
		return nil, nil, err
	}
	out = append(w.out, ']')
	if present(r.maxOutputTokens) {
		out = append(out, `,"max_completion_tokens":`...)
		out = append(out, r.maxOutputTokens...)
	}
	for _, p := range [...]struct {
		name string
		v    []byte
	}{{"temperature", r.temperature}, {"top_p", r.topP}, {"user", r.user}, {"safety_identifier", r.safetyIdentifier}, {"parallel_tool_calls", r.parallelToolCalls}} {
		if present(p.v) {
			out = append(out, `,"`...)
			out = append(out, p.name...)
			out = append(out, `":`...)
			out = append(out, p.v...)
		}
	}
	if present(r.tools) && string(r.tools) != "[]" {
		if out, err = appendResponsesTools(out, r.tools); err != nil {
			return nil, nil, err
		}
		if out, err = appendResponsesToolChoice(out, r.toolChoice); err != nil {
			return nil, nil, err
		}
	}
	if out, err = appendTextFormat(out, jsonscan.Field(r.text, "format")); err != nil {
		return nil, nil, err
	}
	if effort := jsonscan.Field(r.reasoning, "effort"); present(effort) {
		if !isString(effort) {
			return nil, nil, refuse("reasoning.effort", "must be a string")
		}
		out = append(out, `,"reasoning_effort":`...)
		out = append(out, effort...)
	}
	// reasoning.summary is dropped: Chat Completions has no summary to ask
	// for (a server that streams its reasoning still gives it).
	if isTrue(r.stream) {
		out = append(out, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(out, '}'), w.src, nil
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

// appendResponsesTools writes Responses function tools ({"type":"function",
// "name","description","parameters","strict"}) as Chat Completions tools.
// The tools that run inside OpenAI's API (web search, file search, code
// interpreter, computer use, MCP, ...) cannot go to another server.
func appendResponsesTools(out, tools []byte) ([]byte, error) {
	return appendTools(out, tools, appendResponsesTool)
}

func appendResponsesTool(out, tool []byte, path string) ([]byte, error) {
	f := readFunctionTool(tool, "parameters")
	switch {
	case !stringIs(f.typ, "function"):
		return out, refuse(path+".type", "only function tools translate; the others run inside OpenAI's API")
	case !isString(f.name):
		return out, refuse(path+".name", "must be a string")
	case present(f.schema) && !isObject(f.schema):
		return out, refuse(path+".parameters", "must be an object")
	case present(f.strict) && !isBool(f.strict):
		return out, refuse(path+".strict", "must be a boolean")
	}
	return appendChatTool(out, f), nil
}

// appendResponsesToolChoice maps tool_choice: auto, none and required as
// they are; {"type":"function","name":N} -> the named function.
func appendResponsesToolChoice(out, choice []byte) ([]byte, error) {
	switch {
	case !present(choice):
		return out, nil
	case stringIs(choice, "auto"), stringIs(choice, "none"), stringIs(choice, "required"):
		out = append(out, `,"tool_choice":`...)
		return append(out, choice...), nil
	case isObject(choice) && stringIs(jsonscan.Field(choice, "type"), "function"):
		name := jsonscan.Field(choice, "name")
		if !isString(name) {
			return out, refuse("tool_choice.name", "must be a string")
		}
		out = append(out, `,"tool_choice":{"type":"function","function":{"name":`...)
		out = append(out, name...)
		return append(out, "}}"...), nil
	case isObject(choice):
		return out, refuse("tool_choice.type", "only auto, none, required or a named function translate")
	}
	return out, refuse("tool_choice", "must be auto, none, required or {\"type\":\"function\",...}")
}

// appendTextFormat writes text.format as response_format: text needs
// nothing; json_schema ({"type","name","schema","strict","description"},
// flat in the Responses API) and json_object as Chat Completions spells
// them.
func appendTextFormat(out, format []byte) ([]byte, error) {
	if !present(format) {
		return out, nil
	}
	if !isObject(format) {
		return out, refuse("text.format", "must be an object")
	}
	switch typ := jsonscan.Field(format, "type"); {
	case stringIs(typ, "text"):
		return out, nil
	case stringIs(typ, "json_object"):
		return append(out, `,"response_format":{"type":"json_object"}`...), nil
	case stringIs(typ, "json_schema"):
		schema, name := jsonscan.Field(format, "schema"), jsonscan.Field(format, "name")
		if !isObject(schema) {
			return out, refuse("text.format.schema", "must be an object")
		}
		out = append(out, `,"response_format":{"type":"json_schema","json_schema":{"name":`...)
		if isString(name) {
			out = append(out, name...)
		} else {
			out = append(out, `"output"`...)
		}
		if strict := jsonscan.Field(format, "strict"); isBool(strict) {
			out = append(out, `,"strict":`...)
			out = append(out, strict...)
		}
		if desc := jsonscan.Field(format, "description"); isString(desc) {
			out = append(out, `,"description":`...)
			out = append(out, desc...)
		}
		out = append(out, `,"schema":`...)
		out = append(out, schema...)
		return append(out, "}}"...), nil
	}
	return out, refuse("text.format.type", "must be text, json_schema or json_object")
}
