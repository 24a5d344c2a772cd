package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// A Converse request's settings beside its messages: toolConfig,
// outputConfig and additionalModelRequestFields.

// appendConverseTools writes toolConfig: each tool's toolSpec (strict kept),
// a cachePoint after a tool marked for caching, and the tool choice (auto,
// any, or a named tool; Converse has no word for none, nor for one call at
// a time: a request that forbids parallel calls is refused).
func appendConverseTools(out []byte, r *Request) ([]byte, error) {
	if len(r.Tools) == 0 {
		return out, nil
	}
	if r.ToolChoice.Mode == ToolNone {
		return out, refuse("tool_choice", "none cannot be expressed for a Bedrock Converse upstream: leave the tools out instead")
	}
	if err := r.refuseSerialCalls("a Bedrock Converse upstream"); err != nil {
		return out, err
	}
	out = append(key(out, "toolConfig"), `{"tools":[`...)
	for i := range r.Tools {
		t := &r.Tools[i]
		out = append(comma(out), `{"toolSpec":{"name":`...)
		out = append(out, t.Name...)
		out = appendRaw(out, "description", t.Description)
		out = append(out, `,"inputSchema":{"json":`...)
		out = append(appendSchema(out, t.Schema), '}')
		if isTrue(t.Strict) {
			out = append(out, `,"strict":true`...)
		}
		out = append(out, "}}"...)
		if present(t.Cache) {
			out = append(out, `,{"cachePoint":{"type":"default"}}`...)
		}
	}
	out = append(out, ']')
	switch r.ToolChoice.Mode {
	case ToolAny:
		out = append(out, `,"toolChoice":{"any":{}}`...)
	case ToolNamed:
		out = append(out, `,"toolChoice":{"tool":{"name":`...)
		out = append(append(out, r.ToolChoice.Name...), "}}"...)
	}
	return append(out, '}'), nil
}

// appendSchema writes a tool's parameter schema, or the empty object
// schema for a tool that takes none.
// A schema without a type gets type object at its front (decoders refuse
// any other type), the rest kept as it came.
func appendSchema(out, schema []byte) []byte {
	if !isObject(schema) {
		return append(out, `{"type":"object","properties":{}}`...)
	}
	out, _ = appendObjectSchema(out, schema, "")
	return out
}

// appendConverseOutput writes outputConfig.textFormat for structured
// output: Converse takes the schema as a string holding the JSON.
func appendConverseOutput(out []byte, r *Request) ([]byte, error) {
	if r.Output.JSONObject {
		return out, refuse(r.outputPath()+".type", "json_object cannot be held for a Bedrock Converse upstream, which holds answers to a schema only: use json_schema")
	}
	if r.Output.Schema == nil {
		return out, nil
	}
	out = append(key(out, "outputConfig"), `{"textFormat":{"type":"json_schema","structure":{"jsonSchema":{"schema":`...)
	out = jsonscan.AppendString(out, r.Output.Schema)
	out = appendRaw(out, "name", r.Output.Name)
	return append(out, "}}}}"...), nil
}

// appendConverseAdditional writes additionalModelRequestFields, for what
// Converse has no field of its own for: top_k, and the reasoning effort
// (in the reasoningConfig Amazon Nova reads; a model that reads none
// answers the caller's 400).
func appendConverseAdditional(out []byte, r *Request) []byte {
	effort := r.Reasoning.effort()
	if !present(r.Limits.TopK) && effort == "" {
		return out
	}
	out = append(key(out, "additionalModelRequestFields"), '{')
	out = appendRaw(out, "top_k", r.Limits.TopK)
	if effort != "" {
		out = append(key(out, "reasoningConfig"), `{"type":"enabled","maxReasoningEffort":"`...)
		out = append(out, effort...)
		out = append(out, `"}`...)
	}
	return append(out, '}')
}

// refuseSerialCalls refuses a request that forbids parallel tool calls
// (parallel_tool_calls false, Anthropic's disable_parallel_tool_use) for an
// upstream with no field to say so: its model may answer with several
// calls at once, which the client said it cannot take. Dropping it would
// change the answer, so the client's field is named instead. A request
// whose tools cannot be called (tool choice none) forbids nothing.
func (r *Request) refuseSerialCalls(upstream string) error {
	if string(r.ParallelToolCalls) != "false" || len(r.Tools) == 0 || r.ToolChoice.Mode == ToolNone {
		return nil
	}
	field := "parallel_tool_calls"
	if r.Client == Messages {
		field = "tool_choice.disable_parallel_tool_use"
	}
	return refuse(field, upstream+" cannot be held to one tool call at a time: leave it out to allow parallel calls")
}
