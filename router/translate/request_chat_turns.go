package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// turns writes Anthropic messages. Consecutive messages that become the same
// role are merged into one turn (tool results and the user message after them
// are one user turn), and system or developer messages, wherever they stand,
// become the top-level system prompt in their order.
//
// A cache_control mark (OpenRouter's and LiteLLM's convention for
// Anthropic's prompt caching) is carried to the block it marks: on a
// content part, to that part's block; on a message, to the last block the
// message became.
type turns struct {
	out    []byte
	ids    *ToolIDs
	role   string       // of the open turn; "" when none is open
	blocks int          // content blocks written in the open turn
	n      int          // turns written
	system []systemPart // the system prompt's parts
	// lastAssistantTools: the last assistant message called tools.
	lastAssistantTools bool
}

// systemPart is a part of the system prompt: a string token, and the
// cache_control that marked it (nil: none).
type systemPart struct{ text, cache []byte }

func (t *turns) open(role string) {
	if t.role == role {
		return
	}
	t.close()
	if t.n > 0 {
		t.out = append(t.out, ',')
	}
	t.n++
	t.out = append(t.out, `{"role":"`...)
	t.out = append(t.out, role...)
	t.out = append(t.out, `","content":[`...)
	t.role, t.blocks = role, 0
}

// block starts a content block in the open turn.
func (t *turns) block() {
	if t.blocks > 0 {
		t.out = append(t.out, ',')
	}
	t.blocks++
}

func (t *turns) close() {
	switch {
	case t.role == "":
		return
	case t.blocks == 0:
		// Nothing to say (empty content): sent as an empty string, so the
		// upstream judges it, rather than a turn silently vanishing.
		t.out = append(t.out[:len(t.out)-1], `""}`...)
	default:
		t.out = append(t.out, "]}"...)
	}
	t.role = ""
}

// markLast puts cache on the block written last (the out ends with its
// closing brace).
func (t *turns) markLast(cache []byte) {
	t.out = appendCacheControl(t.out[:len(t.out)-1], cache)
	t.out = append(t.out, '}')
}

// appendCacheControl writes a cache_control member when there is one.
func appendCacheControl(out, cache []byte) []byte {
	if !present(cache) {
		return out
	}
	out = append(out, `,"cache_control":`...)
	return append(out, cache...)
}

// appendSystem writes the top-level system prompt: one part as a string,
// several (or any marked for caching) as text blocks.
func (t *turns) appendSystem(out []byte) []byte {
	marked := false
	for _, s := range t.system {
		marked = marked || present(s.cache)
	}
	switch {
	case len(t.system) == 0:
		return out
	case len(t.system) == 1 && !marked:
		out = append(out, `,"system":`...)
		return append(out, t.system[0].text...)
	}
	out = append(out, `,"system":[`...)
	for i, s := range t.system {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendTextBlock(out, s.text, s.cache)
	}
	return append(out, ']')
}

func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

func (t *turns) message(i int, msg []byte) error {
	if !isObject(msg) {
		return refuse(msgPath(i), "must be an object")
	}
	var role, content, toolCalls, toolCallID, refusalText, cache []byte
	m := jsonscan.MembersOf(msg)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "role":
			role = v
		case "content":
			content = v
		case "tool_calls":
			toolCalls = v
		case "tool_call_id":
			toolCallID = v
		case "refusal":
			refusalText = v
		case "cache_control":
			cache = v
		case "function_call":
			if present(v) {
				return refuse(msgPath(i)+".function_call", "the deprecated functions API is not translated; use tool_calls")
			}
		case "audio":
			if present(v) {
				return refuse(msgPath(i)+".audio", "audio is not available from an Anthropic upstream")
			}
		}
		// name is dropped: Anthropic has no participant names.
	}
	if present(cache) && !isObject(cache) {
		return refuse(msgPath(i)+".cache_control", "must be an object")
	}
	var err error
	before := t.blocks
	switch {
	case stringIs(role, "system"), stringIs(role, "developer"):
		return t.systemContent(i, content, cache)
	case stringIs(role, "user"):
		t.open("user")
		before = t.blocks
		err = t.userContent(i, content)
	case stringIs(role, "assistant"):
		t.open("assistant")
		before = t.blocks
		t.lastAssistantTools = present(toolCalls) && string(toolCalls) != "[]"
		err = t.assistant(i, content, refusalText, toolCalls)
	case stringIs(role, "tool"):
		t.open("user")
		before = t.blocks
		err = t.toolResult(i, toolCallID, content)
	case role == nil:
		return refuse(msgPath(i)+".role", "required")
	default:
		return refuse(msgPath(i)+".role", "must be system, developer, user, assistant or tool")
	}
	if err == nil && present(cache) && t.blocks > before {
		t.markLast(cache)
	}
	return err
}

func (t *turns) systemContent(i int, content, cache []byte) error {
	if isString(content) {
		if !isEmptyString(content) {
			t.system = append(t.system, systemPart{content, cache})
		}
		return nil
	}
	if !isArray(content) {
		return refuse(msgPath(i)+".content", "must be a string or an array of text parts")
	}
	first := len(t.system)
	for j, p := range jsonscan.Each(content) {
		pt, _ := readPart(p)
		text, ok := textIn(pt)
		if !ok {
			return notText(pt, contentPath(i, j))
		}
		if !isEmptyString(text) {
			t.system = append(t.system, systemPart{text, pt.cacheControl})
		}
	}
	if n := len(t.system); present(cache) && n > first && !present(t.system[n-1].cache) {
		t.system[n-1].cache = cache
	}
	return nil
}

func appendTextBlock(out, text, cache []byte) []byte {
	out = append(out, `{"type":"text","text":`...)
	out = append(out, text...)
	out = appendCacheControl(out, cache)
	return append(out, '}')
}

func (t *turns) text(text, cache []byte) {
	if isEmptyString(text) {
		return // Anthropic refuses empty text blocks
	}
	t.block()
	t.out = appendTextBlock(t.out, text, cache)
}

func (t *turns) userContent(i int, content []byte) error {
	switch {
	case isString(content):
		t.text(content, nil)
		return nil
	case !present(content):
		return nil
	case !isArray(content):
		return refuse(msgPath(i)+".content", "must be a string or an array of content parts")
	}
	for j, p := range jsonscan.Each(content) {
		pt, ok := readPart(p)
		if !ok {
			return refuse(contentPath(i, j), "must be an object")
		}
		if err := t.userPart(pt, contentPath(i, j)); err != nil {
			return err
		}
	}
	return nil
}

// userPart writes one content part of a user message at path.
func (t *turns) userPart(pt part, path string) error {
	if present(pt.cacheControl) && !isObject(pt.cacheControl) {
		return refuse(path+".cache_control", "must be an object")
	}
	switch typ := pt.typ; {
	case stringIs(typ, "text"):
		text, ok := textIn(pt)
		if !ok {
			return notText(pt, path)
		}
		t.text(text, pt.cacheControl)
		return nil
	case stringIs(typ, "image_url"):
		return t.image(pt.imageURL, pt.cacheControl, path+".image_url")
	case stringIs(typ, "file"):
		return t.file(pt.file, pt.cacheControl, path+".file")
	case stringIs(typ, "input_audio"):
		return refuse(path, "audio input is not available from an Anthropic upstream")
	}
	return refuse(path+".type", "must be text, image_url or file")
}

func (t *turns) assistant(i int, content, refusalText, toolCalls []byte) error {
	before := t.blocks
	switch {
	case isString(content):
		t.text(content, nil)
	case isArray(content):
		for j, p := range jsonscan.Each(content) {
			pt, _ := readPart(p)
			switch typ := pt.typ; {
			case stringIs(typ, "text"):
				text, ok := textIn(pt)
				if !ok {
					return notText(pt, contentPath(i, j))
				}
				t.text(text, pt.cacheControl)
			case stringIs(typ, "refusal"):
				if isString(pt.refusal) {
					t.text(pt.refusal, nil)
				}
			default:
				return refuse(contentPath(i, j)+".type", "must be text or refusal")
			}
		}
	case present(content):
		return refuse(msgPath(i)+".content", "must be a string, an array of text parts or null")
	}
	if t.blocks == before && isString(refusalText) {
		t.text(refusalText, nil) // a refusal is what the assistant said
	}
	if !present(toolCalls) {
		return nil
	}
	if !isArray(toolCalls) {
		return refuse(msgPath(i)+".tool_calls", "must be an array")
	}
	for j, c := range jsonscan.Each(toolCalls) {
		if err := t.toolUse(c, i, j); err != nil {
			return err
		}
	}
	return nil
}

func (t *turns) toolUse(c []byte, i, j int) error {
	path := func() string { return msgPath(i) + ".tool_calls[" + strconv.Itoa(j) + "]" }
	if !isObject(c) {
		return refuse(path(), "must be an object")
	}
	tc := readToolCall(c)
	if present(tc.typ) && !stringIs(tc.typ, "function") {
		return refuse(path()+".type", "only function tool calls translate")
	}
	if !isString(tc.name) {
		return refuse(path()+".function.name", "must be a string")
	}
	if !isString(tc.id) || len(tc.id) == 2 {
		return refuse(path()+".id", "must be a non-empty string")
	}
	t.block()
	t.out = append(t.out, `{"type":"tool_use","id":`...)
	t.out = t.ids.appendAnthropicID(t.out, tc.id)
	t.out = append(t.out, `,"name":`...)
	t.out = append(t.out, tc.name...)
	t.out = append(t.out, `,"input":`...)
	var err error
	if t.out, err = appendArguments(t.out, tc.args); err != nil {
		return refuse(path()+".function.arguments", "must hold a JSON object for an Anthropic upstream")
	}
	t.out = append(t.out, '}')
	return nil
}

// errNotObjectArgs: tool arguments that are not a JSON object.
var errNotObjectArgs = invalidUpstream("tool arguments are not a JSON object")

// appendArguments writes OpenAI tool-call arguments (a string holding JSON) as
// an Anthropic input object. Empty or absent arguments are {}; anything but an
// object is an error.
func appendArguments(out, args []byte) ([]byte, error) {
	switch {
	case !present(args):
		return append(out, "{}"...), nil
	case isObject(args): // some clients send the object itself
		return append(out, args...), nil
	case !isString(args):
		return out, errNotObjectArgs
	}
	start := len(out)
	out = jsonscan.AppendUnquoted(out, args)
	if jsonscan.SkipSpace(out, start) == len(out) {
		return append(out[:start], "{}"...), nil
	}
	if v, ok := jsonscan.Valid(out[start:]); !ok || !isObject(v) {
		return out[:start], errNotObjectArgs
	}
	return out, nil
}

func (t *turns) toolResult(i int, id, content []byte) error {
	if !isString(id) || len(id) == 2 {
		return refuse(msgPath(i)+".tool_call_id", "must be a non-empty string")
	}
	t.block()
	t.out = append(t.out, `{"type":"tool_result","tool_use_id":`...)
	t.out = t.ids.appendAnthropicID(t.out, id)
	t.out = append(t.out, `,"content":`...)
	switch {
	case isString(content):
		t.out = append(t.out, content...)
	case !present(content):
		t.out = append(t.out, `""`...)
	case isArray(content):
		t.out = append(t.out, '[')
		for j, p := range jsonscan.Each(content) {
			pt, _ := readPart(p)
			text, ok := textIn(pt)
			if !ok {
				return notText(pt, contentPath(i, j))
			}
			if j > 0 {
				t.out = append(t.out, ',')
			}
			t.out = appendTextBlock(t.out, text, pt.cacheControl)
		}
		t.out = append(t.out, ']')
	default:
		return refuse(msgPath(i)+".content", "must be a string or an array of text parts")
	}
	t.out = append(t.out, '}')
	return nil
}
