package translate

// chatWriter writes neutral events as OpenAI chat completion chunks. Tool
// calls are numbered in the order their blocks start; a call that got no
// arguments gets "{}", never "". Thinking has no Chat field and is left
// out. The usage chunk the client asked for and [DONE] follow the
// finish, once the usage is in.
type chatWriter struct {
	a       Answer
	head    []byte // every chunk's start, up to its choices array
	started bool
	calls   int  // tool calls started
	args    bool // the open call got an arguments piece
	inCall  bool
	usage   Usage
	stopped bool // the finish chunk is out
}

func (w *chatWriter) start(dst []byte, ev *Event) []byte {
	w.started = true
	w.head = appendID(append(w.head[:0], `data: {"id":`...), ev.ID, "chatcmpl-translated", -1)
	w.head = appendInt(append(w.head, `,"object":"chat.completion.chunk","created":`...), w.a.Created)
	w.head = w.a.appendModel(append(w.head, `,"model":`...), ev.Model)
	w.head = append(w.head, `,"choices":[`...)
	dst = append(dst, w.head...)
	return append(dst, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// chunk writes a chunk whose delta is d.
func (w *chatWriter) chunk(dst []byte, d ...[]byte) []byte {
	dst = append(append(dst, w.head...), `{"index":0,"delta":{`...)
	for _, b := range d {
		dst = append(dst, b...)
	}
	return append(dst, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (w *chatWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.started && ev.Kind != EventError {
		dst = w.start(dst, ev)
	}
	switch ev.Kind {
	case EventBlockStart:
		if ev.Part.Kind == PartToolCall {
			w.inCall, w.args = true, false
			id := w.a.IDs.appendClientID(nil, ev.Part.ID, Chat, "call_", w.calls)
			dst = w.chunk(dst, []byte(`"tool_calls":[{"index":`), appendInt(nil, int64(w.calls)), []byte(`,"id":`), id,
				[]byte(`,"type":"function","function":{"name":`), ev.Part.Name, []byte(`,"arguments":""}}]`))
			w.calls++
		}
	case EventDelta:
		dst = w.delta(dst, &ev.Part)
	case EventBlockStop:
		if w.inCall && !w.args {
			dst = w.chunk(dst, []byte(`"tool_calls":[{"index":`), appendInt(nil, int64(w.calls-1)), []byte(`,"function":{"arguments":"{}"}}]`))
		}
		w.inCall = false
	case EventUsage:
		w.usage = ev.Usage
		if w.stopped {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.stopped = true
		dst = append(append(dst, w.head...), `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
		dst = append(append(dst, finishWord(Chat, finishOr(ev.Finish))...), `"}]}`+"\n\n"...)
		if w.usage.Known { // Gemini: the usage came with the finish
			return w.end(dst), true, nil
		}
	case EventError:
		dst = append(dst, "data: "...)
		typ := ev.Err.typ
		if typ == nil {
			typ = []byte("api_error")
		}
		dst = appendChatError(dst, ev.Err.message, typ, nil, nil)
		return append(dst, "}\n\n"...), true, nil
	}
	return dst, false, nil
}

// delta writes a piece of text, a refusal or a call's arguments.
func (w *chatWriter) delta(dst []byte, p *Part) []byte {
	switch {
	case p.Kind == PartText && isString(p.Text):
		return w.chunk(dst, []byte(`"content":`), p.Text)
	case p.Kind == PartRefusal && isString(p.Text):
		return w.chunk(dst, []byte(`"refusal":`), p.Text)
	case p.Kind == PartToolCall && isString(p.Args) && !isEmptyString(p.Args):
		w.args = true
		return w.chunk(dst, []byte(`"tool_calls":[{"index":`), appendInt(nil, int64(w.calls-1)), []byte(`,"function":{"arguments":`), p.Args, []byte(`}}]`))
	}
	return dst
}

// end writes the usage chunk when the client asked for it, and [DONE].
func (w *chatWriter) end(dst []byte) []byte {
	if w.a.IncludeUsage {
		dst = append(append(dst, w.head...), `],"usage":`...)
		if w.usage.Known {
			dst = appendChatUsage(dst, w.usage)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, "}\n\n"...)
	}
	return append(dst, "data: [DONE]\n\n"...)
}
