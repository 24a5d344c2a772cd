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
}

// chatChunk holds the members of a chunk the decoder reads (raw values).
type chatChunk struct {
	id, model, created, choices, usage, err []byte
}

// chunkDelta holds what a chunk's first choice says.
type chunkDelta struct {
	content, refusal, reasoning, toolCalls, finish, stopReason []byte
}

// chunk appends the neutral events of one chunk's data.
func (d *chatDecoder) chunk(evs []Event, data []byte) ([]Event, error) {
	var c chatChunk
	if !jsonscan.Object(data, func(k, v []byte) {
		switch string(k) {
		case "id":
			c.id = v
		case "model":
			c.model = v
		case "created":
			c.created = v
		case "choices":
			c.choices = v
		case "usage":
			c.usage = v
		case "error":
			c.err = v
		}
	}) {
		return evs, invalidUpstream("event data is not a JSON object")
	}
	if present(c.err) {
		return append(evs, Event{Kind: EventError, Err: chatStreamError(c.err)}), nil
	}
	if !d.started {
		d.started = true
		created, _ := intValue(c.created)
		evs = append(evs, Event{Kind: EventStart, ID: c.id, Model: c.model, Created: created})
	}
	if u := chatUsage(c.usage); u.Known {
		evs = append(evs, Event{Kind: EventUsage, Usage: u})
	}
	if !present(c.choices) {
		return evs, nil
	}
	if !isArray(c.choices) {
		return evs, invalidUpstream("choices is not an array")
	}
	ch, ok := chunkChoice0(c.choices)
	if !ok || d.finished {
		return evs, nil // the usage-only chunk has none; nothing follows the finish
	}
	var dl chunkDelta
	if err := readChunkChoice(ch, &dl); err != nil {
		return evs, err
	}
	var err error
	if isString(dl.reasoning) && !isEmptyString(dl.reasoning) && d.reasoning {
		evs = d.textPiece(evs, PartThinking, dl.reasoning)
	}
	if isString(dl.content) && !isEmptyString(dl.content) {
		evs = d.textPiece(evs, PartText, dl.content)
	}
	if isString(dl.refusal) && !isEmptyString(dl.refusal) {
		d.refused = true
		evs = d.textPiece(evs, PartRefusal, dl.refusal)
	}
	if present(dl.toolCalls) {
		for j, tc := range jsonscan.Each(dl.toolCalls) {
			if evs, err = d.toolCall(evs, tc, j); err != nil {
				return evs, err
			}
		}
	}
	switch {
	case isString(dl.finish) && !d.finished:
		d.finished = true
		evs = d.stopAll(evs)
		fin := finishOf(Chat, dl.finish)
		var seq []byte
		switch {
		case fin == FinishStop && d.refused:
			fin = FinishRefusal
		case fin == FinishStop && isString(dl.stopReason):
			fin, seq = FinishStopSequence, dl.stopReason // vLLM, SGLang: the matched stop sequence
		}
		evs = append(evs, Event{Kind: EventFinish, Finish: fin, StopSequence: seq})
	case present(dl.finish) && !isString(dl.finish):
		return evs, invalidUpstream("finish_reason is not a string")
	}
	return evs, nil
}

// chunkChoice0 finds the choice with index 0, or the first one listed.
func chunkChoice0(choices []byte) ([]byte, bool) {
	var first []byte
	e := jsonscan.ElementsOf(choices)
	for v, more := e.Next(); more; v, more = e.Next() {
		if !isObject(v) {
			continue
		}
		if first == nil {
			first = v
		}
		if i := jsonscan.Field(v, "index"); present(i) && string(i) == "0" {
			return v, true
		}
	}
	return first, first != nil
}

// readChunkChoice reads a choice's delta, finish_reason and stop_reason.
func readChunkChoice(ch []byte, d *chunkDelta) error {
	var delta []byte
	m := jsonscan.MembersOf(ch)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "delta", "message":
			delta = v
		case "finish_reason":
			d.finish = v
		case "stop_reason":
			d.stopReason = v
		}
	}
	if !present(delta) {
		return nil
	}
	if !isObject(delta) {
		return invalidUpstream("choice delta is not an object")
	}
	m = jsonscan.MembersOf(delta)
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
		return invalidUpstream("content is neither a string nor an array")
	case present(d.refusal) && !isString(d.refusal):
		return invalidUpstream("refusal is not a string")
	case present(d.toolCalls) && !isArray(d.toolCalls):
		return invalidUpstream("tool_calls is not an array")
	}
	return nil
}

// textPiece adds a piece of text, refusal or reasoning to the open block of
// its kind, ending the open one of another kind first.
func (d *chatDecoder) textPiece(evs []Event, kind PartKind, tok []byte) []Event {
	if d.text != kind {
		evs = d.stopText(evs)
		d.text, d.textAt = kind, d.blocks
		d.blocks++
		evs = append(evs, Event{Kind: EventBlockStart, Index: d.textAt, Part: Part{Kind: kind}})
	}
	return append(evs, Event{Kind: EventDelta, Index: d.textAt, Part: Part{Kind: kind, Text: tok}})
}

func (d *chatDecoder) stopText(evs []Event) []Event {
	if d.text == 0 {
		return evs
	}
	d.text = 0
	return append(evs, Event{Kind: EventBlockStop, Index: d.textAt})
}

// toolCall reads one entry of delta.tool_calls: the first for a call
// starts its block, a piece of arguments is a delta. A call is the one its
// index names, or, for servers that leave index out and list calls in
// order, the one at its position.
func (d *chatDecoder) toolCall(evs []Event, c []byte, position int) ([]Event, error) {
	if !isObject(c) {
		return evs, invalidUpstream("tool call delta is not an object")
	}
	tc := readToolCall(c)
	k := int64(position)
	if present(tc.index) {
		var ok bool
		if k, ok = intValue(tc.index); !ok || k < 0 || k > maxBlocks {
			return evs, invalidUpstream("tool call delta with an invalid index")
		}
	}
	switch {
	case present(tc.args) && !isString(tc.args):
		return evs, invalidUpstream("tool call arguments are not a string")
	case present(tc.name) && !isString(tc.name):
		return evs, invalidUpstream("tool call name is not a string")
	}
	for int64(len(d.calls)) <= k {
		d.calls = append(d.calls, -1)
	}
	at := d.calls[k]
	if at < 0 {
		evs = d.stopText(evs)
		at = d.blocks
		d.blocks++
		d.calls[k] = at
		name := tc.name
		if !isString(name) {
			name = []byte(`""`)
		}
		evs = append(evs, Event{Kind: EventBlockStart, Index: at, Part: Part{Kind: PartToolCall, ID: tc.id, Name: name}})
	}
	if isString(tc.args) && !isEmptyString(tc.args) {
		evs = append(evs, Event{Kind: EventDelta, Index: at, Part: Part{Kind: PartToolCall, Args: tc.args, ArgsQuoted: true}})
	}
	return evs, nil
}

// stopAll closes the open text block and every call, in the order they
// started.
func (d *chatDecoder) stopAll(evs []Event) []Event {
	first := len(evs)
	evs = d.stopText(evs)
	for _, at := range d.calls {
		if at >= 0 {
			evs = append(evs, Event{Kind: EventBlockStop, Index: at})
		}
	}
	stops := evs[first:]
	for i := 1; i < len(stops); i++ { // by block index: few calls, insertion sort
		for j := i; j > 0 && stops[j].Index < stops[j-1].Index; j-- {
			stops[j], stops[j-1] = stops[j-1], stops[j]
		}
	}
	return evs
}
