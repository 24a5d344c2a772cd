package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// The input items of a Responses request, as Chat Completions messages:
//
//	input as a string                 -> one user message
//	message (user, system, developer) -> a message of that role; input_text,
//	                                     input_image and input_file parts as text,
//	                                     image_url and file parts
//	message (assistant)               -> an assistant message; output_text and
//	                                     refusal parts as its text
//	function_call                     -> a tool call of the assistant message
//	                                     (consecutive ones, and the assistant text
//	                                     before them, are one message)
//	function_call_output              -> a tool message
//	reasoning                         -> dropped: no other server can read it
//	item_reference, and the items of OpenAI-run tools -> refused

// chatSources says where each chat message came from in the Responses
// request, so a refusal the next translation makes names the client's
// field.
type chatSources struct {
	msgs  []int   // by message index: its input item, or fromInstructions, fromInput
	calls [][]int // by message index: the input item of each of its tool calls
	tool  []bool  // by message index: a tool message (a function_call_output)
}

// Messages that come from no input item.
const (
	fromInstructions = -1 - iota // the instructions
	fromInput                    // input given as a string
)

// itemPath names input item j, or where a message without one came from.
func itemPath(j int) string {
	switch j {
	case fromInstructions:
		return "instructions"
	case fromInput:
		return "input"
	}
	return "input[" + strconv.Itoa(j) + "]"
}

// itemWriter writes Chat Completions messages from Responses items.
type itemWriter struct {
	out []byte
	n   int // messages written
	src *chatSources

	// The assistant message being gathered: its text parts (string tokens)
	// and tool calls (written), until an item of another kind comes.
	texts   [][]byte
	calls   []byte
	nCalls  int
	asst    bool // an assistant message is being gathered
	asstSrc int
	callSrc []int
}

// begin starts a message of role from the item at src; the caller writes
// its content and closes it.
func (w *itemWriter) begin(role string, src int) {
	w.flush()
	if w.n > 0 {
		w.out = append(w.out, ',')
	}
	w.n++
	w.src.msgs = append(w.src.msgs, src)
	w.src.calls = append(w.src.calls, nil)
	w.src.tool = append(w.src.tool, role == "tool")
	w.out = append(w.out, `{"role":"`...)
	w.out = append(w.out, role...)
	w.out = append(w.out, `","content":`...)
}

// flush writes the gathered assistant message, if any.
func (w *itemWriter) flush() {
	if !w.asst {
		return
	}
	src, texts, calls, callSrc := w.asstSrc, w.texts, w.calls, w.callSrc
	w.asst = false
	w.begin("assistant", src)
	w.src.calls[len(w.src.calls)-1] = callSrc
	switch {
	case len(texts) > 0:
		w.out = appendTexts(w.out, texts)
	case len(calls) > 0:
		w.out = append(w.out, "null"...)
	default:
		w.out = append(w.out, `""`...)
	}
	if len(calls) > 0 {
		w.out = append(w.out, `,"tool_calls":[`...)
		w.out = append(w.out, calls...)
		w.out = append(w.out, ']')
	}
	w.out = append(w.out, '}')
	w.texts, w.calls, w.nCalls, w.callSrc = w.texts[:0], w.calls[:0], 0, nil
}

// gather notes an item that belongs to the assistant message.
func (w *itemWriter) gather(src int) {
	if !w.asst {
		w.asst, w.asstSrc = true, src
	}
}

func (w *itemWriter) input(v []byte) error {
	if isString(v) {
		w.begin("user", fromInput)
		w.out = append(w.out, v...)
		w.out = append(w.out, '}')
		return nil
	}
	for j, item := range jsonscan.Each(v) {
		if err := w.item(j, item); err != nil {
			return err
		}
	}
	w.flush()
	return nil
}

func (w *itemWriter) item(j int, item []byte) error {
	if !isObject(item) {
		return refuse(itemPath(j), "must be an object")
	}
	var typ, role, content, callID, name, args, output []byte
	m := jsonscan.MembersOf(item)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = v
		case "role":
			role = v
		case "content":
			content = v
		case "call_id":
			callID = v
		case "name":
			name = v
		case "arguments":
			args = v
		case "output":
			output = v
		}
	}
	switch {
	case !present(typ) || stringIs(typ, "message"):
		return w.message(j, role, content)
	case stringIs(typ, "function_call"):
		return w.functionCall(j, callID, name, args)
	case stringIs(typ, "function_call_output"):
		return w.functionOutput(j, callID, output)
	case stringIs(typ, "reasoning"):
		return nil // another server's reasoning: nothing here can read it
	case stringIs(typ, "item_reference"):
		return refuse(itemPath(j), "an item reference needs the stored items only an OpenAI target with the Responses API keeps")
	}
	return refuse(itemPath(j)+".type", "must be message, function_call, function_call_output or reasoning; the other items belong to tools that run inside OpenAI's API")
}

func (w *itemWriter) message(j int, role, content []byte) error {
	switch {
	case stringIs(role, "assistant"):
		return w.assistantText(j, content)
	case stringIs(role, "user"), stringIs(role, "system"), stringIs(role, "developer"):
	case role == nil:
		return refuse(itemPath(j)+".role", "required")
	default:
		return refuse(itemPath(j)+".role", "must be user, assistant, system or developer")
	}
	w.begin(string(role[1:len(role)-1]), j)
	if isString(content) {
		w.out = append(w.out, content...)
		w.out = append(w.out, '}')
		return nil
	}
	if !isArray(content) {
		return refuse(itemPath(j)+".content", "must be a string or an array of content parts")
	}
	w.out = append(w.out, '[')
	for k, p := range jsonscan.Each(content) {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		var err error
		if w.out, err = appendInputPart(w.out, p, func() string { return itemPath(j) + ".content[" + strconv.Itoa(k) + "]" }); err != nil {
			return err
		}
	}
	w.out = append(w.out, "]}"...)
	return nil
}

// appendInputPart writes an input_text, input_image or input_file part as
// a Chat Completions content part.
func appendInputPart(out, p []byte, at func() string) ([]byte, error) {
	if !isObject(p) {
		return out, refuse(at(), "must be an object")
	}
	var typ, text, imageURL, detail, fileID, fileData, filename []byte
	m := jsonscan.MembersOf(p)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = v
		case "text":
			text = v
		case "image_url":
			imageURL = v
		case "detail":
			detail = v
		case "file_id":
			fileID = v
		case "file_data":
			fileData = v
		case "filename":
			filename = v
		}
	}
	switch {
	case stringIs(typ, "input_text") || stringIs(typ, "output_text"):
		if !isString(text) {
			return out, refuse(at()+".text", "must be a string")
		}
		return appendTextBlock(out, text, nil), nil
	case stringIs(typ, "input_image"):
		if !isString(imageURL) {
			return out, refuse(at(), "only an image given by image_url translates (a file_id lives in OpenAI's storage)")
		}
		out = append(out, `{"type":"image_url","image_url":{"url":`...)
		out = append(out, imageURL...)
		if isString(detail) {
			out = append(out, `,"detail":`...)
			out = append(out, detail...)
		}
		return append(out, "}}"...), nil
	case stringIs(typ, "input_file"):
		if !isString(fileData) || present(fileID) {
			return out, refuse(at(), "only a file given inline as file_data translates (a file_id lives in OpenAI's storage)")
		}
		out = append(out, `{"type":"file","file":{"file_data":`...)
		out = append(out, fileData...)
		if isString(filename) {
			out = append(out, `,"filename":`...)
			out = append(out, filename...)
		}
		return append(out, "}}"...), nil
	}
	return out, refuse(at()+".type", "must be input_text, input_image or input_file")
}

// assistantText gathers an assistant message's text into the assistant
// message being gathered.
func (w *itemWriter) assistantText(j int, content []byte) error {
	if len(w.calls) > 0 {
		w.flush() // text after tool calls starts the next assistant turn
	}
	w.gather(j)
	if isString(content) {
		if !isEmptyString(content) {
			w.texts = append(w.texts, content)
		}
		return nil
	}
	if !isArray(content) {
		return refuse(itemPath(j)+".content", "must be a string or an array of output_text parts")
	}
	for k, p := range jsonscan.Each(content) {
		pt, _ := readPart(p)
		switch {
		case (stringIs(pt.typ, "output_text") || stringIs(pt.typ, "input_text")) && isString(pt.text):
			if !isEmptyString(pt.text) {
				w.texts = append(w.texts, pt.text)
			}
		case stringIs(pt.typ, "refusal") && isString(pt.refusal):
			w.texts = append(w.texts, pt.refusal)
		default:
			return refuse(itemPath(j)+".content["+strconv.Itoa(k)+"]", "must be an output_text or refusal part")
		}
	}
	return nil
}

func (w *itemWriter) functionCall(j int, callID, name, args []byte) error {
	switch {
	case !isString(callID) || isEmptyString(callID):
		return refuse(itemPath(j)+".call_id", "must be a non-empty string")
	case !isString(name):
		return refuse(itemPath(j)+".name", "must be a string")
	case present(args) && !isString(args):
		return refuse(itemPath(j)+".arguments", "must be a string")
	}
	w.gather(j)
	if w.nCalls > 0 {
		w.calls = append(w.calls, ',')
	}
	w.nCalls++
	w.callSrc = append(w.callSrc, j)
	w.calls = append(w.calls, `{"id":`...)
	w.calls = append(w.calls, callID...)
	w.calls = append(w.calls, `,"type":"function","function":{"name":`...)
	w.calls = append(w.calls, name...)
	w.calls = append(w.calls, `,"arguments":`...)
	if isString(args) && !isEmptyString(args) {
		w.calls = append(w.calls, args...)
	} else {
		w.calls = append(w.calls, `"{}"`...) // no arguments: an empty object, never ""
	}
	w.calls = append(w.calls, "}}"...)
	return nil
}

func (w *itemWriter) functionOutput(j int, callID, output []byte) error {
	if !isString(callID) || isEmptyString(callID) {
		return refuse(itemPath(j)+".call_id", "must be a non-empty string")
	}
	w.begin("tool", j)
	switch {
	case isString(output):
		w.out = append(w.out, output...)
	case isArray(output):
		w.out = append(w.out, '[')
		for k, p := range jsonscan.Each(output) {
			pt, _ := readPart(p)
			if !stringIs(pt.typ, "input_text") || !isString(pt.text) {
				return refuse(itemPath(j)+".output["+strconv.Itoa(k)+"]", "only input_text parts translate in a function call's output")
			}
			if k > 0 {
				w.out = append(w.out, ',')
			}
			w.out = appendTextBlock(w.out, pt.text, nil)
		}
		w.out = append(w.out, ']')
	default:
		return refuse(itemPath(j)+".output", "must be a string or an array of input_text parts")
	}
	w.out = append(w.out, `,"tool_call_id":`...)
	w.out = append(w.out, callID...)
	w.out = append(w.out, '}')
	return nil
}
