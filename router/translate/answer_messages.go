package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Reading an Anthropic message (a 2xx unary body) into the neutral model:
// its content blocks in order, stop_reason and stop_sequence, usage.

// decodeMessagesAnswer reads an Anthropic message into a Reply whose parts are appended to parts. What is not a message,
// a text block without text, a tool_use block without a name or with an
// input that is not an object wraps ErrInvalidUpstream. The text of a
// refusal (stop_reason "refusal") is refusal parts, so every client reads
// it as its API says a refusal; block types the model has no part for
// (citations aside, server tool blocks) are left out.
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
	textKind := PartText
	if rep.Finish == FinishRefusal {
		textKind = PartRefusal
	}
	for _, b := range jsonscan.Each(msg.content) {
		p, _ := readPart(b)
		switch {
		case stringIs(p.typ, "text"):
			if !isString(p.text) {
				return Reply{}, invalidUpstream("text block without text")
			}
			rep.Parts = append(rep.Parts, Part{Kind: textKind, Text: p.text, At: -1})
		case stringIs(p.typ, "tool_use"):
			if !isString(p.name) {
				return Reply{}, invalidUpstream("tool_use block without a name")
			}
			if present(p.input) && !isObject(p.input) {
				return Reply{}, invalidUpstream("tool_use input is not a JSON object")
			}
			rep.Parts = append(rep.Parts, Part{Kind: PartToolCall, ID: p.id, Name: p.name, Args: p.input, At: -1})
		case stringIs(p.typ, "thinking"):
			t := jsonscan.Field(b, "thinking")
			if !isString(t) {
				t = nil
			}
			sig := jsonscan.Field(b, "signature")
			if !isString(sig) {
				sig = nil
			}
			rep.Parts = append(rep.Parts, Part{Kind: PartThinking, Text: t, Signature: sig, At: -1})
		case stringIs(p.typ, "redacted_thinking"):
			if d := jsonscan.Field(b, "data"); isString(d) {
				rep.Parts = append(rep.Parts, Part{Kind: PartRedactedThinking, Data: d[1 : len(d)-1], DataEscaped: bytes.IndexByte(d, '\\') >= 0, At: -1})
			}
		}
	}
	return rep, nil
}
