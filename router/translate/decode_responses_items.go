package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// A Responses request's function calls, their outputs, reasoning items,
// tools and text format, in the neutral model.

// responsesCall reads a function_call item: an assistant turn of one call.
func (r *Request) responsesCall(j int, callID, name, args []byte) error {
	switch {
	case !isString(callID) || isEmptyString(callID):
		return refuse(itemPath(j)+".call_id", "must be a non-empty string")
	case !isString(name):
		return refuse(itemPath(j)+".name", "must be a string")
	case present(args) && !isString(args):
		return refuse(itemPath(j)+".arguments", "must be a string")
	}
	p := Part{Kind: PartToolCall, ID: callID, Name: name, Args: args, ArgsQuoted: true, At: -1}
	r.Turns = append(r.Turns, Turn{Role: RoleAssistant, At: j, Parts: r.one(p)})
	return nil
}

// responsesCallOutput reads a function_call_output item: a user turn of
// one result, its output a string or text, image and file parts.
func (r *Request) responsesCallOutput(j int, callID, output []byte) error {
	if !isString(callID) || isEmptyString(callID) {
		return refuse(itemPath(j)+".call_id", "must be a non-empty string")
	}
	p := Part{Kind: PartToolResult, ID: callID, At: -1}
	switch {
	case isString(output):
		p.Text = output
	case isArray(output):
		p.Content = []Part{}
		for k, v := range jsonscan.Each(output) {
			c, err := responsesPart(v, func() string { return itemPath(j) + ".output[" + strconv.Itoa(k) + "]" }, false)
			if err != nil {
				return err
			}
			c.At = k
			p.Content = append(p.Content, c)
		}
	default:
		return refuse(itemPath(j)+".output", "must be a string or an array of content parts")
	}
	r.Turns = append(r.Turns, Turn{Role: RoleUser, At: j, Parts: r.one(p)})
	return nil
}

// responsesThinking reads a reasoning item as a thinking part: its summary
// text, and the signature its encrypted_content carries (an item another
// server wrote carries none an upstream here can check: encoders leave an
// unsigned thinking part out where the upstream requires a signature).
func (r *Request) responsesThinking(j int, item []byte) {
	p := Part{Kind: PartThinking, At: -1, Text: []byte(`""`)}
	if enc := jsonscan.Field(item, "encrypted_content"); isString(enc) && !openAIEncrypted(enc) {
		p.Signature = enc
	}
	summaries := 0
	for _, s := range jsonscan.Each(jsonscan.Field(item, "summary")) {
		if text := jsonscan.Field(s, "text"); isString(text) {
			if summaries > 0 { // one thinking part per summary, signed last
				q := p
				q.Signature = nil
				r.appendThinking(j, q)
			}
			p.Text = text
			summaries++
		}
	}
	r.appendThinking(j, p)
}

// openAIEncrypted reports whether encrypted_content is OpenAI's own (a
// Fernet token: "gAAAAA..."), which only OpenAI reads, rather than a
// signature the gateway carried for Anthropic, Converse or Gemini.
func openAIEncrypted(enc []byte) bool {
	return len(enc) > 7 && string(enc[1:7]) == "gAAAAA"
}

// appendThinking adds a thinking part to the assistant turn of item j.
func (r *Request) appendThinking(j int, p Part) {
	if n := len(r.Turns); n > 0 && r.Turns[n-1].At == j {
		r.Turns[n-1].Parts = append(r.Turns[n-1].Parts, p)
		return
	}
	r.Turns = append(r.Turns, Turn{Role: RoleAssistant, At: j, Parts: r.one(p)})
}

// responsesTools reads function tools and the tool choice.
func (r *Request) responsesTools(tools, choice []byte) error {
	for j, v := range jsonscan.Each(tools) {
		path := func() string { return "tools[" + strconv.Itoa(j) + "]" }
		if !isObject(v) {
			return refuse(path(), "must be an object")
		}
		f := readFunctionTool(v, "parameters")
		if !stringIs(f.typ, "function") {
			return refuse(path()+".type", "only function tools translate; the others run inside OpenAI's API")
		}
		t, err := neutralTool(f, path, "parameters")
		if err != nil {
			return err
		}
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
		name := jsonscan.Field(choice, "name")
		if !isString(name) {
			return refuse("tool_choice.name", "must be a string")
		}
		r.ToolChoice = ToolChoice{Mode: ToolNamed, Name: name, Said: true}
	case isObject(choice):
		return refuse("tool_choice.type", "only auto, none, required or a named function translate")
	default:
		return refuse("tool_choice", "must be auto, none, required or {\"type\":\"function\",...}")
	}
	return nil
}

// responsesOutput reads text.format: text, json_object or json_schema.
func responsesOutput(format []byte) (OutputFormat, error) {
	if !present(format) {
		return OutputFormat{}, nil
	}
	if !isObject(format) {
		return OutputFormat{}, refuse("text.format", "must be an object")
	}
	switch typ := jsonscan.Field(format, "type"); {
	case stringIs(typ, "text"):
		return OutputFormat{}, nil
	case stringIs(typ, "json_object"):
		return OutputFormat{JSONObject: true}, nil
	case stringIs(typ, "json_schema"):
		o := OutputFormat{Schema: jsonscan.Field(format, "schema"), Name: jsonscan.Field(format, "name")}
		if !isObject(o.Schema) {
			return OutputFormat{}, refuse("text.format.schema", "must be an object")
		}
		if !isString(o.Name) {
			o.Name = nil
		}
		return o, nil
	}
	return OutputFormat{}, refuse("text.format.type", "must be text, json_schema or json_object")
}
