package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// part holds the members of one content block (Anthropic) or content part
// (OpenAI) that the translators read, found in a single pass: a block's text
// can be most of a request, and reading one member at a time would cross it
// once per member read.
type part struct {
	typ, text, refusal, imageURL, file, source, id, name, input, toolUseID, content, title []byte
	cacheControl, isError                                                                  []byte
}

// readPart reads the object v; ok is false when v is not an object.
func readPart(v []byte) (p part, ok bool) {
	if !isObject(v) {
		return p, false
	}
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "type":
			p.typ = val
		case "text":
			p.text = val
		case "refusal":
			p.refusal = val
		case "image_url":
			p.imageURL = val
		case "file":
			p.file = val
		case "source":
			p.source = val
		case "id":
			p.id = val
		case "name":
			p.name = val
		case "input":
			p.input = val
		case "tool_use_id":
			p.toolUseID = val
		case "content":
			p.content = val
		case "title":
			p.title = val
		case "cache_control":
			p.cacheControl = val
		case "is_error":
			p.isError = val
		}
	}
	return p, true
}

// textIn returns the text of a {"type":"text","text":...} part.
func textIn(p part) ([]byte, bool) {
	return p.text, stringIs(p.typ, "text") && isString(p.text)
}

// notText refuses, at path, a part that had to be text.
func notText(p part, path string) error {
	if stringIs(p.typ, "text") {
		return refuse(path+".text", "must be a string")
	}
	return refuse(path, "must be a text part")
}

// contentPath is where content part j of message i stands.
func contentPath(i, j int) string {
	return msgPath(i) + ".content[" + strconv.Itoa(j) + "]"
}

// toolCall is an OpenAI tool call's members, raw (nil when absent), as a
// request message, a unary answer and a stream delta all spell it.
type toolCall struct{ typ, index, id, name, args []byte }

// readToolCall reads an OpenAI tool call and its function object in one
// pass; a repeated member keeps its last value.
func readToolCall(c []byte) toolCall {
	var t toolCall
	var fn []byte
	m := jsonscan.MembersOf(c)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			t.typ = v
		case "index":
			t.index = v
		case "id":
			t.id = v
		case "function":
			fn = v
		}
	}
	if isObject(fn) {
		fm := jsonscan.MembersOf(fn)
		for k, v, ok := fm.Next(); ok; k, v, ok = fm.Next() {
			switch string(k) {
			case "name":
				t.name = v
			case "arguments":
				t.args = v
			}
		}
	}
	return t
}
