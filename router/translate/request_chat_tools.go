package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// appendTools writes a request's tools array (a JSON array) as
// "tools":[…], each tool, an object, by one; path names it in a refusal.
// On an error, out is to be dropped.
func appendTools(out, tools []byte, one func(out, tool []byte, path string) ([]byte, error)) ([]byte, error) {
	out = append(out, `,"tools":[`...)
	for j, tool := range jsonscan.Each(tools) {
		path := "tools[" + strconv.Itoa(j) + "]"
		if !isObject(tool) {
			return out, refuse(path, "must be an object")
		}
		if j > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = one(out, tool, path); err != nil {
			return out, err
		}
	}
	return append(out, ']'), nil
}

// functionTool holds the members of a function's definition, as the three
// APIs spell one (raw JSON values): an OpenAI chat tool's function object,
// a Responses function tool, an Anthropic tool. The schema's member is
// parameters in OpenAI's, input_schema in Anthropic's.
type functionTool struct {
	typ, name, desc, schema, strict []byte
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
		case schemaKey:
			f.schema = val
		}
	}
	return f
}

// appendChatTool writes a Chat Completions function tool of a definition
// already checked: schema an object or absent, name a string.
func appendChatTool(out []byte, f functionTool) []byte {
	out = append(out, `{"type":"function","function":{"name":`...)
	out = append(out, f.name...)
	if isString(f.desc) {
		out = append(out, `,"description":`...)
		out = append(out, f.desc...)
	}
	if present(f.schema) {
		out = append(out, `,"parameters":`...)
		out = append(out, f.schema...)
	}
	if isTrue(f.strict) {
		out = append(out, `,"strict":true`...)
	}
	return append(out, "}}"...)
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
