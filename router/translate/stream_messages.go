package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// messagesDecoder reads an Anthropic event stream into neutral events:
// message_start opens the answer (and carries the input usage), each
// content block's start, deltas and stop are a block's, message_delta
// carries the stop reason and the output usage, message_stop ends the
// stream (ModelStream reads it). Text, thinking and tool_use blocks are
// read; other blocks (redacted thinking, server tools' blocks) and deltas
// (citations) have no counterpart in the other formats and are left out.
type messagesDecoder struct {
	started  bool
	finished bool
	usage    Usage
	blocks   []PartKind // by block index: the open block's kind (0: none, or one left out)
	known    []bool     // by block index: the block started (left out or not)
}

// event appends the neutral events of one event's data; end reports
// message_stop.
func (d *messagesDecoder) event(s *ModelStream, dst []byte, data []byte) (_ []byte, end bool, _ error) {
	var e messagesEvent
	if !e.read(data) {
		return dst, false, invalidUpstream("event data is not a JSON object")
	}
	if stringIs(e.typ, "error") {
		return s.put(dst, &Event{Kind: EventError, Err: messagesStreamError(e.err)}), false, nil
	}
	if !d.started {
		d.started = true
		id, model := e.opening()
		dst = s.put(dst, &Event{Kind: EventStart, ID: id, Model: model})
	}
	var err error
	switch {
	case stringIs(e.typ, "message_start"):
		if u := messagesUsage(d.usage, jsonscan.Field(e.message, "usage")); u.Known {
			d.usage = u
			dst = s.put(dst, &Event{Kind: EventUsage, Usage: u})
		}
	case stringIs(e.typ, "content_block_start"):
		dst, err = d.blockStart(s, dst, e.index, e.block)
	case stringIs(e.typ, "content_block_delta"):
		dst, err = d.blockDelta(s, dst, e.index, e.delta)
	case stringIs(e.typ, "content_block_stop"):
		if i, ok := intValue(e.index); ok && i >= 0 && int(i) < len(d.blocks) && d.blocks[i] != 0 {
			d.blocks[i] = 0
			dst = s.put(dst, &Event{Kind: EventBlockStop, Index: int(i)})
		}
	case stringIs(e.typ, "message_delta"):
		if u := messagesUsage(d.usage, e.usage); u.Known {
			d.usage = u
			dst = s.put(dst, &Event{Kind: EventUsage, Usage: u})
		}
		if !d.finished {
			d.finished = true
			dst = d.stopAll(s, dst)
			var seq []byte
			if s := jsonscan.Field(e.delta, "stop_sequence"); isString(s) {
				seq = s
			}
			dst = s.put(dst, &Event{Kind: EventFinish, Finish: finishOf(Messages, jsonscan.Field(e.delta, "stop_reason")), StopSequence: seq})
		}
	case stringIs(e.typ, "message_stop"):
		return dst, true, nil
	}
	return dst, false, err
}

// blockStart reads content_block_start.
func (d *messagesDecoder) blockStart(s *ModelStream, dst []byte, index, block []byte) ([]byte, error) {
	i, ok := intValue(index)
	if !ok || i < 0 || i > maxBlocks {
		return dst, invalidUpstream("content_block_start without a valid index")
	}
	for int64(len(d.blocks)) <= i {
		d.blocks = append(d.blocks, 0)
		d.known = append(d.known, false)
	}
	d.known[i] = true
	var typ, text, id, name, input []byte
	m := jsonscan.MembersOf(block)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = v
		case "text", "thinking":
			text = v
		case "id":
			id = v
		case "name":
			name = v
		case "input":
			input = v
		}
	}
	at := int(i)
	switch {
	case stringIs(typ, "text"), stringIs(typ, "thinking"):
		kind := PartText
		if stringIs(typ, "thinking") {
			kind = PartThinking
		}
		d.blocks[i] = kind
		dst = s.put(dst, &Event{Kind: EventBlockStart, Index: at, Part: Part{Kind: kind}})
		if isString(text) && !isEmptyString(text) {
			dst = s.put(dst, &Event{Kind: EventDelta, Index: at, Part: Part{Kind: kind, Text: text}})
		}
	case stringIs(typ, "tool_use"):
		if !isString(name) {
			return dst, invalidUpstream("tool_use block without a name")
		}
		if present(input) && !isObject(input) {
			return dst, invalidUpstream("tool_use input is not a JSON object")
		}
		d.blocks[i] = PartToolCall
		dst = s.put(dst, &Event{Kind: EventBlockStart, Index: at, Part: Part{Kind: PartToolCall, ID: id, Name: name}})
		// The input is {} at the start of a streamed block and arrives in
		// pieces; a server that sends it whole here has it as one piece.
		if isObject(input) && !emptyObject(input) {
			args := jsonscan.AppendString(nil, input)
			dst = s.put(dst, &Event{Kind: EventDelta, Index: at, Part: Part{Kind: PartToolCall, Args: args, ArgsQuoted: true}})
		}
	}
	return dst, nil
}

func emptyObject(v []byte) bool {
	m := jsonscan.MembersOf(v)
	_, _, ok := m.Next()
	return !ok
}

// blockDelta reads content_block_delta: text, a piece of a call's input,
// thinking or its signature, each for a block of its kind.
func (d *messagesDecoder) blockDelta(s *ModelStream, dst []byte, index, delta []byte) ([]byte, error) {
	i, ok := intValue(index)
	if !ok || i < 0 || i > maxBlocks {
		return dst, invalidUpstream("a delta without a valid index")
	}
	var typ, text, partial, thinking, signature []byte
	m := jsonscan.MembersOf(delta)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = v
		case "text":
			text = v
		case "partial_json":
			partial = v
		case "thinking":
			thinking = v
		case "signature":
			signature = v
		}
	}
	if int(i) >= len(d.blocks) || !d.known[i] {
		// A text or thinking delta for a block that did not start starts
		// it (Converse's blocks start so); a call cannot: it has no name.
		kind := PartText
		switch {
		case stringIs(typ, "thinking_delta"), stringIs(typ, "signature_delta"):
			kind = PartThinking
		case stringIs(typ, "input_json_delta"):
			return dst, invalidUpstream("input_json_delta for a block that did not start")
		case !stringIs(typ, "text_delta"):
			return dst, nil
		}
		var err error
		if dst, err = d.blockStart(s, dst, index, nil); err != nil {
			return dst, err
		}
		d.blocks[i] = kind
		dst = s.put(dst, &Event{Kind: EventBlockStart, Index: int(i), Part: Part{Kind: kind}})
	}
	kind := d.blocks[i]
	p := Part{Kind: kind}
	switch {
	case stringIs(typ, "text_delta"):
		if kind != PartText || !isString(text) {
			return dst, invalidUpstream("text_delta for a block that is not text, or without text")
		}
		p.Text = text
	case stringIs(typ, "input_json_delta"):
		if kind != PartToolCall || !isString(partial) {
			return dst, invalidUpstream("input_json_delta for a block that is not a tool_use, or without partial_json")
		}
		p.Args, p.ArgsQuoted = partial, true
	case stringIs(typ, "thinking_delta"):
		if kind != PartThinking || !isString(thinking) {
			return dst, invalidUpstream("thinking_delta for a block that is not thinking, or without thinking")
		}
		p.Text = thinking
	case stringIs(typ, "signature_delta"):
		if kind != PartThinking || !isString(signature) {
			return dst, invalidUpstream("signature_delta for a block that is not thinking, or without signature")
		}
		p.Signature = signature
	default:
		return dst, nil // citations_delta and the like
	}
	if isEmptyString(p.Text) || isEmptyString(p.Args) {
		return dst, nil
	}
	return s.put(dst, &Event{Kind: EventDelta, Index: int(i), Part: p}), nil
}

// stopAll closes every block still open: a message_delta ends them.
func (d *messagesDecoder) stopAll(s *ModelStream, dst []byte) []byte {
	for i, k := range d.blocks {
		if k != 0 {
			d.blocks[i] = 0
			dst = s.put(dst, &Event{Kind: EventBlockStop, Index: i})
		}
	}
	return dst
}
