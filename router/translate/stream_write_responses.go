package translate

// responsesWriter writes neutral events as a Responses event stream with
// the writer the pairwise streams share (respEvents): a block is an output
// item, a thinking block's signature its encrypted_content.
type responsesWriter struct {
	e      respEvents
	item   int // the open item (-1: none)
	open   bool
	calls  int
	args   bool
	finish *Event
	fin    Event
}

func (w *responsesWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.e.started && ev.Kind != EventError {
		dst = w.e.start(dst, ev.ID, ev.Model, w.e.a.Created)
	}
	var err error
	switch ev.Kind {
	case EventBlockStart:
		dst = w.blockStart(dst, &ev.Part)
	case EventDelta:
		if !w.open {
			return dst, false, nil
		}
		p := &ev.Part
		switch {
		case p.Kind == PartThinking && isString(p.Signature):
			w.e.items[w.item].encrypted = append([]byte(nil), p.Signature...)
		case p.Kind == PartToolCall && isString(p.Args) && !isEmptyString(p.Args):
			w.args = true
			dst, err = w.e.delta(dst, w.item, p.Args)
		case p.Kind != PartToolCall && isString(p.Text) && !isEmptyString(p.Text):
			dst, err = w.e.delta(dst, w.item, p.Text)
		}
	case EventBlockStop:
		if w.open {
			if w.e.items[w.item].kind == itemCall && !w.args {
				dst, err = w.e.delta(dst, w.item, []byte(`"{}"`))
			}
			dst, w.open = w.e.close(dst, w.item), false
		}
	case EventUsage:
		w.e.usage = ev.Usage
		if w.finish != nil {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.fin = *ev
		w.finish = &w.fin
		if w.e.usage.Known {
			return w.end(dst), true, nil
		}
	case EventError:
		typ := ev.Err.typ
		return w.e.errorEvent(dst, typ, nil, ev.Err.message), true, nil
	}
	return dst, false, err
}

// blockStart opens an output item for a block.
func (w *responsesWriter) blockStart(dst []byte, p *Part) []byte {
	w.open, w.args = true, false
	switch p.Kind {
	case PartToolCall:
		id := w.e.a.IDs.appendClientID(nil, p.ID, Responses, "call_", w.calls)
		w.calls++
		dst, w.item = w.e.open(dst, itemCall, id, append([]byte(nil), p.Name...))
	case PartThinking:
		dst, w.item = w.e.open(dst, itemReasoning, nil, nil)
	case PartRefusal:
		dst, w.item = w.e.open(dst, itemRefusal, nil, nil)
	default:
		dst, w.item = w.e.open(dst, itemMessage, nil, nil)
	}
	return dst
}

// end writes response.completed (or .incomplete).
func (w *responsesWriter) end(dst []byte) []byte {
	fin := FinishStop
	if w.finish != nil {
		fin = finishOr(w.finish.Finish)
	}
	return w.e.finish(dst, respStatusOf(fin))
}
