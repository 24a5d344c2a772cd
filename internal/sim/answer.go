package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What a chat completion or a message answers, decided from the request alone
// (never from chance, so a seed replays every answer): text, or tool calls.
// The rules are in the package documentation.

// ParallelMarker in the text of a request's first message (or an Anthropic
// request's system prompt) asks for two tool calls at once, as a test or a
// demo needs to exercise parallel calls through a gateway without a config
// of its own.
const ParallelMarker = "sim:parallel"

// StopMarker, followed by a word (letters and underscores), in the text of
// a request's first message (or an Anthropic request's system prompt) makes
// the answer end with that word as its stop reason, in the format the
// provider speaks (finish_reason, stop_reason, Converse's stopReason,
// Gemini's finishReason: "sim:stop=guardrail_intervened", "sim:stop=SAFETY"),
// so a test can drive every finish a provider can send through a gateway.
const StopMarker = "sim:stop="

// message is one entry of "messages", in either API's shape.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentPart is one part (OpenAI) or block (Anthropic) of a message's content.
type contentPart struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"` // a tool_result's own blocks
}

// tool is one tool definition, in either API's shape.
type tool struct {
	Name        string          `json:"name"`         // Anthropic
	InputSchema json.RawMessage `json:"input_schema"` // Anthropic
	Function    *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"` // OpenAI
}

func (t tool) name() string {
	if t.Function != nil {
		return t.Function.Name
	}
	return t.Name
}

func (t tool) schema() json.RawMessage {
	if t.Function != nil {
		return t.Function.Parameters
	}
	return t.InputSchema
}

// toolChoice is tool_choice in either API's shape: a string (OpenAI's "none",
// "auto", "required") or an object ({"type":"function","function":{"name"}};
// Anthropic's {"type","name","disable_parallel_tool_use"}).
type toolChoice struct {
	mode            string // none, auto, required (any), or named
	name            string
	noParallelCalls bool
}

func (c *toolChoice) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		c.mode = s
		return nil
	}
	var o struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		DisableParallelToolUse bool `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.mode, c.name, c.noParallelCalls = o.Type, o.Function.Name, o.DisableParallelToolUse
	if o.Type == "tool" || o.Type == "function" {
		c.mode = "named"
		if o.Name != "" {
			c.name = o.Name
		}
	}
	return nil
}

// answer is what a generation request gets.
type answer struct {
	images int        // images the request carries: the text mentions them
	calls  []toolCall // when set, the answer is these tool calls, not text
	stop   string     // the stop reason StopMarker asks for ("": the usual one)
	// stopSeqs are the request's stop sequences; a text answer ends
	// before the first chunk that holds one (stopAt).
	stopSeqs []string
}

// stopAt is how many of a text answer's n chunks go out before a stop
// sequence, and the sequence matched ("": none matched, all n go out).
func (a answer) stopAt(n int) (int, string) {
	if len(a.calls) > 0 {
		return n, ""
	}
	for i := range n {
		for _, seq := range a.stopSeqs {
			if seq != "" && strings.Contains(a.chunk(i), seq) {
				return i, seq
			}
		}
	}
	return n, ""
}

type toolCall struct {
	name string
	args string // a JSON object
}

// plan decides the answer of a chat completion or a message request.
func plan(r *request, parallelTools bool) answer {
	a := answer{images: countImages(r.Messages), stop: askedStop(r), stopSeqs: append(r.StopSequences, r.Stop...)}
	if len(r.Tools) == 0 || len(r.Messages) == 0 || r.ToolChoice.mode == "none" {
		return a
	}
	if !awaitsAnswer(r.Messages[len(r.Messages)-1]) {
		return a // the last turn is a tool result (or the assistant's): answer in text
	}
	pick := []tool{r.Tools[0]}
	switch {
	case r.ToolChoice.mode == "named":
		pick[0] = tool{Name: r.ToolChoice.name}
		for _, t := range r.Tools {
			if t.name() == r.ToolChoice.name {
				pick[0] = t
			}
		}
	case len(r.Tools) >= 2 && !r.ToolChoice.noParallelCalls &&
		(r.ParallelToolCalls == nil || *r.ParallelToolCalls) &&
		(parallelTools || asksForParallel(r)):
		pick = r.Tools[:2]
	}
	for _, t := range pick {
		a.calls = append(a.calls, toolCall{name: t.name(), args: exampleArgs(t.schema())})
	}
	return a
}

// awaitsAnswer reports whether the last message is a user's turn that is not
// a tool result: the moment a model calls a tool.
func awaitsAnswer(m message) bool {
	if m.Role != "user" {
		return false // assistant, or OpenAI's tool role
	}
	for _, p := range parts(m.Content) {
		if p.Type == "tool_result" {
			return false
		}
	}
	return true
}

func asksForParallel(r *request) bool {
	return bytes.Contains(r.Messages[0].Content, []byte(ParallelMarker)) ||
		bytes.Contains(r.System, []byte(ParallelMarker))
}

// askedStop is the word after StopMarker in the first message or the
// system prompt ("" : none).
func askedStop(r *request) string {
	var in []byte
	if len(r.Messages) > 0 {
		in = r.Messages[0].Content
	}
	_, after, ok := bytes.Cut(in, []byte(StopMarker))
	if !ok {
		_, after, ok = bytes.Cut(r.System, []byte(StopMarker))
	}
	if !ok {
		return ""
	}
	n := 0
	for n < len(after) && (after[n] == '_' || 'a' <= after[n]|0x20 && after[n]|0x20 <= 'z') {
		n++
	}
	return string(after[:n])
}

// parts decodes a content array; a string (or anything else) has none.
func parts(content json.RawMessage) []contentPart {
	if len(content) == 0 || content[0] != '[' {
		return nil
	}
	var ps []contentPart
	if json.Unmarshal(content, &ps) != nil {
		return nil
	}
	return ps
}

// countImages counts image parts (OpenAI image_url, Anthropic image, also
// inside tool results) in every message.
func countImages(msgs []message) int {
	n := 0
	var count func(json.RawMessage)
	count = func(content json.RawMessage) {
		for _, p := range parts(content) {
			switch p.Type {
			case "image_url", "image":
				n++
			case "tool_result":
				count(p.Content)
			}
		}
	}
	for _, m := range msgs {
		count(m.Content)
	}
	return n
}

// exampleArgs builds small arguments for a tool from its JSON schema: each
// required property, in the order "required" lists them, with a plain value
// of its type (a string is "example", or the first of its enum). No required
// property gives {}.
func exampleArgs(schema json.RawMessage) string {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type json.RawMessage   `json:"type"`
			Enum []json.RawMessage `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return "{}"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range s.Required {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		prop := s.Properties[name]
		var typ string
		_ = json.Unmarshal(prop.Type, &typ) // a list of types reads as none
		switch {
		case len(prop.Enum) > 0:
			b.Write(prop.Enum[0])
		case typ == "string":
			b.WriteString(`"example"`)
		case typ == "integer", typ == "number":
			b.WriteByte('1')
		case typ == "boolean":
			b.WriteString("true")
		case typ == "array":
			b.WriteString("[]")
		case typ == "object":
			b.WriteString("{}")
		default:
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.String()
}

// argPieces splits arguments in two at a character boundary, so a stream
// sends them as a client must assemble them: in pieces.
func argPieces(args string) [2]string {
	cut := len(args) / 2
	for cut > 0 && !utf8.RuneStart(args[cut]) {
		cut--
	}
	return [2]string{args[:cut], args[cut:]}
}

// steps is how many paced steps the answer streams in: a text's chunks, or
// two argument pieces per tool call.
func (a answer) steps(chunks int) int {
	if len(a.calls) > 0 {
		return 2 * len(a.calls)
	}
	return chunks
}

// outputTokens is the usage the answer reports: one token per text chunk (a
// word of filler), or about one per four bytes of each call.
func (a answer) outputTokens(chunks int) int {
	if len(a.calls) == 0 {
		return chunks
	}
	n := 0
	for _, c := range a.calls {
		n += max(1, (len(c.name)+len(c.args)+3)/4)
	}
	return n
}

// chunk is the i-th content chunk of a text answer: a note of the images seen
// first, when there were any, then the filler.
func (a answer) chunk(i int) string {
	if a.images == 0 {
		return chunkText(i)
	}
	if i == 0 {
		return "I see " + strconv.Itoa(a.images) + " image(s)."
	}
	return " " + filler[(i-1)%len(filler)]
}

// text is the whole text answer of n chunks.
func (a answer) text(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(a.chunk(i))
	}
	return b.String()
}

// callID numbers the calls of one response: prefix_RESPONSE_INDEX.
func callID(prefix string, response uint64, i int) string {
	return prefix + strconv.FormatUint(response, 10) + "_" + strconv.Itoa(i)
}
