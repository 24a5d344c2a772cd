package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Reading an Anthropic message (a 2xx unary body) into the neutral model:
// its content blocks in order, stop_reason and stop_sequence, usage.

// decodeMessagesAnswer reads an Anthropic message into a Reply whose parts are appended to parts. What is not a message,
// a text block without text, a tool_use block without a name or with an
// input that is not an object wraps ErrInvalidUpstream. Text before a
// refusal (stop_reason "refusal": Anthropic's classifier stopped the
// answer) stays text, as a stream that already sent it must leave it, so
// unary and streamed answers say the same; block types the model has no
// part for (citations aside, server tool blocks) are left out.
func decodeMessagesAnswer(body []byte, parts []Part) (Reply, error) {
	msg, err := readMessagesAnswer(body)
	if err != nil {
		return Reply{}, err
	}
	rep := Reply{Parts: parts}
	rep.ID, rep.Model, rep.Usage = msg.id, msg.model, messagesUsage(Usage{}, msg.usage)
	rep.Finish = finishOf(Messages, msg.stop)
	if rep.Finish == FinishStopSequence && isString(msg.stopSeq) {
		rep.StopSequence = msg.stopSeq
	}
	blocks := jsonscan.ElementsOf(msg.content)
	for v, ok := blocks.Next(); ok; v, ok = blocks.Next() {
		b := readAnswerBlock(v)
		switch {
		case stringIs(b.typ, "text"):
			if !isString(b.text) {
				return Reply{}, invalidUpstream("text block without text")
			}
			rep.Parts = append(rep.Parts, Part{Kind: PartText, Text: b.text, At: -1})
		case stringIs(b.typ, "tool_use"):
			if !isString(b.name) {
				return Reply{}, invalidUpstream("tool_use block without a name")
			}
			if present(b.input) && !isObject(b.input) {
				return Reply{}, invalidUpstream("tool_use input is not a JSON object")
			}
			rep.Parts = append(rep.Parts, Part{Kind: PartToolCall, ID: b.id, Name: b.name, Args: b.input, At: -1})
		case stringIs(b.typ, "thinking"):
			rep.Parts = append(rep.Parts, Part{Kind: PartThinking, Text: stringOrNil(b.thinking), Signature: stringOrNil(b.signature), At: -1})
		case stringIs(b.typ, "redacted_thinking"):
			if d := b.data; isString(d) {
				rep.Parts = append(rep.Parts, Part{Kind: PartRedactedThinking, Data: d[1 : len(d)-1], DataEscaped: bytes.IndexByte(d, '\\') >= 0, At: -1})
			}
		}
	}
	return rep, nil
}

// answerBlock is the members of an answer's content block that are read,
// found in one pass (raw JSON values, nil when absent).
type answerBlock struct {
	typ, text, id, name, input, thinking, signature, data []byte
}

func readAnswerBlock(v []byte) answerBlock {
	var b answerBlock
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "type":
			b.typ = val
		case "text":
			b.text = val
		case "id":
			b.id = val
		case "name":
			b.name = val
		case "input":
			b.input = val
		case "thinking":
			b.thinking = val
		case "signature":
			b.signature = val
		case "data":
			b.data = val
		}
	}
	return b
}

// stringOrNil is v when it is a string token, else nil.
func stringOrNil(v []byte) []byte {
	if isString(v) {
		return v
	}
	return nil
}
