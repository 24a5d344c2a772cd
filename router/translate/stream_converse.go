package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// converseDecoder reads a Converse stream's events (the type an AWS event
// stream frame names, and its JSON payload) into neutral events. Converse
// opens only tool-use blocks with contentBlockStart; a text or reasoning
// block starts with its first delta. Its usage (metadata) comes after
// messageStop.
type converseDecoder struct {
	open    []int // upstream block indexes started and not stopped
	started bool
}

// event appends the neutral events of one Converse event.
func (d *converseDecoder) event(evs []Event, name, payload []byte) ([]Event, error) {
	if !isObject(payload) {
		return evs, invalidUpstream("a Converse stream event that is not a JSON object")
	}
	if !d.started && string(name) != "metadata" && !bytes.HasSuffix(name, []byte("Exception")) {
		d.started = true
		evs = append(evs, Event{Kind: EventStart})
	}
	index, _ := intValue(jsonscan.Field(payload, "contentBlockIndex"))
	i := int(index)
	if i < 0 || i >= maxBlocks {
		return evs, invalidUpstream("a Converse content block index out of range")
	}
	switch string(name) {
	case "messageStart":
	case "contentBlockStart":
		tu := jsonscan.Field(jsonscan.Field(payload, "start"), "toolUse")
		if !isObject(tu) {
			return evs, nil
		}
		p := Part{Kind: PartToolCall, ID: jsonscan.Field(tu, "toolUseId"), Name: jsonscan.Field(tu, "name")}
		if !isString(p.Name) {
			return evs, invalidUpstream("a Converse toolUse start without a name")
		}
		d.open = append(d.open, i)
		evs = append(evs, Event{Kind: EventBlockStart, Index: i, Part: p})
	case "contentBlockDelta":
		return d.delta(evs, i, jsonscan.Field(payload, "delta"))
	case "contentBlockStop":
		if d.isOpen(i) {
			d.close(i)
			evs = append(evs, Event{Kind: EventBlockStop, Index: i})
		}
	case "messageStop":
		evs = d.stopAll(evs)
		evs = append(evs, Event{Kind: EventFinish, Finish: finishOf(Converse, jsonscan.Field(payload, "stopReason"))})
	case "metadata":
		evs = append(evs, Event{Kind: EventUsage, Usage: converseUsage(jsonscan.Field(payload, "usage"))})
	default:
		if bytes.HasSuffix(name, []byte("Exception")) {
			msg := jsonscan.Field(payload, "message")
			if !isString(msg) {
				msg = []byte(streamErrorText)
			}
			evs = append(evs, Event{Kind: EventError, Err: errorFields{message: msg, typ: []byte("api_error")}})
		}
	}
	return evs, nil
}

// delta reads a contentBlockDelta: text, reasoning (text, signature) or a
// piece of a tool call's input, starting the block when it is the first.
func (d *converseDecoder) delta(evs []Event, i int, delta []byte) ([]Event, error) {
	var kind PartKind
	var p Part
	m := jsonscan.MembersOf(delta)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "text":
			kind, p.Text = PartText, v
		case "reasoningContent":
			kind, p.Text, p.Signature = PartThinking, jsonscan.Field(v, "text"), jsonscan.Field(v, "signature")
		case "toolUse":
			kind, p.Args, p.ArgsQuoted = PartToolCall, jsonscan.Field(v, "input"), true
		}
	}
	if kind == 0 {
		return evs, nil
	}
	if (p.Text != nil && !isString(p.Text)) || (p.Args != nil && !isString(p.Args)) {
		return evs, invalidUpstream("a Converse delta that is not a string")
	}
	if !d.isOpen(i) {
		if kind == PartToolCall {
			return evs, invalidUpstream("a Converse toolUse delta before its block started")
		}
		d.open = append(d.open, i)
		evs = append(evs, Event{Kind: EventBlockStart, Index: i, Part: Part{Kind: kind}})
	}
	p.Kind = kind
	return append(evs, Event{Kind: EventDelta, Index: i, Part: p}), nil
}

func (d *converseDecoder) isOpen(i int) bool {
	for _, o := range d.open {
		if o == i {
			return true
		}
	}
	return false
}

func (d *converseDecoder) close(i int) {
	for k, o := range d.open {
		if o == i {
			d.open = append(d.open[:k], d.open[k+1:]...)
			return
		}
	}
}

// stopAll closes every block still open (a stream that stops without
// closing them).
func (d *converseDecoder) stopAll(evs []Event) []Event {
	for _, i := range d.open {
		evs = append(evs, Event{Kind: EventBlockStop, Index: i})
	}
	d.open = d.open[:0]
	return evs
}
