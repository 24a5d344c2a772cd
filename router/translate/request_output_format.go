package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Structured outputs, in each API's words: OpenAI's response_format
// {"type":"json_schema","json_schema":{"name","schema","strict"}} and
// Anthropic's output_config {"format":{"type":"json_schema","schema"}}.
// Both hold the answer's text to the schema.

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
