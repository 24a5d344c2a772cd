package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Structured outputs, in each API's words: OpenAI's response_format
// {"type":"json_schema","json_schema":{"name","schema","strict"}} and
// Anthropic's output_config {"format":{"type":"json_schema","schema"}}.
// Both hold the answer's text to the schema.

// appendOutputConfig writes an OpenAI response_format as Anthropic's
// output_config. {"type":"text"} is the default and needs nothing;
// json_object (any JSON at all) has no Anthropic counterpart, which holds
// an answer to a schema only.
func appendOutputConfig(out, format []byte) ([]byte, error) {
	if !present(format) {
		return out, nil
	}
	if !isObject(format) {
		return out, refuse("response_format", "must be an object")
	}
	switch typ := jsonscan.Field(format, "type"); {
	case stringIs(typ, "text"):
		return out, nil
	case stringIs(typ, "json_schema"):
		schema := jsonscan.Field(jsonscan.Field(format, "json_schema"), "schema")
		if !isObject(schema) {
			return out, refuse("response_format.json_schema.schema", "must be an object")
		}
		out = append(out, `,"output_config":{"format":{"type":"json_schema","schema":`...)
		out = append(out, schema...)
		return append(out, "}}"...), nil
	case stringIs(typ, "json_object"):
		return out, refuse("response_format.type", "json_object cannot be held for an Anthropic upstream, which holds answers to a schema only: use json_schema")
	}
	return out, refuse("response_format.type", "must be text, json_schema or json_object")
}

// appendResponseFormat writes Anthropic's output format (output_config's
// format, or the earlier top-level output_format) as OpenAI's
// response_format, strict: Anthropic's structured outputs always are.
func appendResponseFormat(out, format []byte, path string) ([]byte, error) {
	if !present(format) {
		return out, nil
	}
	if !isObject(format) {
		return out, refuse(path, "must be an object")
	}
	if typ := jsonscan.Field(format, "type"); !stringIs(typ, "json_schema") {
		return out, refuse(path+".type", "must be json_schema")
	}
	schema := jsonscan.Field(format, "schema")
	if !isObject(schema) {
		return out, refuse(path+".schema", "must be an object")
	}
	out = append(out, `,"response_format":{"type":"json_schema","json_schema":{"name":"output","strict":true,"schema":`...)
	out = append(out, schema...)
	return append(out, "}}"...), nil
}
