package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// chatDecoder reads an OpenAI chat completion stream's chunks into neutral
// events. A chunk's delta holds text (content), a refusal, reasoning
// (reasoning_content or reasoning, which OpenAI-compatible servers send)
// and pieces of tool calls; each kind is a block. A text, refusal or
// reasoning block ends when a block of another kind starts; a call's block
// stays open to the finish, since servers may interleave the arguments of
// parallel calls (each piece names its call's index). The finish_reason
// closes every block; the usage-only chunk follows it; [DONE] ends the
// stream (ModelStream reads it).
type chatDecoder struct {
	started  bool
	finished bool
	// reasoning keeps reasoning blocks: only a Responses client can say
	// them (an Anthropic thinking block needs a signature no OpenAI
	// upstream gives; Chat has no field).
	reasoning bool
	text      PartKind // the open text, refusal or reasoning block (0: none)
	textAt    int      // its index
	blocks    int      // blocks started: the next block's index
	calls     []int    // by tool call index: its block, or -1
	refused   bool     // a refusal came
	order     []int    // scratch: the blocks the finish closes
}

// chunkDelta holds what a chunk's first choice says.
type chunkDelta struct {
	content, refusal, reasoning, toolCalls, finish, stopReason []byte
}

// chunk appends the neutral events of one chunk's data.
func (d *chatDecoder) chunk(s *ModelStream, dst []byte, data []byte) ([]byte, error) {
	var c chatAnswer
	if !c.read(data) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if present(c.err) {
		return s.put(dst, &Event{Kind: EventError, Err: chatStreamError(c.err)}), nil
	}
	if !d.started {
		d.started = true
		created, _ := intValue(c.created)
		dst = s.put(dst, &Event{Kind: EventStart, ID: c.id, Model: c.model, Created: created})
	}
	if u := chatUsage(c.usage); u.Known {
		dst = s.put(dst, &Event{Kind: EventUsage, Usage: u})
	}
	if !present(c.choices) {
		return dst, nil
	}
	if !isArray(c.choices) {
		return dst, invalidUpstream("choices is not an array")
	}
	if d.finished {
		return dst, nil // nothing follows the finish but the usage
	}
	var dl chunkDelta
	ok, err := readChunkChoice(c.choices, &dl)
	if !ok || err != nil {
		return dst, err // the usage-only chunk has no choice
	}
	if isString(dl.reasoning) && !isEmptyString(dl.reasoning) && d.reasoning {
		dst = d.textPiece(s, dst, PartThinking, dl.reasoning)
	}
	if isString(dl.content) && !isEmptyString(dl.content) {
		dst = d.textPiece(s, dst, PartText, dl.content)
	}
	if isString(dl.refusal) && !isEmptyString(dl.refusal) {
		d.refused = true
		dst = d.textPiece(s, dst, PartRefusal, dl.refusal)
	}
	if present(dl.toolCalls) {
		for j, tc := range jsonscan.Each(dl.toolCalls) {
			if dst, err = d.toolCall(s, dst, tc, j); err != nil {
				return dst, err
			}
		}
	}
	switch {
	case isString(dl.finish) && !d.finished:
		d.finished = true
		dst = d.stopAll(s, dst)
		fin := finishOf(Chat, dl.finish)
		var seq []byte
		switch {
		case fin == FinishStop && d.refused:
			fin = FinishRefusal
		case fin == FinishStop && isString(dl.stopReason):
			fin, seq = FinishStopSequence, dl.stopReason // vLLM, SGLang: the matched stop sequence
		}
		dst = s.put(dst, &Event{Kind: EventFinish, Finish: fin, StopSequence: seq})
	case present(dl.finish) && !isString(dl.finish):
		return dst, invalidUpstream("finish_reason is not a string")
	}
	return dst, nil
}

// readChunkChoice reads the choice with index 0, or the first one listed
// (its delta, finish_reason and stop_reason), each choice's members read
// once; false: there is none.
func readChunkChoice(choices []byte, d *chunkDelta) (bool, error) {
	var delta []byte
	found := false
	e := jsonscan.ElementsOf(choices)
	for v, more := e.Next(); more; v, more = e.Next() {
		if !isObject(v) {
			continue
		}
		var this chunkDelta
		var thisDelta []byte
		zero := false
		m := jsonscan.MembersOf(v)
		for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
			switch string(k) {
			case "index":
				zero = string(val) == "0"
			case "delta", "message":
				thisDelta = val
			case "finish_reason":
				this.finish = val
			case "stop_reason":
				this.stopReason = val
			}
		}
		if !found || zero {
			*d, delta, found = this, thisDelta, true
		}
		if zero {
			break
		}
	}
	if !found || !present(delta) {
		return found, nil
	}
	if !isObject(delta) {
		return false, invalidUpstream("choice delta is not an object")
	}
	m := jsonscan.MembersOf(delta)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "content":
			d.content = v
		case "refusal":
			d.refusal = v
		case "tool_calls":
			d.toolCalls = v
		case "reasoning_content", "reasoning":
			if isString(v) {
				d.reasoning = v
			}
		}
	}
	switch {
	case present(d.content) && !isString(d.content) && !isArray(d.content):
		return false, invalidUpstream("content is neither a string nor an array")
	case present(d.refusal) && !isString(d.refusal):
		return false, invalidUpstream("refusal is not a string")
	case present(d.toolCalls) && !isArray(d.toolCalls):
		return false, invalidUpstream("tool_calls is not an array")
	}
	return true, nil
}

// textPiece adds a piece of text, refusal or reasoning to the open block of
// its kind, ending the open one of another kind first.
func (d *chatDecoder) textPiece(s *ModelStream, dst []byte, kind PartKind, tok []byte) []byte {
	if d.text != kind {
		dst = d.stopText(s, dst)
		d.text, d.textAt = kind, d.blocks
		d.blocks++
		dst = s.put(dst, &Event{Kind: EventBlockStart, Index: d.textAt, Part: Part{Kind: kind}})
	}
	return s.put(dst, &Event{Kind: EventDelta, Index: d.textAt, Part: Part{Kind: kind, Text: tok}})
}

func (d *chatDecoder) stopText(s *ModelStream, dst []byte) []byte {
	if d.text == 0 {
		return dst
	}
	d.text = 0
	return s.put(dst, &Event{Kind: EventBlockStop, Index: d.textAt})
}

// toolCall reads one entry of delta.tool_calls: the first for a call
// starts its block, a piece of arguments is a delta. A call is the one its
// index names, or, for servers that leave index out and list calls in
// order, the one at its position.
func (d *chatDecoder) toolCall(s *ModelStream, dst []byte, c []byte, position int) ([]byte, error) {
	if !isObject(c) {
		return dst, invalidUpstream("tool call delta is not an object")
	}
	tc := readToolCall(c)
	k := int64(position)
	if present(tc.index) {
		var ok bool
		if k, ok = intValue(tc.index); !ok || k < 0 || k > maxBlocks {
			return dst, invalidUpstream("tool call delta with an invalid index")
		}
	}
	switch {
	case present(tc.args) && !isString(tc.args):
		return dst, invalidUpstream("tool call arguments are not a string")
	case present(tc.name) && !isString(tc.name):
		return dst, invalidUpstream("tool call name is not a string")
	}
	for int64(len(d.calls)) <= k {
		d.calls = append(d.calls, -1)
	}
	at := d.calls[k]
	if at < 0 {
		dst = d.stopText(s, dst)
		at = d.blocks
		d.blocks++
		d.calls[k] = at
		name := tc.name
		if !isString(name) {
			name = []byte(`""`)
		}
		dst = s.put(dst, &Event{Kind: EventBlockStart, Index: at, Part: Part{Kind: PartToolCall, ID: tc.id, Name: name}})
	}
	if isString(tc.args) && !isEmptyString(tc.args) {
		dst = s.put(dst, &Event{Kind: EventDelta, Index: at, Part: Part{Kind: PartToolCall, Args: tc.args, ArgsQuoted: true}})
	}
	return dst, nil
}

// stopAll closes the open text block and every call, in the order they
// started.
func (d *chatDecoder) stopAll(s *ModelStream, dst []byte) []byte {
	order := d.order[:0]
	if d.text != 0 {
		d.text = 0
		order = append(order, d.textAt)
	}
	for _, at := range d.calls {
		if at >= 0 {
			order = append(order, at)
		}
	}
	for i := 1; i < len(order); i++ { // by block index: few blocks, insertion sort
		for j := i; j > 0 && order[j] < order[j-1]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, at := range order {
		dst = s.put(dst, &Event{Kind: EventBlockStop, Index: at})
	}
	d.order = order
	return dst
}
