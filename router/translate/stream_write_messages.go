package translate

// messagesWriter writes neutral events as an Anthropic event stream:
// message_start, each block's start, deltas and stop, then message_delta
// (stop reason and usage) and message_stop once the finish and its usage
// are in. Blocks are numbered in the order they start.
type messagesWriter struct {
	a       Answer
	started bool
	blocks  int // blocks started
	kind    PartKind
	calls   int
	usage   Usage
	finish  *Event // the finish, held until its usage comes
	fin     Event
}

func (w *messagesWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.started && ev.Kind != EventError {
		w.started = true
		dst = appendNamedEvent(dst, "message_start")
		dst = appendID(append(dst, `{"type":"message_start","message":{"id":`...), ev.ID, "msg_translated", -1)
		dst = append(dst, `,"type":"message","role":"assistant","model":`...)
		dst = append(w.a.appendModel(dst, ev.Model), `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
		dst = append(appendMessagesUsage(dst, ev.Usage), "}}\n\n"...)
	}
	switch ev.Kind {
	case EventBlockStart:
		dst = w.blockStart(dst, &ev.Part)
	case EventDelta:
		dst = w.delta(dst, &ev.Part)
	case EventBlockStop:
		if w.kind != 0 {
			dst = appendNamedEvent(dst, "content_block_stop")
			dst = appendInt(append(dst, `{"type":"content_block_stop","index":`...), int64(w.blocks-1))
			dst = append(dst, "}\n\n"...)
			w.kind = 0
		}
	case EventUsage:
		w.usage = ev.Usage
		if w.finish != nil {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.fin = *ev
		w.finish = &w.fin
		if w.usage.Known {
			return w.end(dst), true, nil
		}
	case EventError:
		dst = appendNamedEvent(dst, "error")
		typ := "api_error"
		if isAnthropicErrorType(ev.Err.typ) {
			typ = string(ev.Err.typ)
		}
		dst = appendAnthropicError(dst, typ, ev.Err)
		return append(dst, "\n\n"...), true, nil
	}
	return dst, false, nil
}

// blockStart writes content_block_start.
func (w *messagesWriter) blockStart(dst []byte, p *Part) []byte {
	w.kind = p.Kind
	dst = appendNamedEvent(dst, "content_block_start")
	dst = appendInt(append(dst, `{"type":"content_block_start","index":`...), int64(w.blocks))
	w.blocks++
	switch p.Kind {
	case PartToolCall:
		dst = w.a.IDs.appendClientID(append(dst, `,"content_block":{"type":"tool_use","id":`...), p.ID, Messages, "toolu_", w.calls)
		dst = append(append(dst, `,"name":`...), p.Name...)
		dst = append(dst, `,"input":{}}`...)
		w.calls++
	case PartThinking:
		dst = append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}`...)
	default:
		dst = append(dst, `,"content_block":{"type":"text","text":""}`...)
	}
	return append(dst, "}\n\n"...)
}

// delta writes content_block_delta: text, thinking, a signature or a piece
// of a call's input.
func (w *messagesWriter) delta(dst []byte, p *Part) []byte {
	var typ, name string
	var v []byte
	switch {
	case p.Kind == PartToolCall && isString(p.Args) && !isEmptyString(p.Args):
		typ, name, v = "input_json_delta", "partial_json", p.Args
	case p.Kind == PartThinking && isString(p.Signature):
		typ, name, v = "signature_delta", "signature", p.Signature
	case p.Kind == PartThinking && isString(p.Text):
		typ, name, v = "thinking_delta", "thinking", p.Text
	case isString(p.Text):
		typ, name, v = "text_delta", "text", p.Text
	default:
		return dst
	}
	dst = appendNamedEvent(dst, "content_block_delta")
	dst = appendInt(append(dst, `{"type":"content_block_delta","index":`...), int64(w.blocks-1))
	dst = append(append(dst, `,"delta":{"type":"`...), typ...)
	dst = append(append(dst, `","`...), name...)
	dst = append(append(dst, `":`...), v...)
	return append(dst, "}}\n\n"...)
}

// end writes message_delta and message_stop.
func (w *messagesWriter) end(dst []byte) []byte {
	fin := FinishStop
	var seq []byte
	if w.finish != nil {
		fin, seq = finishOr(w.finish.Finish), w.finish.StopSequence
	}
	dst = appendNamedEvent(dst, "message_delta")
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":"`...)
	dst = append(append(dst, finishWord(Messages, fin)...), `","stop_sequence":`...)
	if isString(seq) {
		dst = append(dst, seq...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = appendMessagesUsage(append(dst, `},"usage":`...), w.usage)
	dst = append(dst, "}\n\n"...)
	dst = appendNamedEvent(dst, "message_stop")
	return append(dst, `{"type":"message_stop"}`+"\n\n"...)
}
