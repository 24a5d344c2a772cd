package translate

// respEvents writes a Responses API event stream, the part the stream
// translators for Responses clients share. Every event carries its
// sequence_number; items open with response.output_item.added (and their
// part's .added event), grow by deltas tagged with their output_index, and
// end with the .done events an SDK assembles the final response from:
//
//	response.created, response.in_progress
//	response.output_item.added, response.content_part.added (message)
//	response.output_text.delta ... response.output_text.done (message)
//	response.refusal.delta ... response.refusal.done (refusal)
//	response.function_call_arguments.delta ... .done (function_call)
//	response.reasoning_summary_part.added, response.reasoning_summary_text.delta ... .done,
//	response.reasoning_summary_part.done (reasoning)
//	response.content_part.done, response.output_item.done
//	response.completed (or response.incomplete, with incomplete_details)
//
// The text of every item is kept until the end: the .done events and
// response.completed repeat it whole.
type respEvents struct {
	a       Answer // immutable after construction
	head    respHead
	items   []respItem
	seq     int64
	started bool
	usage   Usage
	held    int // bytes of item text kept
}

// event starts an event: its name, and its data up to its sequence number.
func (e *respEvents) event(dst []byte, name string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, name...)
	dst = append(dst, `","sequence_number":`...)
	dst = appendInt(dst, e.seq)
	e.seq++
	return dst
}

const eventEnd = "}\n\n"

// start writes response.created and response.in_progress.
func (e *respEvents) start(dst, id, model []byte, created int64) []byte {
	e.started = true
	e.head = newRespHead(&e.a, id, model, created)
	for _, name := range [...]string{"response.created", "response.in_progress"} {
		dst = e.event(dst, name)
		dst = append(dst, `,"response":`...)
		dst = appendResponse(dst, &e.head, nil, false, respStatus{}, Usage{})
		dst = append(dst, eventEnd...)
	}
	return dst
}

// itemRef writes an event's item_id and output_index.
func (e *respEvents) itemRef(dst []byte, n int) []byte {
	dst = append(dst, `,"item_id":"`...)
	dst = append(dst, e.items[n].id...)
	dst = append(dst, `","output_index":`...)
	return appendInt(dst, int64(n))
}

// open adds an output item of kind (a function_call's call_id and name are
// string tokens) and writes the events that open it; n is its index.
func (e *respEvents) open(dst []byte, kind int, callID, name []byte) (out []byte, n int) {
	n = len(e.items)
	e.items = append(e.items, respItem{kind: kind, id: e.head.itemID(kind, n), callID: callID, name: name})
	dst = e.event(dst, "response.output_item.added")
	dst = append(dst, `,"output_index":`...)
	dst = appendInt(dst, int64(n))
	dst = append(dst, `,"item":`...)
	dst = appendItem(dst, &e.items[n], false)
	dst = append(dst, eventEnd...)
	switch kind {
	case itemMessage, itemRefusal:
		dst = e.event(dst, "response.content_part.added")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"content_index":0,"part":`...)
		dst = appendPart(dst, &respItem{kind: kind})
		dst = append(dst, eventEnd...)
	case itemReasoning:
		dst = e.event(dst, "response.reasoning_summary_part.added")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
		dst = append(dst, eventEnd...)
	}
	return dst, n
}

// delta adds a piece (a string token) to item n.
func (e *respEvents) delta(dst []byte, n int, tok []byte) ([]byte, error) {
	it := &e.items[n]
	contents := tok[1 : len(tok)-1]
	if e.held += len(contents); e.held > maxPending*4 {
		return dst, errHeldTooLarge
	}
	it.text = append(it.text, contents...)
	switch it.kind {
	case itemMessage:
		dst = e.event(dst, "response.output_text.delta")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"content_index":0,"delta":`...)
		dst = append(dst, tok...)
		dst = append(dst, `,"logprobs":[]`...)
	case itemRefusal:
		dst = e.event(dst, "response.refusal.delta")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"content_index":0,"delta":`...)
		dst = append(dst, tok...)
	case itemCall:
		dst = e.event(dst, "response.function_call_arguments.delta")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"delta":`...)
		dst = append(dst, tok...)
	case itemReasoning:
		dst = e.event(dst, "response.reasoning_summary_text.delta")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"summary_index":0,"delta":`...)
		dst = append(dst, tok...)
	}
	return append(dst, eventEnd...), nil
}

// close writes the events that end item n, once.
func (e *respEvents) close(dst []byte, n int) []byte {
	it := &e.items[n]
	if it.done {
		return dst
	}
	it.done = true
	switch it.kind {
	case itemMessage, itemRefusal:
		if it.kind == itemMessage {
			dst = e.event(dst, "response.output_text.done")
			dst = e.itemRef(dst, n)
			dst = append(dst, `,"content_index":0,"text":"`...)
			dst = append(dst, it.text...)
			dst = append(dst, `","logprobs":[]`...)
		} else {
			dst = e.event(dst, "response.refusal.done")
			dst = e.itemRef(dst, n)
			dst = append(dst, `,"content_index":0,"refusal":"`...)
			dst = append(dst, it.text...)
			dst = append(dst, '"')
		}
		dst = append(dst, eventEnd...)
		dst = e.event(dst, "response.content_part.done")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"content_index":0,"part":`...)
		dst = appendPart(dst, it)
	case itemCall:
		dst = e.event(dst, "response.function_call_arguments.done")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"arguments":"`...)
		dst = appendArgs(dst, it.text)
		dst = append(dst, '"')
	case itemReasoning:
		dst = e.event(dst, "response.reasoning_summary_text.done")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"summary_index":0,"text":"`...)
		dst = append(dst, it.text...)
		dst = append(dst, '"')
		dst = append(dst, eventEnd...)
		dst = e.event(dst, "response.reasoning_summary_part.done")
		dst = e.itemRef(dst, n)
		dst = append(dst, `,"summary_index":0,"part":`...)
		dst = appendPart(dst, it)
	}
	dst = append(dst, eventEnd...)
	dst = e.event(dst, "response.output_item.done")
	dst = append(dst, `,"output_index":`...)
	dst = appendInt(dst, int64(n))
	dst = append(dst, `,"item":`...)
	dst = appendItem(dst, it, true)
	return append(dst, eventEnd...)
}

// finish ends every open item and writes response.completed, or
// response.incomplete when st says the answer was cut.
func (e *respEvents) finish(dst []byte, st respStatus) []byte {
	for n := range e.items {
		dst = e.close(dst, n)
	}
	name := "response.completed"
	if st.incomplete != "" {
		name = "response.incomplete"
	}
	dst = e.event(dst, name)
	dst = append(dst, `,"response":`...)
	dst = appendResponse(dst, &e.head, e.items, true, st, e.usage)
	return append(dst, eventEnd...)
}

// errorEvent writes the upstream's error as a Responses error event: the
// type, code, message and param the API documents, and the same as an
// error object, which is what the OpenAI SDKs raise an error on. message
// is a string token; typ and code raw string contents (nil: none).
func (e *respEvents) errorEvent(dst, typ, code, message []byte) []byte {
	if typ == nil {
		typ = []byte("api_error")
	}
	dst = e.event(dst, "error")
	dst = append(dst, `,"code":`...)
	dst = appendCode(dst, code)
	dst = append(dst, `,"message":`...)
	dst = append(dst, message...)
	dst = append(dst, `,"param":null,`...)
	obj := appendChatError(nil, message, typ, nil, code) // {"error":{...}
	dst = append(dst, obj[1:]...)
	return append(dst, eventEnd...)
}

func appendCode(dst, code []byte) []byte {
	if code == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = append(dst, code...)
	return append(dst, '"')
}
