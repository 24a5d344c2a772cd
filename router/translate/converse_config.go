package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// A Converse request's settings beside its messages: toolConfig,
// outputConfig and additionalModelRequestFields.

// appendConverseTools writes toolConfig: each tool's toolSpec (strict kept),
// a cachePoint after a tool marked for caching, and the tool choice (auto,
// any, or a named tool; Converse has no word for none).
func appendConverseTools(out []byte, r *Request) ([]byte, error) {
	if len(r.Tools) == 0 {
		return out, nil
	}
	if r.ToolChoice.Mode == ToolNone {
		return out, refuse("tool_choice", "none cannot be expressed for a Bedrock Converse upstream: leave the tools out instead")
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
