package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// chatMessages writes OpenAI messages.
type chatMessages struct {
	out []byte
	n   int // messages written

	// Scratch kept across messages, so a long conversation allocates them once.
	texts                    [][]byte
	calls, parts, toolImages []block
}

// block is a content block kept for later, with where it stood for errors:
// content[outer], or content[outer].content[inner] when inner >= 0.
type block struct {
	p            part
	outer, inner int
}

func (b block) path(i int) string {
	p := msgPath(i) + ".content[" + strconv.Itoa(b.outer) + "]"
	if b.inner >= 0 {
		p += ".content[" + strconv.Itoa(b.inner) + "]"
	}
	return p
}

// begin starts a message of role; the caller writes the rest of it.
func (c *chatMessages) begin(role string) {
	if c.n > 0 {
		c.out = append(c.out, ',')
	}
	c.n++
	c.out = append(c.out, `{"role":"`...)
	c.out = append(c.out, role...)
	c.out = append(c.out, `","content":`...)
}

// whole writes a message of role whose content is one value (a string).
func (c *chatMessages) whole(role string, content []byte) {
	c.begin(role)
	c.out = append(c.out, content...)
	c.out = append(c.out, '}')
}

// system becomes the first message, role system.
func (c *chatMessages) system(sys []byte) error {
	if isEmptyString(sys) {
		return nil
	}
	if isString(sys) {
		c.whole("system", sys)
		return nil
	}
	if !present(sys) {
		return nil
	}
	c.texts = c.texts[:0]
	for j, b := range jsonscan.Each(sys) {
		text, err := textPart(b, func() string { return "system[" + strconv.Itoa(j) + "]" })
		if err != nil {
			return err
		}
		c.texts = append(c.texts, text)
	}
	if len(c.texts) == 0 {
		return nil
	}
	c.begin("system")
	c.out = appendTexts(c.out, c.texts)
	c.out = append(c.out, '}')
	return nil
}

// appendTexts writes text blocks as OpenAI content: one is a string, several
// an array of text parts, as Chat Completions documents both.
func appendTexts(out []byte, texts [][]byte) []byte {
	if len(texts) == 1 {
		return append(out, texts[0]...)
	}
	out = append(out, '[')
	for i, t := range texts {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendTextBlock(out, t, nil)
	}
	return append(out, ']')
}

func (c *chatMessages) message(i int, msg []byte) error {
	if !isObject(msg) {
		return refuse(msgPath(i), "must be an object")
	}
	var role, content []byte
	m := jsonscan.MembersOf(msg)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "role":
			role = v
		case "content":
			content = v
		}
	}
	if !isString(content) && !isArray(content) {
		return refuse(msgPath(i)+".content", "must be a string or an array of content blocks")
	}
	switch {
	case stringIs(role, "user"):
		if isString(content) {
			c.whole("user", content)
			return nil
		}
		return c.user(i, content)
	case stringIs(role, "assistant"):
		if isString(content) {
			c.whole("assistant", content)
			return nil
		}
		return c.assistant(i, content)
	}
	return refuse(msgPath(i)+".role", "must be user or assistant")
}

// user writes a user turn: its tool results first, each as a tool message
// (Chat Completions wants them straight after the assistant's tool calls),
// then the rest of its content as one user message. Images inside tool
// results go into that user message, since tool messages carry text only.
func (c *chatMessages) user(i int, content []byte) error {
	c.parts, c.toolImages = c.parts[:0], c.toolImages[:0]
	results := 0
	for j, b := range jsonscan.Each(content) {
		p, _ := readPart(b)
		switch typ := p.typ; {
		case stringIs(typ, "tool_result"):
			if err := c.toolResult(p, i, j); err != nil {
				return err
			}
			results++
		case stringIs(typ, "text"), stringIs(typ, "image"), stringIs(typ, "document"):
			c.parts = append(c.parts, block{p, j, -1})
		case typ == nil:
			return refuse(contentPath(i, j)+".type", "required")
		default:
			return refuse(contentPath(i, j)+".type", "must be text, image, document or tool_result for an OpenAI upstream")
		}
	}
	if len(c.parts)+len(c.toolImages) == 0 {
		if results == 0 {
			// Nothing to say: sent as an empty string, so the upstream judges
			// it, rather than a turn silently vanishing.
			c.begin("user")
			c.out = append(c.out, `""}`...)
		}
		return nil
	}
	c.begin("user")
	c.out = append(c.out, '[')
	n := 0
	for _, list := range [2][]block{c.toolImages, c.parts} {
		for _, b := range list {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			n++
			var err error
			if c.out, err = appendChatPart(c.out, b.p, b.path(i)); err != nil {
				return err
			}
		}
	}
	c.out = append(c.out, "]}"...)
	return nil
}

// appendChatPart writes a text, image or document block as an OpenAI content
// part.
func appendChatPart(out []byte, b part, path string) ([]byte, error) {
	switch typ := b.typ; {
	case stringIs(typ, "text"):
		text, ok := textIn(b)
		if !ok {
			return out, notText(b, path)
		}
		return appendTextBlock(out, text, nil), nil
	case stringIs(typ, "image"):
		src := b.source
		switch st := jsonscan.Field(src, "type"); {
		case stringIs(st, "base64"):
			mt, data := jsonscan.Field(src, "media_type"), jsonscan.Field(src, "data")
			if !isString(mt) || !isString(data) {
				return out, refuse(path+".source", "base64 needs media_type and data strings")
			}
			out = append(out, `{"type":"image_url","image_url":{"url":"data:`...)
			out = append(out, mt[1:len(mt)-1]...)
			out = append(out, ";base64,"...)
			out = append(out, data[1:len(data)-1]...)
			return append(out, `"}}`...), nil
		case stringIs(st, "url"):
			url := jsonscan.Field(src, "url")
			if !isString(url) {
				return out, refuse(path+".source.url", "must be a string")
			}
			out = append(out, `{"type":"image_url","image_url":{"url":`...)
			out = append(out, url...)
			return append(out, "}}"...), nil
		}
		return out, refuse(path+".source.type", "must be base64 or url for an OpenAI upstream")
	case stringIs(typ, "document"):
		src := b.source
		switch st := jsonscan.Field(src, "type"); {
		case stringIs(st, "base64") && stringIs(jsonscan.Field(src, "media_type"), "application/pdf"):
			data := jsonscan.Field(src, "data")
			if !isString(data) {
				return out, refuse(path+".source.data", "must be a string")
			}
			out = append(out, `{"type":"file","file":{"filename":`...)
			if isString(b.title) {
				out = append(out, b.title...)
			} else {
				out = append(out, `"document.pdf"`...)
			}
			out = append(out, `,"file_data":"data:application/pdf;base64,`...)
			out = append(out, data[1:len(data)-1]...)
			return append(out, `"}}`...), nil
		case stringIs(st, "text"):
			data := jsonscan.Field(src, "data")
			if !isString(data) {
				return out, refuse(path+".source.data", "must be a string")
			}
			return appendTextBlock(out, data, nil), nil
		}
		return out, refuse(path+".source", "only a base64 PDF or plain text document translates for an OpenAI upstream")
	}
	return out, refuse(path+".type", "must be text, image or document")
}

// toolResult writes one tool message.
func (c *chatMessages) toolResult(b part, i, outer int) error {
	// is_error is dropped: a tool message has no such flag; the content says
	// what went wrong.
	id, content := b.toolUseID, b.content
	if !isString(id) {
		return refuse(contentPath(i, outer)+".tool_use_id", "must be a string")
	}
	c.begin("tool")
	switch {
	case isString(content):
		c.out = append(c.out, content...)
	case !present(content):
		c.out = append(c.out, `""`...)
	case isArray(content):
		c.texts = c.texts[:0]
		for j, cb := range jsonscan.Each(content) {
			p, _ := readPart(cb)
			switch typ := p.typ; {
			case stringIs(typ, "text"):
				text, ok := textIn(p)
				if !ok {
					return notText(p, contentPath(i, outer)+".content["+strconv.Itoa(j)+"]")
				}
				c.texts = append(c.texts, text)
			case stringIs(typ, "image"):
				c.toolImages = append(c.toolImages, block{p, outer, j})
			default:
				return refuse(contentPath(i, outer)+".content["+strconv.Itoa(j)+"].type", "must be text or image for an OpenAI upstream")
			}
		}
		if len(c.texts) == 0 {
			c.out = append(c.out, `""`...)
		} else {
			c.out = appendTexts(c.out, c.texts)
		}
	default:
		return refuse(contentPath(i, outer)+".content", "must be a string or an array of blocks")
	}
	c.out = append(c.out, `,"tool_call_id":`...)
	c.out = append(c.out, id...)
	c.out = append(c.out, '}')
	return nil
}

// assistant writes an assistant turn: its text blocks as content, its
// tool_use blocks as tool_calls. Thinking blocks are dropped: Chat Completions
// has no place for them in a request.
func (c *chatMessages) assistant(i int, content []byte) error {
	c.texts, c.calls = c.texts[:0], c.calls[:0]
	for j, b := range jsonscan.Each(content) {
		p, _ := readPart(b)
		switch typ := p.typ; {
		case stringIs(typ, "text"):
			text, ok := textIn(p)
			if !ok {
				return notText(p, contentPath(i, j))
			}
			c.texts = append(c.texts, text)
		case stringIs(typ, "tool_use"):
			c.calls = append(c.calls, block{p, j, -1})
		case stringIs(typ, "thinking"), stringIs(typ, "redacted_thinking"):
		default:
			return refuse(contentPath(i, j)+".type", "must be text, tool_use or thinking for an OpenAI upstream")
		}
	}
	c.begin("assistant")
	if len(c.texts) == 0 {
		c.out = append(c.out, "null"...)
	} else {
		c.out = appendTexts(c.out, c.texts)
	}
	if len(c.calls) > 0 {
		c.out = append(c.out, `,"tool_calls":[`...)
		for j, b := range c.calls {
			if j > 0 {
				c.out = append(c.out, ',')
			}
			id, name, input := b.p.id, b.p.name, b.p.input
			if !isString(id) || !isString(name) {
				return refuse(b.path(i), "a tool_use block needs id and name strings")
			}
			c.out = append(c.out, `{"id":`...)
			c.out = append(c.out, id...)
			c.out = append(c.out, `,"type":"function","function":{"name":`...)
			c.out = append(c.out, name...)
			c.out = append(c.out, `,"arguments":`...)
			if present(input) {
				c.out = jsonscan.AppendString(c.out, input)
			} else {
				c.out = append(c.out, `"{}"`...)
			}
			c.out = append(c.out, "}}"...)
		}
		c.out = append(c.out, ']')
	}
	c.out = append(c.out, '}')
	return nil
}
