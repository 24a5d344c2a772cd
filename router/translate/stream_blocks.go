package translate

// blockQueue keeps the content blocks of an OpenAI stream translated for
// an Anthropic client in Anthropic's order: one block open at a time, each
// closed only once it is whole. Text is whole once anything else follows
// it; a tool call once its arguments are one complete JSON object (or at
// the finish). While the open block is not whole, whatever starts meanwhile
// (a second call of an interleaved pair, text) is held, in the order it
// came, and sent the moment the open block is whole: an OpenAI server that
// sends calls one after the other streams through as it comes.
type blockQueue struct {
	blocks int         // content blocks started: the next block's index
	live   liveBlock   // the open block
	calls  []callState // by OpenAI tool call index
	queue  []heldBlock // blocks started while the open one was not whole, in order
	held   int         // bytes held in the queue
}

const (
	noBlock = iota
	textBlock
	toolBlock
)

// liveBlock is the open content block.
type liveBlock struct {
	kind  int
	call  int // its tool call index (toolBlock)
	index int // its content block index
}

// Tool call states.
const (
	callUnseen = iota
	callHeld
	callLive
	callClosed
)

// callState is what is known of one tool call.
type callState struct {
	state    uint8
	id, name []byte // string tokens, copied while the call is held
	args     []byte // raw contents of its argument pieces, while held
	json     jsonDepth
}

// heldBlock is a block waiting for the open one to be whole: a tool call
// (its state holds the rest) or text (raw string contents).
type heldBlock struct {
	kind int
	call int
	text []byte
}

// jsonDepth follows JSON text, one piece at a time, far enough to know
// when one complete object or array has gone by.
type jsonDepth struct {
	depth        int32
	inStr, esc   bool
	begun, whole bool
	some         bool // a byte other than whitespace came
}

// feed reads a piece; false when something other than whitespace follows
// the complete value.
func (j *jsonDepth) feed(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			j.some = true
		}
		switch {
		case j.whole:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
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
				j.whole = true
			}
		}
	}
	return true
}

// errHeldTooLarge: more held for later than any answer needs.
var errHeldTooLarge = invalidUpstream("interleaved content larger than any answer")

// errArgsAfterWhole: a call's arguments went on after a complete object,
// or after the finish.
var errArgsAfterWhole = invalidUpstream("tool call arguments continue after a complete JSON object")

// errArgsNotObject: a call's arguments ended without being one JSON object.
var errArgsNotObject = invalidUpstream("tool call arguments are not a JSON object")

// checkCalls reports a call whose arguments, now over, are something but
// not one JSON object; unless cut by the length limit, which leaves
// arguments cut too.
func (s *chatToMessages) checkCalls() error {
	if s.stop == "max_tokens" {
		return nil
	}
	for i := range s.calls {
		if j := &s.calls[i].json; j.some && !j.whole {
			return errArgsNotObject
		}
	}
	return nil
}

// liveWhole reports whether the open block may be closed.
func (s *chatToMessages) liveWhole() bool {
	switch s.live.kind {
	case textBlock:
		return true
	case toolBlock:
		return s.calls[s.live.call].json.whole
	}
	return false
}

// text adds a piece of text (a string token).
func (s *chatToMessages) text(dst, tok []byte) ([]byte, error) {
	switch {
	case s.live.kind == textBlock:
		return s.textDelta(dst, tok), nil
	case s.live.kind == noBlock || s.liveWhole():
		dst = s.closeLive(dst)
		dst = s.startText(dst)
		return s.textDelta(dst, tok), nil
	}
	contents := tok[1 : len(tok)-1]
	if err := s.hold(len(contents)); err != nil {
		return dst, err
	}
	if n := len(s.queue); n > 0 && s.queue[n-1].kind == textBlock {
		s.queue[n-1].text = append(s.queue[n-1].text, contents...)
		return dst, nil
	}
	s.queue = append(s.queue, heldBlock{kind: textBlock, text: append([]byte(nil), contents...)})
	return dst, nil
}

// call notes tool call k, whose header (id and name tokens, nil when
// absent) came with it the first time.
func (s *chatToMessages) call(dst []byte, k int, id, name []byte) ([]byte, error) {
	for len(s.calls) <= k {
		s.calls = append(s.calls, callState{})
	}
	if s.calls[k].state != callUnseen {
		return dst, nil
	}
	if s.live.kind == noBlock || s.liveWhole() {
		dst = s.closeLive(dst)
		return s.startTool(dst, k, id, name), nil
	}
	if err := s.hold(len(id) + len(name)); err != nil {
		return dst, err
	}
	cs := &s.calls[k]
	cs.state = callHeld
	cs.id, cs.name = append([]byte(nil), id...), append([]byte(nil), name...)
	s.queue = append(s.queue, heldBlock{kind: toolBlock, call: k})
	return dst, nil
}

// callArgs adds a piece of call k's arguments: tok is its string token,
// decoded the JSON text it holds.
func (s *chatToMessages) callArgs(dst []byte, k int, tok, decoded []byte) ([]byte, error) {
	cs := &s.calls[k]
	some := cs.json.some
	if !cs.json.feed(decoded) || (cs.state == callClosed && !cs.json.whole && cs.json.some != some) {
		return dst, errArgsAfterWhole
	}
	switch cs.state {
	case callLive:
		dst = s.argsDelta(dst, s.live.index, tok)
		return s.advance(dst)
	case callHeld:
		contents := tok[1 : len(tok)-1]
		if err := s.hold(len(contents)); err != nil {
			return dst, err
		}
		cs.args = append(cs.args, contents...)
	}
	// callClosed: only whitespace can follow a closed call (checked
	// above), and it changes nothing.
	return dst, nil
}

func (s *chatToMessages) hold(n int) error {
	s.held += n
	if s.held > maxPending {
		return errHeldTooLarge
	}
	return nil
}

// advance sends held blocks while the open one is whole.
func (s *chatToMessages) advance(dst []byte) ([]byte, error) {
	for len(s.queue) > 0 && s.liveWhole() {
		dst = s.closeLive(dst)
		dst = s.startHeld(dst, s.queue[0])
		s.queue = s.queue[1:]
	}
	if len(s.queue) == 0 {
		s.queue, s.held = s.queue[:0], 0
	}
	return dst, nil
}

// flushAll ends every block, the held ones included: the answer is over.
func (s *chatToMessages) flushAll(dst []byte) ([]byte, error) {
	for _, h := range s.queue {
		dst = s.closeLive(dst)
		dst = s.startHeld(dst, h)
	}
	s.queue, s.held = s.queue[:0], 0
	return s.closeLive(dst), nil
}

// startHeld opens a held block and sends what it holds.
func (s *chatToMessages) startHeld(dst []byte, h heldBlock) []byte {
	if h.kind == textBlock {
		dst = s.startText(dst)
		return s.textDelta(dst, quoted(h.text))
	}
	cs := &s.calls[h.call]
	dst = s.startTool(dst, h.call, cs.id, cs.name)
	if len(cs.args) > 0 {
		dst = s.argsDelta(dst, s.live.index, quoted(cs.args))
	}
	cs.id, cs.name, cs.args = nil, nil, nil
	return dst
}

// quoted makes raw string contents a string token again.
func quoted(contents []byte) []byte {
	tok := make([]byte, 0, len(contents)+2)
	tok = append(tok, '"')
	tok = append(tok, contents...)
	return append(tok, '"')
}

func (s *chatToMessages) startText(dst []byte) []byte {
	s.live = liveBlock{kind: textBlock, index: s.blocks}
	s.blocks++
	dst = appendNamedEvent(dst, "content_block_start")
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = appendInt(dst, int64(s.live.index))
	return append(dst, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
}

func (s *chatToMessages) textDelta(dst, tok []byte) []byte {
	dst = appendNamedEvent(dst, "content_block_delta")
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = appendInt(dst, int64(s.live.index))
	dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
	dst = append(dst, tok...)
	return append(dst, "}}\n\n"...)
}

func (s *chatToMessages) startTool(dst []byte, k int, id, name []byte) []byte {
	s.calls[k].state = callLive
	s.live = liveBlock{kind: toolBlock, call: k, index: s.blocks}
	s.blocks++
	dst = appendNamedEvent(dst, "content_block_start")
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = appendInt(dst, int64(s.live.index))
	dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
	dst = s.a.IDs.appendClientID(dst, id, Messages, "toolu_", k)
	dst = append(dst, `,"name":`...)
	if isString(name) {
		dst = append(dst, name...)
	} else {
		dst = append(dst, `""`...)
	}
	return append(dst, `,"input":{}}}`+"\n\n"...)
}

func (s *chatToMessages) argsDelta(dst []byte, index int, tok []byte) []byte {
	dst = appendNamedEvent(dst, "content_block_delta")
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = appendInt(dst, int64(index))
	dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":`...)
	dst = append(dst, tok...)
	return append(dst, "}}\n\n"...)
}

func (s *chatToMessages) closeLive(dst []byte) []byte {
	if s.live.kind == noBlock {
		return dst
	}
	if s.live.kind == toolBlock {
		s.calls[s.live.call].state = callClosed
	}
	dst = appendNamedEvent(dst, "content_block_stop")
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = appendInt(dst, int64(s.live.index))
	s.live = liveBlock{}
	return append(dst, "}\n\n"...)
}
