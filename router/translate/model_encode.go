package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// What every encoder of the neutral model shares: where a part stood in the
// client's request (for a refusal to name it), and writing the values that
// cross over as they came.

// partPath names, in the client's words, the part p of turn t.
func (r *Request) partPath(t *Turn, p *Part) string {
	list := "messages["
	if r.Client == Responses {
		list = "input["
	}
	path := list + strconv.Itoa(t.At) + "]"
	if p != nil && p.At >= 0 {
		path += ".content[" + strconv.Itoa(p.At) + "]"
	}
	return path
}

// resultPartPath names, in the client's words, part c of tool result p's
// content: Chat's messages[i].content[k], a Responses
// function_call_output's output[k], a Messages tool_result's content[k].
func (r *Request) resultPartPath(t *Turn, p, c *Part) string {
	k := "[" + strconv.Itoa(max(c.At, 0)) + "]"
	switch r.Client {
	case Chat:
		return msgPath(t.At) + ".content" + k
	case Responses:
		return itemPath(t.At) + ".output" + k
	}
	return r.partPath(t, p) + ".content" + k
}

// argsPath names, in the client's words, the arguments of tool call p:
// Chat's tool_calls[k].function.arguments (At is k), a Responses
// function_call's arguments, a Messages tool_use block's input.
func (r *Request) argsPath(t *Turn, p *Part) string {
	switch r.Client {
	case Chat:
		return msgPath(t.At) + ".tool_calls[" + strconv.Itoa(max(p.At, 0)) + "].function.arguments"
	case Responses:
		return itemPath(t.At) + ".arguments"
	}
	return r.partPath(t, p) + ".input"
}

// outputPath names the client's structured-output field.
func (r *Request) outputPath() string {
	switch r.Client {
	case Responses:
		return "text.format"
	case Messages:
		return "output_config.format"
	}
	return "response_format"
}

// outputSize is the capacity an encoder starts its output with: the
// decoded body's length and some room, so the output is not copied as it
// grows.
func (r *Request) outputSize() int {
	return max(1024, r.size+r.size/8+256)
}

// comma writes the ',' that separates a member or element from the one
// before it, unless out has just opened its object or array.
func comma(out []byte) []byte {
	if n := len(out); n > 0 && out[n-1] != '{' && out[n-1] != '[' {
		return append(out, ',')
	}
	return out
}

// key writes ,"name": before a value.
func key(out []byte, name string) []byte {
	out = comma(out)
	out = append(out, '"')
	out = append(out, name...)
	return append(out, `":`...)
}

// appendRaw writes ,"name":v when v is present.
func appendRaw(out []byte, name string, v []byte) []byte {
	if !present(v) {
		return out
	}
	return append(key(out, name), v...)
}

// appendInline writes inline bytes (Part.Data or MediaType) as a JSON string.
func appendInline(out, s []byte, escaped bool) []byte {
	if escaped {
		// Escaped JSON string contents (a client that writes \/): written
		// as the API's own encoders write them, the escapes undone where
		// JSON does not need them. Rare, so the copy is.
		tok := append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"')
		return jsonscan.AppendString(out, jsonscan.AppendUnquoted(nil, tok))
	}
	return appendContents(out, s, false)
}

// appendArgsObject writes a tool call's arguments as a JSON object ({}
// for none), whichever way they came.
func appendArgsObject(out []byte, p *Part) ([]byte, error) {
	if !p.ArgsQuoted {
		if !present(p.Args) {
			return append(out, "{}"...), nil
		}
		if !isObject(p.Args) {
			return out, errNotObjectArgs
		}
		return append(out, p.Args...), nil
	}
	return appendArguments(out, p.Args)
}

// appendArgsString writes a tool call's arguments as a string holding JSON
// ("{}" for none), as OpenAI's arguments are.
func appendArgsString(out []byte, p *Part) []byte {
	switch {
	case !present(p.Args):
		return append(out, `"{}"`...)
	case p.ArgsQuoted:
		if isEmptyString(p.Args) {
			return append(out, `"{}"`...)
		}
		return append(out, p.Args...)
	}
	return jsonscan.AppendString(out, p.Args)
}

// textOr is a part's text token, or "" when it has none.
func textOr(t []byte) []byte {
	if isString(t) {
		return t
	}
	return []byte(`""`)
}

// mediaSubtype is the subtype of an image media type Converse names
// formats by (image/png: png), ok false for one it does not take.
func mediaSubtype(mt []byte, allowed ...string) (string, bool) {
	const prefix = "image/"
	if len(mt) <= len(prefix) || string(mt[:len(prefix)]) != prefix {
		return "", false
	}
	sub := string(mt[len(prefix):])
	for _, a := range allowed {
		if sub == a {
			return sub, true
		}
	}
	return "", false
}

// callNames finds, for a tool result, the name of the call it answers,
// which Gemini's functionResponse needs and the other APIs do not send.
func (r *Request) callName(id []byte) []byte {
	for i := range r.Turns {
		for j := range r.Turns[i].Parts {
			p := &r.Turns[i].Parts[j]
			if p.Kind == PartToolCall && string(p.ID) == string(id) {
				return p.Name
			}
		}
	}
	return nil
}

// errNotObjectArgs: tool arguments that are not a JSON object.
var errNotObjectArgs = invalidUpstream("tool arguments are not a JSON object")

// appendArguments writes OpenAI tool-call arguments (a string holding JSON)
// as an input object, as Messages, Converse and Gemini take them. Empty or
// absent arguments are {}; anything but an object is an error.
func appendArguments(out, args []byte) ([]byte, error) {
	switch {
	case !present(args):
		return append(out, "{}"...), nil
	case isObject(args): // some clients send the object itself
		return append(out, args...), nil
	case !isString(args):
		return out, errNotObjectArgs
	}
	start := len(out)
	out = jsonscan.AppendUnquoted(out, args)
	if jsonscan.SkipSpace(out, start) == len(out) {
		return append(out[:start], "{}"...), nil
	}
	if v, ok := jsonscan.Valid(out[start:]); !ok || !isObject(v) {
		return out[:start], errNotObjectArgs
	}
	return out, nil
}
