package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// chatToMessages turns OpenAI chunks into an Anthropic event stream:
//
//	the first chunk            -> message_start (usage 0 until the end)
//	delta.content / .refusal   -> content_block_start text (once), content_block_delta text_delta
//	delta.tool_calls[k] first  -> content_block_start tool_use {id, name, input {}}
//	delta.tool_calls[k] args   -> content_block_delta input_json_delta {partial_json}
//	a new kind of block        -> content_block_stop of the open one
//	finish_reason              -> content_block_stop; the stop reason is kept
//	the usage-only chunk       -> usage kept
//	data: [DONE]               -> message_delta {stop_reason, usage}, message_stop
//	data: {"error":{...}}      -> event: error, and the stream ends
//
// message_delta waits for [DONE] because OpenAI sends usage after the
// finish_reason chunk and Anthropic sends both in one event; message_delta
// carries input_tokens too, since message_start could not know them.
type chatToMessages struct {
	model string // immutable after NewChatToMessagesStream

	eventStream
	started bool   // message_start is out
	stop    string // the stop reason, once finish_reason is seen (end() defaults it)
	open    int    // kind of the open content block: noBlock, textBlock, toolBlock
	openIdx int    // its index
	blocks  int    // content blocks started
	tools   []int  // by OpenAI tool call index: its content block index, or -1
	usage   Usage
}

const (
	noBlock = iota
	textBlock
	toolBlock
)

// NewChatToMessagesStream translates an OpenAI upstream's chunk stream (asked
// with stream_options.include_usage, as MessagesToChat does) for an Anthropic
// client that asked for clientModel.
func NewChatToMessagesStream(clientModel string) Stream {
	return &chatToMessages{model: clientModel}
}

func (s *chatToMessages) Usage() Usage { return s.usage }

func (s *chatToMessages) Feed(dst, p []byte) ([]byte, error) { return s.feed(s, dst, p) }

func (s *chatToMessages) Finish(dst []byte) ([]byte, error) {
	dst, err := s.finishLast(s, dst)
	switch {
	case err != nil || s.done:
		return dst, err
	case s.stop == "": // no finish_reason
		return dst, ErrTruncated
	}
	return s.end(dst), nil
}

func (s *chatToMessages) event(dst, data []byte) ([]byte, error) {
	if string(data) == "[DONE]" {
		if !s.started {
			dst = s.start(dst, nil)
		}
		return s.end(dst), nil
	}
	var id, choices, usage, errObj []byte
	if !jsonscan.Object(data, func(k, val []byte) {
		switch string(k) {
		case "id":
			id = val
		case "choices":
			choices = val
		case "usage":
			usage = val
		case "error":
			errObj = val
		}
	}) {
		return dst, invalidUpstream("event data is not a JSON object")
	}
	if present(errObj) {
		s.done = true
		return s.errorEvent(dst, errObj), nil
	}
	if !s.started {
		dst = s.start(dst, id)
	}
	if u := chatUsage(usage); u.Known {
		s.usage = u
	}
	if !isArray(choices) {
		return dst, nil
	}
	delta, finish, ok := firstChoice(choices)
	if !ok {
		return dst, nil // the usage-only chunk has none
	}
	if isObject(delta) {
		var err error
		if dst, err = s.delta(dst, delta); err != nil {
			return dst, err
		}
	}
	if isString(finish) && s.stop == "" {
		s.stop = stopReason(stringToken(finish))
		dst = s.closeBlock(dst)
	}
	return dst, nil
}

func (s *chatToMessages) start(dst, id []byte) []byte {
	s.started = true
	dst = appendNamedEvent(dst, "message_start")
	dst = append(dst, `{"type":"message_start","message":{"id":`...)
	dst = appendID(dst, id, "msg_translated", -1)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = jsonscan.AppendString(dst, s.model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`+"\n\n"...)
	return dst
}

func (s *chatToMessages) delta(dst, delta []byte) ([]byte, error) {
	var content, refusalText, toolCalls []byte
	m := jsonscan.MembersOf(delta)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "content":
			content = val
		case "refusal":
			refusalText = val
		case "tool_calls":
			toolCalls = val
		}
		// role is implied; reasoning_content and the like are dropped.
	}
	for _, text := range [2][]byte{content, refusalText} {
		if isString(text) && !isEmptyString(text) {
			dst = s.text(dst, text)
		}
	}
	if !isArray(toolCalls) {
		return dst, nil
	}
	for j, c := range jsonscan.Each(toolCalls) {
		var err error
		if dst, err = s.toolCall(dst, c, j); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func (s *chatToMessages) text(dst, text []byte) []byte {
	if s.open != textBlock {
		dst = s.closeBlock(dst)
		s.open, s.openIdx = textBlock, s.blocks
		s.blocks++
		dst = appendNamedEvent(dst, "content_block_start")
		dst = append(dst, `{"type":"content_block_start","index":`...)
		dst = appendInt(dst, int64(s.openIdx))
		dst = append(dst, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
	}
	dst = appendNamedEvent(dst, "content_block_delta")
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = appendInt(dst, int64(s.openIdx))
	dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
	dst = append(dst, text...)
	return append(dst, "}}\n\n"...)
}

// toolCall handles one entry of delta.tool_calls: the first for an index
// starts a tool_use block, every one with arguments adds a piece of input. A
// piece for a call whose block another block has since closed (servers that
// interleave parallel calls) keeps its own block's index.
func (s *chatToMessages) toolCall(dst, c []byte, position int) ([]byte, error) {
	if !isObject(c) {
		return dst, invalidUpstream("tool call delta is not an object")
	}
	tc := readToolCall(c)
	k := int64(position) // servers that leave index out list calls in order
	if present(tc.index) {
		var ok bool
		if k, ok = intValue(tc.index); !ok || k < 0 || k > maxBlocks {
			return dst, invalidUpstream("tool call delta with an invalid index")
		}
	}
	for int64(len(s.tools)) <= k {
		s.tools = append(s.tools, -1)
	}
	b := s.tools[k]
	if b < 0 {
		dst = s.closeBlock(dst)
		b = s.blocks
		s.tools[k] = b
		s.blocks++
		s.open, s.openIdx = toolBlock, b
		dst = appendNamedEvent(dst, "content_block_start")
		dst = append(dst, `{"type":"content_block_start","index":`...)
		dst = appendInt(dst, int64(b))
		dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
		dst = appendID(dst, tc.id, "toolu_", int(k))
		dst = append(dst, `,"name":`...)
		if isString(tc.name) {
			dst = append(dst, tc.name...)
		} else {
			dst = append(dst, `""`...)
		}
		dst = append(dst, `,"input":{}}}`+"\n\n"...)
	}
	if args := tc.args; isString(args) && !isEmptyString(args) {
		dst = appendNamedEvent(dst, "content_block_delta")
		dst = append(dst, `{"type":"content_block_delta","index":`...)
		dst = appendInt(dst, int64(b))
		dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":`...)
		dst = append(dst, args...)
		dst = append(dst, "}}\n\n"...)
	}
	return dst, nil
}

func (s *chatToMessages) closeBlock(dst []byte) []byte {
	if s.open == noBlock {
		return dst
	}
	dst = appendNamedEvent(dst, "content_block_stop")
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = appendInt(dst, int64(s.openIdx))
	s.open = noBlock
	return append(dst, "}\n\n"...)
}

// end writes message_delta and message_stop.
func (s *chatToMessages) end(dst []byte) []byte {
	s.done = true
	dst = s.closeBlock(dst)
	if s.stop == "" {
		s.stop = "end_turn"
	}
	dst = appendNamedEvent(dst, "message_delta")
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":"`...)
	dst = append(dst, s.stop...)
	dst = append(dst, `","stop_sequence":null},"usage":`...)
	dst = appendMessagesUsage(dst, s.usage)
	dst = append(dst, "}\n\n"...)
	dst = appendNamedEvent(dst, "message_stop")
	return append(dst, `{"type":"message_stop"}`+"\n\n"...)
}

// errorEvent is the upstream's error chunk as Anthropic's error event, which
// the Anthropic SDKs raise as an API error.
func (s *chatToMessages) errorEvent(dst, errObj []byte) []byte {
	f := errorFields{}
	if isString(errObj) {
		f.message = errObj
	} else {
		f.message = jsonscan.Field(errObj, "message")
		f.typ = stringToken(jsonscan.Field(errObj, "type"))
		f.code = stringToken(jsonscan.Field(errObj, "code"))
	}
	if !isString(f.message) || isEmptyString(f.message) {
		f.message = []byte(`"upstream stream error"`)
	}
	dst = appendNamedEvent(dst, "error")
	dst = appendAnthropicError(dst, anthropicTypeForOpenAI(f.typ, f.code), f)
	return append(dst, "\n\n"...)
}
