package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// A Chat Completions request's tools, tool choice and response format, in
// the neutral model.

// chatTools reads tools ({"type":"function","function":{...}}) and the
// tool choice (auto, none, required or a named function).
func (r *Request) chatTools(tools, choice []byte) error {
	for j, v := range jsonscan.Each(tools) {
		path := func() string { return "tools[" + strconv.Itoa(j) + "]" }
		if !isObject(v) {
			return refuse(path(), "must be an object")
		}
		var typ, function, cache []byte // one walk of the tool, not one a member
		m := jsonscan.MembersOf(v)
		for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
			switch string(k) {
			case "type":
				typ = val
			case "function":
				function = val
			case "cache_control":
				cache = val
			}
		}
		if !stringIs(typ, "function") {
			return refuse(path()+".type", "only function tools translate")
		}
		f := readFunctionTool(function, "parameters")
		t, err := neutralTool(f, func() string { return path() + ".function" }, "parameters")
		if err != nil {
			return err
		}
		t.Cache = cache
		r.Tools = append(r.Tools, t)
	}
	r.ToolChoice.Said = present(choice)
	switch {
	case !present(choice), stringIs(choice, "auto"):
	case stringIs(choice, "none"):
		r.ToolChoice.Mode = ToolNone
	case stringIs(choice, "required"):
		r.ToolChoice.Mode = ToolAny
	case isObject(choice) && stringIs(jsonscan.Field(choice, "type"), "function"):
		name := jsonscan.Field(jsonscan.Field(choice, "function"), "name")
		if !isString(name) {
			return refuse("tool_choice.function.name", "must be a string")
		}
		r.ToolChoice = ToolChoice{Mode: ToolNamed, Name: name, Said: true}
	case isObject(choice):
		return refuse("tool_choice.type", "only auto, none, required or a named function translate")
	default:
		return refuse("tool_choice", "must be auto, none, required or a named function")
	}
	return nil
}

// neutralTool checks a function definition read from any API.
func neutralTool(f functionTool, path func() string, schemaKey string) (Tool, error) {
	switch {
	case !isString(f.name):
		return Tool{}, refuse(path()+".name", "must be a string")
	case present(f.schema) && !isObject(f.schema):
		return Tool{}, refuse(path()+"."+schemaKey, "must be an object")
	case present(f.schema) && !schemaTypeObject(f.schema):
		return Tool{}, refuse(path()+"."+schemaKey+".type", "must be object: a tool's input is a JSON object")
	case present(f.strict) && !isBool(f.strict):
		return Tool{}, refuse(path()+".strict", "must be a boolean")
	case present(f.desc) && !isString(f.desc):
		return Tool{}, refuse(path()+".description", "must be a string")
	}
	t := Tool{Name: f.name, Schema: f.schema, Strict: f.strict}
	if present(f.desc) {
		t.Description = f.desc
	}
	return t, nil
}

// chatOutput reads response_format: text (the default), json_schema, or
// json_object (any JSON object, which only some upstreams can hold).
func chatOutput(format []byte) (OutputFormat, error) {
	if !present(format) {
		return OutputFormat{}, nil
	}
	if !isObject(format) {
		return OutputFormat{}, refuse("response_format", "must be an object")
	}
	switch typ := jsonscan.Field(format, "type"); {
	case stringIs(typ, "text"):
		return OutputFormat{}, nil
	case stringIs(typ, "json_object"):
		return OutputFormat{JSONObject: true}, nil
	case stringIs(typ, "json_schema"):
		js := jsonscan.Field(format, "json_schema")
		o := OutputFormat{Schema: jsonscan.Field(js, "schema"), Name: jsonscan.Field(js, "name")}
		if !isObject(o.Schema) {
			return OutputFormat{}, refuse("response_format.json_schema.schema", "must be an object")
		}
		if !isString(o.Name) {
			o.Name = nil
		}
		return o, nil
	}
	return OutputFormat{}, refuse("response_format.type", "must be text, json_schema or json_object")
}

// schemaTypeObject reports whether a schema object's type, if it says
// one, is object.
func schemaTypeObject(schema []byte) bool {
	typ := jsonscan.Field(schema, "type")
	return !present(typ) || stringIs(typ, "object")
}
