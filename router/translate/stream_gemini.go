package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// geminiDecoder reads a Gemini stream's chunks (each SSE event a whole
// GenerateContentResponse) into neutral events. Text and thought parts
// continue the block of their kind; a function call arrives whole, so it
// is a block of its own with one arguments delta. A call ends its answer
// with STOP, sometimes in a later chunk than the call: the finish is a
// tool call when any call came in the whole stream.
type geminiDecoder struct {
	started bool
	open    PartKind // the open block's kind (0: none)
	blocks  int      // blocks started: the next block's index
	calls   bool
	// textSig is the signature the open text block's parts came with,
	// written as a block of its own when the text block ends.
	textSig []byte
	// thoughtSigned: the open thought block got a signature.
	thoughtSigned bool
}

// chunk appends the neutral events of one chunk.
func (d *geminiDecoder) chunk(evs []Event, data []byte) ([]Event, error) {
	c, ok := readGeminiChunk(data)
	if !ok {
		return evs, invalidUpstream("a Gemini stream chunk that is not a JSON object")
	}
	if present(c.err) {
		f := errorFields{message: jsonscan.Field(c.err, "message"), typ: stringToken(jsonscan.Field(c.err, "status"))}
		if !isString(f.message) {
			f.message = []byte(streamErrorText)
		}
		return append(evs, Event{Kind: EventError, Err: f}), nil
	}
	if !d.started {
		d.started = true
		evs = append(evs, Event{Kind: EventStart, ID: c.id, Model: c.model})
	}
	for _, b := range jsonscan.Each(c.parts) {
		p, err := geminiPart(b)
		if err != nil {
			return evs, err
		}
		sig, p := geminiSigned(p)
		switch {
		case sig.Kind == 0:
		case p.Kind == PartToolCall: // the call's signature: a block before it
			evs = d.signature(d.stop(evs), sig.Signature)
		case d.open == PartText || !isEmptyString(p.Text):
			// The text's: a block after it, once its text block ends
			// (the text goes on in one block meanwhile).
			d.textSig = sig.Signature
		default: // an empty text part after no text
			evs = d.signature(d.stop(evs), sig.Signature)
		}
		evs = d.part(evs, p)
	}
	if c.usage.Known {
		evs = append(evs, Event{Kind: EventUsage, Usage: c.usage})
	}
	if present(c.finish) || present(c.blocked) {
		evs = d.stop(evs)
		evs = append(evs, Event{Kind: EventFinish, Finish: geminiFinish(&c, d.calls)})
	}
	return evs, nil
}

// part appends the events of one part.
func (d *geminiDecoder) part(evs []Event, p Part) []Event {
	switch p.Kind {
	case PartText, PartThinking:
		if isEmptyString(p.Text) && p.Signature == nil {
			return evs
		}
		if d.open != p.Kind {
			evs = d.stop(evs)
			d.open = p.Kind
			evs = append(evs, Event{Kind: EventBlockStart, Index: d.blocks, Part: Part{Kind: p.Kind}})
		}
		if !isEmptyString(p.Text) {
			evs = append(evs, Event{Kind: EventDelta, Index: d.blocks, Part: Part{Kind: p.Kind, Text: p.Text}})
		}
		if p.Kind == PartThinking && p.Signature != nil {
			evs = append(evs, Event{Kind: EventDelta, Index: d.blocks, Part: Part{Kind: p.Kind, Signature: p.Signature}})
			d.thoughtSigned = true
		}
	case PartToolCall:
		evs = d.stop(evs)
		d.calls = true
		start := Part{Kind: PartToolCall, ID: p.ID, Name: p.Name}
		args := Part{Kind: PartToolCall, ArgsQuoted: true, Args: []byte(`"{}"`)}
		if isObject(p.Args) {
			args.Args = jsonscan.AppendString(nil, p.Args)
		}
		evs = append(evs,
			Event{Kind: EventBlockStart, Index: d.blocks, Part: start},
			Event{Kind: EventDelta, Index: d.blocks, Part: args},
			Event{Kind: EventBlockStop, Index: d.blocks})
		d.blocks++
	}
	return evs
}

// stop closes the open text or thought block, and writes the signature a
// text block's parts came with after it.
func (d *geminiDecoder) stop(evs []Event) []Event {
	if d.open == 0 {
		return evs
	}
	text := d.open == PartText
	if d.open == PartThinking && !d.thoughtSigned { // marked Gemini's all the same
		evs = append(evs, Event{Kind: EventDelta, Index: d.blocks, Part: Part{Kind: PartThinking, Signature: unsignedGeminiThought}})
	}
	d.thoughtSigned = false
	evs = append(evs, Event{Kind: EventBlockStop, Index: d.blocks})
	d.open = 0
	d.blocks++
	if text && d.textSig != nil {
		evs = d.signature(evs, d.textSig)
		d.textSig = nil
	}
	return evs
}

// signature writes a thinking block holding only signature sig.
func (d *geminiDecoder) signature(evs []Event, sig []byte) []Event {
	evs = append(evs,
		Event{Kind: EventBlockStart, Index: d.blocks, Part: Part{Kind: PartThinking}},
		Event{Kind: EventDelta, Index: d.blocks, Part: Part{Kind: PartThinking, Signature: sig}},
		Event{Kind: EventBlockStop, Index: d.blocks})
	d.blocks++
	return evs
}
