package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// messagesWriter writes neutral events as an Anthropic event stream:
// message_start, each block's start, deltas and stop, then message_delta
// (stop reason and usage) and message_stop once the finish and its usage
// are in. Blocks are numbered in the order they start.
//
// Anthropic's blocks come one at a time, each closed before the next
// starts, and a client takes a block's content_block_stop as its end. An
// upstream may have several open at once (an OpenAI-compatible server that
// interleaves parallel calls: both headers, then both argument streams), so
// a block is closed only once it is whole: a call's once its arguments are
// one complete JSON object, text or thinking once something else follows.
// A block that starts meanwhile is held, with what comes for it, in the
// order it came, and sent the moment the open block is whole (or at the
// finish): an upstream that sends its blocks one after the other streams
// through as it comes.
type messagesWriter struct {
	a       Answer
	started bool
	blocks  int // client blocks started
	calls   int
	live    int        // the open block's event index (-1: none)
	st      []msgBlock // by event index
	held    []int      // event indexes of the blocks held, in the order they started
	heldN   int        // bytes held
	usage   Usage
	// The finish, held until its usage comes.
	finished bool
	fin      Finish
	seq      []byte
	scratch  []byte
}

// msgBlock is what the writer knows of one upstream block.
type msgBlock struct {
	state uint8 // blockUnseen, blockHeld, blockLive, blockClosed
	kind  PartKind
	at    int // its client index, once started
	json  jsonDepth
	// What a held block has come with: its start (id and name copied) and
	// the raw contents of its pieces; stopped: its stop came too.
	id, name, data, sig []byte
	stopped             bool
}

const (
	blockUnseen = iota
	blockHeld
	blockLive
	blockClosed
)

func (w *messagesWriter) write(dst []byte, ev *Event) ([]byte, bool, error) {
	if !w.started && ev.Kind != EventError {
		w.started, w.live = true, -1
		dst = appendNamedEvent(dst, "message_start")
		dst = appendID(append(dst, `{"type":"message_start","message":{"id":`...), ev.ID, "msg_translated", -1)
		dst = append(dst, `,"type":"message","role":"assistant","model":`...)
		dst = append(w.a.appendModel(dst, ev.Model), `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
		dst = append(appendMessagesUsage(dst, ev.Usage), "}}\n\n"...)
	}
	var err error
	switch ev.Kind {
	case EventBlockStart:
		dst, err = w.blockStart(dst, ev)
	case EventDelta:
		dst, err = w.delta(dst, ev)
	case EventBlockStop:
		dst = w.blockStop(dst, ev.Index)
	case EventUsage:
		w.usage = ev.Usage
		if w.finished {
			return w.end(dst), true, nil
		}
	case EventFinish:
		w.finished, w.fin = true, ev.Finish
		w.seq = append(w.seq[:0], ev.StopSequence...) // the upstream's bytes are not kept past this call
		if dst, err = w.flushAll(dst); err != nil {
			return dst, false, err
		}
		if err = w.checkCalls(ev.Finish); err != nil {
			return dst, false, err
		}
		if w.usage.Known {
			return w.end(dst), true, nil
		}
	case EventError:
		dst = appendNamedEvent(dst, "error")
		dst = appendAnthropicError(dst, anthropicTypeForOpenAI(ev.Err.typ, ev.Err.code), ev.Err)
		return append(dst, "\n\n"...), true, nil
	}
	return dst, false, err
}

// block is event index i's state.
func (w *messagesWriter) block(i int) *msgBlock {
	for len(w.st) <= i {
		w.st = append(w.st, msgBlock{})
	}
	return &w.st[i]
}

// liveWhole reports whether the open block may be closed.
func (w *messagesWriter) liveWhole() bool {
	if w.live < 0 {
		return true
	}
	b := &w.st[w.live]
	return b.kind != PartToolCall || b.json.whole
}

func (w *messagesWriter) blockStart(dst []byte, ev *Event) ([]byte, error) {
	b := w.block(ev.Index)
	if b.state != blockUnseen {
		return dst, nil
	}
	b.kind = ev.Part.Kind
	if w.liveWhole() {
		dst = w.closeLive(dst)
		return w.open(dst, ev.Index, ev.Part.ID, ev.Part.Name), nil
	}
	if err := w.hold(len(ev.Part.ID) + len(ev.Part.Name)); err != nil {
		return dst, err
	}
	b.state = blockHeld
	b.id, b.name = append([]byte(nil), ev.Part.ID...), append([]byte(nil), ev.Part.Name...)
	w.held = append(w.held, ev.Index)
	return dst, nil
}

// delta writes a piece of a block: text, thinking, a signature or a piece
// of a call's input (each a string token).
func (w *messagesWriter) delta(dst []byte, ev *Event) ([]byte, error) {
	if ev.Index >= len(w.st) {
		return dst, nil
	}
	b := &w.st[ev.Index]
	p := &ev.Part
	tok := p.Text
	if b.kind == PartToolCall {
		tok = p.Args
		if !isString(tok) || isEmptyString(tok) {
			return dst, nil
		}
		w.scratch = jsonscan.AppendUnquoted(w.scratch[:0], tok)
		some := b.json.some
		if !b.json.feed(w.scratch) || (b.state == blockClosed && !b.json.complete && b.json.some != some) {
			return dst, errArgsAfterWhole
		}
	}
	switch b.state {
	case blockLive:
		if b.kind == PartThinking && isString(p.Signature) {
			dst = w.appendDelta(dst, b.at, "signature_delta", "signature", p.Signature)
		}
		if !isString(tok) || (b.kind == PartThinking && isEmptyString(tok)) {
			return dst, nil
		}
		switch b.kind {
		case PartToolCall:
			dst = w.appendDelta(dst, b.at, "input_json_delta", "partial_json", tok)
			return w.advance(dst), nil
		case PartThinking:
			return w.appendDelta(dst, b.at, "thinking_delta", "thinking", tok), nil
		}
		return w.appendDelta(dst, b.at, "text_delta", "text", tok), nil
	case blockHeld:
		if b.kind == PartThinking && isString(p.Signature) {
			b.sig = append(b.sig[:0], p.Signature...)
		}
		if isString(tok) {
			if err := w.hold(len(tok) - 2); err != nil {
				return dst, err
			}
			b.data = append(b.data, tok[1:len(tok)-1]...)
		}
	}
	// A closed call gets only whitespace (checked above), which changes
	// nothing.
	return dst, nil
}

func (w *messagesWriter) hold(n int) error {
	w.heldN += n
	if w.heldN > maxPending {
		return errHeldTooLarge
	}
	return nil
}

func (w *messagesWriter) blockStop(dst []byte, i int) []byte {
	if i >= len(w.st) {
		return dst
	}
	switch b := &w.st[i]; b.state {
	case blockLive:
		b.json.whole = true // whole or not, it has ended: what is held may go
		dst = w.closeLive(dst)
		return w.advance(dst)
	case blockHeld:
		b.stopped = true
	}
	return dst
}

// advance sends held blocks while the open one is whole.
func (w *messagesWriter) advance(dst []byte) []byte {
	for len(w.held) > 0 && w.liveWhole() {
		i := w.held[0]
		w.held = w.held[1:]
		dst = w.closeLive(dst)
		dst = w.startHeld(dst, i)
	}
	if len(w.held) == 0 {
		w.held, w.heldN = w.held[:0], 0
	}
	return dst
}

// flushAll ends every block, the held ones included: the answer is over.
func (w *messagesWriter) flushAll(dst []byte) ([]byte, error) {
	for _, i := range w.held {
		dst = w.closeLive(dst)
		dst = w.startHeld(dst, i)
	}
	w.held, w.heldN = w.held[:0], 0
	return w.closeLive(dst), nil
}

// startHeld opens a held block and sends what it holds.
func (w *messagesWriter) startHeld(dst []byte, i int) []byte {
	b := &w.st[i]
	sig := b.sig
	dst = w.open(dst, i, b.id, b.name)
	if len(b.data) > 0 {
		tok := quoted(b.data)
		switch b.kind {
		case PartToolCall:
			dst = w.appendDelta(dst, b.at, "input_json_delta", "partial_json", tok)
		case PartThinking:
			dst = w.appendDelta(dst, b.at, "thinking_delta", "thinking", tok)
		default:
			dst = w.appendDelta(dst, b.at, "text_delta", "text", tok)
		}
	}
	if len(sig) > 0 {
		dst = w.appendDelta(dst, b.at, "signature_delta", "signature", sig)
	}
	stopped := b.stopped
	b.id, b.name, b.data, b.sig = nil, nil, nil, nil
	if stopped {
		b.json.whole = true
	}
	return dst
}

// quoted makes raw string contents a string token again.
func quoted(contents []byte) []byte {
	tok := make([]byte, 0, len(contents)+2)
	tok = append(tok, '"')
	tok = append(tok, contents...)
	return append(tok, '"')
}

// open writes content_block_start for event index i.
func (w *messagesWriter) open(dst []byte, i int, id, name []byte) []byte {
	b := &w.st[i]
	b.state, b.at = blockLive, w.blocks
	w.live = i
	w.blocks++
	dst = appendNamedEvent(dst, "content_block_start")
	dst = appendInt(append(dst, `{"type":"content_block_start","index":`...), int64(b.at))
	switch b.kind {
	case PartToolCall:
		dst = w.a.IDs.appendClientID(append(dst, `,"content_block":{"type":"tool_use","id":`...), id, Messages, "toolu_", w.calls)
		if !isString(name) {
			name = []byte(`""`)
		}
		dst = append(append(dst, `,"name":`...), name...)
		dst = append(dst, `,"input":{}}`...)
		w.calls++
	case PartThinking:
		dst = append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}`...)
	default:
		dst = append(dst, `,"content_block":{"type":"text","text":""}`...)
	}
	return append(dst, "}\n\n"...)
}

// closeLive writes content_block_stop for the open block.
func (w *messagesWriter) closeLive(dst []byte) []byte {
	if w.live < 0 {
		return dst
	}
	b := &w.st[w.live]
	b.state = blockClosed
	w.live = -1
	dst = appendNamedEvent(dst, "content_block_stop")
	dst = appendInt(append(dst, `{"type":"content_block_stop","index":`...), int64(b.at))
	return append(dst, "}\n\n"...)
}

// appendDelta writes content_block_delta of type typ, whose member name
// holds v.
func (w *messagesWriter) appendDelta(dst []byte, at int, typ, name string, v []byte) []byte {
	dst = appendNamedEvent(dst, "content_block_delta")
	dst = appendInt(append(dst, `{"type":"content_block_delta","index":`...), int64(at))
	dst = append(append(dst, `,"delta":{"type":"`...), typ...)
	dst = append(append(dst, `","`...), name...)
	dst = append(append(dst, `":`...), v...)
	return append(dst, "}}\n\n"...)
}

// errArgsNotObject: a call's arguments ended without being one JSON object.
var errArgsNotObject = invalidUpstream("tool call arguments are not a JSON object")

// errArgsAfterWhole: a call's arguments went on after a complete object.
var errArgsAfterWhole = invalidUpstream("tool call arguments continue after a complete JSON object")

// errHeldTooLarge: more held for later than any answer needs.
var errHeldTooLarge = invalidUpstream("interleaved content larger than any answer")

// checkCalls reports a call whose arguments, now over, are something but
// not one JSON object; unless cut by the length limit, which leaves
// arguments cut too.
func (w *messagesWriter) checkCalls(fin Finish) error {
	if fin == FinishLength || fin == FinishContextWindow {
		return nil
	}
	for i := range w.st {
		if j := &w.st[i].json; w.st[i].kind == PartToolCall && j.some && !j.complete {
			return errArgsNotObject
		}
	}
	return nil
}

// end writes message_delta and message_stop.
func (w *messagesWriter) end(dst []byte) []byte {
	fin, seq := finishOr(w.fin), w.seq
	if !w.finished {
		dst, _ = w.flushAll(dst)
	}
	dst = appendNamedEvent(dst, "message_delta")
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":"`...)
	dst = append(append(dst, finishWord(Messages, fin)...), `","stop_sequence":`...)
	if fin == FinishStopSequence && isString(seq) {
		dst = append(dst, seq...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = appendMessagesUsage(append(dst, `},"usage":`...), w.usage)
	dst = append(dst, "}\n\n"...)
	dst = appendNamedEvent(dst, "message_stop")
	return append(dst, `{"type":"message_stop"}`+"\n\n"...)
}

// jsonDepth follows JSON text, one piece at a time, far enough to know
// when one complete object or array has gone by.
type jsonDepth struct {
	depth      int32
	inStr, esc bool
	begun      bool
	// whole: the block may be closed (its value is complete, or the
	// upstream closed it); complete: its value is.
	whole, complete bool
	some            bool // a byte other than whitespace came
}

// feed reads a piece; false when something other than whitespace follows
// the complete value.
func (j *jsonDepth) feed(b []byte) bool {
	for _, c := range b {
		space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		if !space {
			j.some = true
		}
		switch {
		case j.complete:
			if !space {
				return false
			}
		case j.inStr:
			switch {
			case j.esc:
				j.esc = false
			case c == '\\':
				j.esc = true
			case c == '"':
				j.inStr = false
			}
		case c == '"':
			j.inStr = true
		case c == '{' || c == '[':
			j.depth++
			j.begun = true
		case c == '}' || c == ']':
			j.depth--
			if j.begun && j.depth <= 0 {
				j.whole, j.complete = true, true
			}
		}
	}
	return true
}
