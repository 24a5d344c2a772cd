package translate

// chatWriter writes neutral events as OpenAI chat completion chunks. Tool
// calls are numbered in the order their blocks start (each piece names its
// call, so calls may interleave); a call that got no arguments gets "{}",
// never "". Thinking has no Chat field and is left out. A refusal is the
// delta's refusal; an answer refused without a word (Anthropic's
// stop_reason "refusal" after no text) gets one, so the client sees that
// it was refused. The usage chunk the client asked for and [DONE] follow
// the finish, once the usage is in.
type chatWriter struct {
	a       Answer
	head    []byte // every chunk's start, up to its choices array
	started bool
	calls   int   // tool calls started
	callAt  []int // by event index: its call's number, or -1
	args    []bool
	said    bool // text or a refusal went out
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

// chunk writes a chunk whose delta is a piece of text or of a refusal
// (string tokens; nil: not this one).
func (w *chatWriter) chunk(dst []byte, text, refusal []byte) []byte {
	dst = append(dst, w.head...)
	if text != nil {
		dst = append(append(dst, `{"index":0,"delta":{"content":`...), text...)
	} else {
		dst = append(append(dst, `{"index":0,"delta":{"refusal":`...), refusal...)
	}
	return append(dst, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (w *chatWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.started && ev.Kind != EventError {
		dst = w.start(dst, ev)
	}
	switch ev.Kind {
	case EventBlockStart:
		if ev.Part.Kind == PartToolCall && w.call(ev.Index) < 0 {
			n := w.calls
			w.calls++
			w.callAt[ev.Index] = n
			w.args = append(w.args, false)
			dst = append(append(dst, w.head...), `{"index":0,"delta":{"tool_calls":[{"index":`...)
			dst = appendInt(dst, int64(n))
			dst = w.a.IDs.appendClientID(append(dst, `,"id":`...), ev.Part.ID, Chat, "call_", n)
			dst = append(append(dst, `,"type":"function","function":{"name":`...), ev.Part.Name...)
			dst = append(dst, `,"arguments":""}}]},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
		}
	case EventDelta:
		dst = w.delta(dst, ev)
	case EventBlockStop:
		if n := w.call(ev.Index); n >= 0 && !w.args[n] {
			dst = w.arguments(dst, n, []byte(`"{}"`))
		}
	case EventUsage:
		w.usage = ev.Usage
		if w.stopped {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.stopped = true
		for n, got := range w.args {
			if !got {
				dst = w.arguments(dst, n, []byte(`"{}"`))
			}
		}
		if ev.Finish == FinishRefusal && !w.said {
			dst = w.chunk(dst, nil, []byte(refusalWithoutText))
		}
		dst = append(append(dst, w.head...), `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
		dst = append(append(dst, finishWord(Chat, finishOr(ev.Finish))...), '"')
		if ev.Finish == FinishStopSequence && isString(ev.StopSequence) {
			// The matched stop sequence, as vLLM and SGLang report it:
			// OpenAI's finish_reason "stop" alone does not say.
			dst = append(append(dst, `,"stop_reason":`...), ev.StopSequence...)
		}
		dst = append(dst, `}]}`+"\n\n"...)
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

// call is the number of the call event index i started, or -1.
func (w *chatWriter) call(i int) int {
	for len(w.callAt) <= i {
		w.callAt = append(w.callAt, -1)
	}
	return w.callAt[i]
}

// delta writes a piece of text, a refusal or a call's arguments.
func (w *chatWriter) delta(dst []byte, ev *Event) []byte {
	p := &ev.Part
	switch {
	case p.Kind == PartText && isString(p.Text) && !isEmptyString(p.Text):
		w.said = true
		return w.chunk(dst, p.Text, nil)
	case p.Kind == PartRefusal && isString(p.Text) && !isEmptyString(p.Text):
		w.said = true
		return w.chunk(dst, nil, p.Text)
	case p.Kind == PartToolCall && isString(p.Args) && !isEmptyString(p.Args):
		if n := w.call(ev.Index); n >= 0 {
			return w.arguments(dst, n, p.Args)
		}
	}
	return dst
}

// arguments writes a piece of call n's arguments (a string token).
func (w *chatWriter) arguments(dst []byte, n int, piece []byte) []byte {
	w.args[n] = true
	dst = append(append(dst, w.head...), `{"index":0,"delta":{"tool_calls":[{"index":`...)
	dst = appendInt(dst, int64(n))
	dst = append(append(dst, `,"function":{"arguments":`...), piece...)
	return append(dst, `}}]},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
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
