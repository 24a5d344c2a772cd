package translate

// responsesWriter writes neutral events as a Responses event stream
// (respEvents): a block is an output item, a thinking block's signature its
// encrypted_content. Items are found by their block, so an upstream's
// interleaved calls (each piece naming its call) stay apart. An answer
// refused without a word (Anthropic's stop_reason "refusal" after no text)
// gets one refusal item, so the client sees that it was refused; one that
// said something has said it. A unary answer says the same
// (encodeResponsesAnswer).
type responsesWriter struct {
	e     respEvents
	items []int // by event index: its item, or -1
	args  []bool
	said  bool // a message item got text
	// The finish, held until its usage comes.
	finished bool
	fin      Finish
	// held is 1 + the item whose block stopped last, not yet closed: its
	// output_item.done waits for the next event, since an answer cut by
	// its length limit is known only at the finish, and the item it was
	// cut in is then incomplete (as in a unary answer). 0: none.
	held int
}

// flush closes the held item.
func (w *responsesWriter) flush(dst []byte) []byte {
	if w.held > 0 {
		dst = w.e.close(dst, w.held-1)
		w.held = 0
	}
	return dst
}

// item is the item of event index i, or -1.
func (w *responsesWriter) item(i int) int {
	if i >= len(w.items) {
		return -1
	}
	return w.items[i]
}

func (w *responsesWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.e.started && ev.Kind != EventError {
		created := w.e.a.Created
		if ev.Created != 0 {
			created = ev.Created
		}
		dst = w.e.start(dst, ev.ID, ev.Model, created)
	}
	var err error
	if ev.Kind == EventBlockStart || ev.Kind == EventDelta || ev.Kind == EventBlockStop || ev.Kind == EventError {
		dst = w.flush(dst)
	}
	switch ev.Kind {
	case EventBlockStart:
		if w.item(ev.Index) < 0 {
			dst = w.blockStart(dst, ev.Index, &ev.Part)
		}
	case EventDelta:
		n := w.item(ev.Index)
		if n < 0 || w.e.items[n].done {
			return dst, false, nil
		}
		p := &ev.Part
		switch it := &w.e.items[n]; {
		case it.kind == itemReasoning && isString(p.Signature):
			it.encrypted = append(it.encrypted[:0], p.Signature...)
		case it.kind == itemCall && isString(p.Args) && !isEmptyString(p.Args):
			w.args[n] = true
			dst, err = w.e.delta(dst, n, p.Args)
		case it.kind != itemCall && isString(p.Text) && !isEmptyString(p.Text):
			if it.kind == itemMessage {
				w.said = true
			}
			dst, err = w.e.delta(dst, n, p.Text)
		}
	case EventBlockStop:
		if n := w.item(ev.Index); n >= 0 && !w.e.items[n].done {
			if w.e.items[n].kind == itemCall && !w.args[n] {
				dst, err = w.e.delta(dst, n, []byte(`"{}"`))
			}
			w.held = n + 1
		}
	case EventUsage:
		w.e.usage = ev.Usage
		if w.finished {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.finished, w.fin = true, ev.Finish
		if w.e.usage.Known {
			return w.end(dst), true, nil
		}
	case EventError:
		return w.e.errorEvent(dst, ev.Err.typ, ev.Err.code, ev.Err.message), true, nil
	}
	return dst, false, err
}

// blockStart opens an output item for block i.
func (w *responsesWriter) blockStart(dst []byte, i int, p *Part) []byte {
	for len(w.items) <= i {
		w.items = append(w.items, -1)
	}
	var n int
	switch p.Kind {
	case PartToolCall:
		calls := 0
		for _, it := range w.e.items {
			if it.kind == itemCall {
				calls++
			}
		}
		id := w.e.a.IDs.appendClientID(nil, p.ID, Responses, "call_", calls)
		name := p.Name
		if !isString(name) {
			name = []byte(`""`)
		}
		dst, n = w.e.open(dst, itemCall, id, append([]byte(nil), name...))
	case PartThinking:
		dst, n = w.e.open(dst, itemReasoning, nil, nil)
	case PartRefusal:
		dst, n = w.e.open(dst, itemRefusal, nil, nil)
	default:
		dst, n = w.e.open(dst, itemMessage, nil, nil)
	}
	w.items[i] = n
	for len(w.args) <= n {
		w.args = append(w.args, false)
	}
	return dst
}

// end writes response.completed (or .incomplete). A refusal stop after
// text already sent (which a stream cannot take back) is a content filter
// that stopped that text: incomplete, reason content_filter, as is the
// item it stopped (as OpenAI says a filtered answer, and as an answer cut
// by its length limit is). A refusal without a word gets a refusal item
// (when the upstream sent none) and completes.
func (w *responsesWriter) end(dst []byte) []byte {
	fin := finishOr(w.fin)
	if fin == FinishRefusal && w.said {
		fin = FinishContentFilter
	}
	if n := len(w.e.items) - 1; n >= 0 && !w.e.items[n].done && (fin == FinishLength || fin == FinishContextWindow || fin == FinishContentFilter) {
		w.e.items[n].incomplete = true // stopped in it
	}
	w.held = 0 // finish closes every item
	if fin == FinishRefusal && !w.refused() {
		var n int
		dst, n = w.e.open(dst, itemRefusal, nil, nil)
		dst, _ = w.e.delta(dst, n, []byte(refusalWithoutText))
	}
	return w.e.finish(dst, respStatusOf(fin))
}

// refused reports whether a refusal item went out.
func (w *responsesWriter) refused() bool {
	for _, it := range w.e.items {
		if it.kind == itemRefusal {
			return true
		}
	}
	return false
}
