package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// functionTool holds the members of a function's definition, as the three
// APIs spell one (raw JSON values): an OpenAI chat tool's function object,
// a Responses function tool, an Anthropic tool. The schema's member is
// parameters in OpenAI's, input_schema in Anthropic's.
type functionTool struct {
	typ, name, desc, schema, strict []byte
	cache                           []byte // cache_control, where the tool object holds the function
}

// readFunctionTool reads a function's definition; schemaKey names its
// schema's member.
func readFunctionTool(v []byte, schemaKey string) functionTool {
	var f functionTool
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "type":
			f.typ = val
		case "name":
			f.name = val
		case "description":
			f.desc = val
		case "strict":
			f.strict = val
		case "cache_control":
			f.cache = val
		case schemaKey:
			f.schema = val
		}
	}
	return f
}

// appendObjectSchema writes a function's parameters as an Anthropic
// input_schema, which must be an object schema: OpenAI allows a function
// without parameters, or with {} (any input), and Anthropic refuses a
// schema without "type": "object". A schema of another type cannot be a
// tool's input in either API.
func appendObjectSchema(out, params []byte, path string) ([]byte, error) {
	switch {
	case !present(params):
		return append(out, `{"type":"object","properties":{}}`...), nil
	case !isObject(params):
		return out, refuse(path, "must be an object")
	}
	typ := jsonscan.Field(params, "type")
	switch {
	case stringIs(typ, "object"):
		return append(out, params...), nil
	case present(typ):
		return out, refuse(path+".type", "must be object: a tool's input is a JSON object")
	}
	// No type: add it at the front, keeping the rest as it came.
	out = append(out, `{"type":"object"`...)
	if emptyObject(params) {
		return append(out, `,"properties":{}}`...), nil
	}
	out = append(out, ',')
	return append(out, params[jsonscan.SkipSpace(params, 1):]...), nil
}
