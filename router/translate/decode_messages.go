package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Reading an Anthropic Messages request into the neutral model: every
// block a turn can hold (text, image, document, tool_use, tool_result,
// thinking, redacted_thinking) with its cache mark, the system prompt,
// tools, tool choice, thinking and structured output.

// decodeMessages reads a Messages request.
func decodeMessages(r *Request, body []byte) (*Request, error) {
	var m messagesRequest
	var topK []byte
	set := func(k, v []byte) error {
		if string(k) == "top_k" {
			topK = v
		}
		return m.set(k, v)
	}
	if _, err := readRequest(body, set, m.check); err != nil {
		return nil, err
	}
	if present(topK) && !isNumber(topK) {
		return nil, refuse("top_k", "must be an integer")
	}
	r.reset(Messages)
	r.Stream = isTrue(m.stream)
	r.Limits = Limits{MaxTokens: m.maxTokens, Temperature: m.temperature, TopP: m.topP, TopK: topK, Stop: stopList(m.stopSequences)}
	if user := jsonscan.Field(m.metadata, "user_id"); isString(user) {
		r.User = user
	}
	if err := r.messagesSystem(m.system); err != nil {
		return nil, err
	}
	for i, msg := range jsonscan.Each(m.messages) {
		if err := r.messagesTurn(i, msg); err != nil {
			return nil, err
		}
	}
	if err := r.messagesTools(m.tools, m.toolChoice); err != nil {
		return nil, err
	}
	return r, r.messagesSettings(&m)
}

// messagesSettings reads thinking, output_config and output_format.
func (r *Request) messagesSettings(m *messagesRequest) error {
	if present(m.outputConfig) && !isObject(m.outputConfig) {
		return refuse("output_config", "must be an object")
	}
	format, path := jsonscan.Field(m.outputConfig, "format"), "output_config.format"
	if !present(format) {
		format, path = m.outputFormat, "output_format"
	}
	if present(format) {
		schema := jsonscan.Field(format, "schema")
		switch {
		case !stringIs(jsonscan.Field(format, "type"), "json_schema"):
			return refuse(path+".type", "must be json_schema")
		case !isObject(schema):
			return refuse(path+".schema", "must be an object")
		}
		r.Output.Schema = schema
	}
	if _, err := reasoningEffort(m.thinking); err != nil {
		return err
	}
	switch typ := jsonscan.Field(m.thinking, "type"); {
	case stringIs(typ, "enabled"):
		r.Reasoning.Budget, _ = intValue(jsonscan.Field(m.thinking, "budget_tokens"))
		// Anthropic answers with the thinking (summarised) unless display
		// says omitted: ask a Gemini upstream for its thought summary too.
		r.Reasoning.Summary = !stringIs(jsonscan.Field(m.thinking, "display"), "omitted")
	case stringIs(typ, "disabled"):
		r.Reasoning.Off = true
	}
	effort, err := effortLevel(jsonscan.Field(m.outputConfig, "effort"))
	if err != nil {
		return err
	}
	r.Reasoning.Effort = effort
	return nil
}

// messagesSystem reads the system prompt: a string, or text blocks.
func (r *Request) messagesSystem(system []byte) error {
	if isString(system) {
		r.System = r.one(Part{Kind: PartText, Text: system, At: -1})
		return nil
	}
	for j, v := range jsonscan.Each(system) {
		p, _ := readPart(v)
		text, ok := textIn(p)
		if !ok {
			return notText(p, "system["+strconv.Itoa(j)+"]")
		}
		r.System = append(r.System, Part{Kind: PartText, Text: text, Cache: p.cacheControl, At: j})
	}
	return nil
}

// messagesTurn reads one message of either role.
func (r *Request) messagesTurn(i int, msg []byte) error {
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
	t := Turn{Role: RoleUser, At: i}
	switch {
	case stringIs(role, "assistant"):
		t.Role = RoleAssistant
	case !stringIs(role, "user"):
		return refuse(msgPath(i)+".role", "must be user or assistant")
	}
	switch {
	case isString(content):
		t.Parts = r.one(Part{Kind: PartText, Text: content, At: -1})
	case isArray(content):
		start := len(r.parts)
		for j, v := range jsonscan.Each(content) {
			p, err := messagesBlock(v, blockAt{i: i, j: j})
			if err != nil {
				return err
			}
			p.At = j
			start = r.add(start, p)
		}
		t.Parts = r.since(start)
	default:
		return refuse(msgPath(i)+".content", "must be a string or an array of content blocks")
	}
	r.Turns = append(r.Turns, t)
	return nil
}

// blockAt is where a content block stands: messages[i].content[j], or
// content[j] of the tool result in names. A refusal builds its text; a
// block that translates costs none.
type blockAt struct {
	i, j int
	in   func() string
}

func (w blockAt) String() string {
	if w.in != nil {
		return w.in() + ".content[" + strconv.Itoa(w.j) + "]"
	}
	return contentPath(w.i, w.j)
}

// messagesBlock reads one content block.
func messagesBlock(v []byte, at blockAt) (Part, error) {
	b, ok := readPart(v)
	if !ok {
		return Part{}, refuse(at.String(), "must be an object")
	}
	p := Part{Cache: b.cacheControl}
	switch typ := string(b.typ); typ {
	case `"text"`:
		if !isString(b.text) {
			return p, refuse(at.String()+".text", "must be a string")
		}
		p.Kind, p.Text = PartText, b.text
	case `"image"`, `"document"`:
		p.Kind, p.Title = PartImage, b.title
		if typ == `"document"` {
			p.Kind = PartDocument
		}
		return p, messagesSource(&p, b.source, func() string { return at.String() + ".source" })
	case `"tool_use"`:
		if !isString(b.id) || !isString(b.name) {
			return p, refuse(at.String(), "a tool_use block needs a string id and name")
		}
		p.Kind, p.ID, p.Name, p.Args = PartToolCall, b.id, b.name, b.input
	case `"tool_result"`:
		return messagesResult(p, b, at)
	case `"thinking"`:
		p.Kind, p.Text = PartThinking, jsonscan.Field(v, "thinking")
		p.Signature = jsonscan.Field(v, "signature")
	case `"redacted_thinking"`:
		data := jsonscan.Field(v, "data")
		if !isString(data) {
			return p, refuse(at.String()+".data", "must be a string")
		}
		p.Kind, p.Data = PartRedactedThinking, data[1:len(data)-1]
		p.DataEscaped = hasEscape(p.Data)
	default:
		return p, refuse(at.String()+".type", "only text, image, document, tool_use, tool_result, thinking and redacted_thinking blocks translate")
	}
	return p, nil
}

// messagesSource reads an image or document source: base64 data or a URL.
func messagesSource(p *Part, src []byte, path func() string) error {
	switch typ := jsonscan.Field(src, "type"); {
	case stringIs(typ, "base64"):
		mt, data := jsonscan.Field(src, "media_type"), jsonscan.Field(src, "data")
		if !isString(mt) || !isString(data) {
			return refuse(path(), "base64 source needs a string media_type and data")
		}
		p.MediaType, p.Data = mt[1:len(mt)-1], data[1:len(data)-1]
		p.DataEscaped = hasEscape(p.MediaType) || hasEscape(p.Data)
	case p.Kind == PartDocument && stringIs(typ, "text"):
		// A plain-text document is its text: every upstream reads that.
		data := jsonscan.Field(src, "data")
		if !isString(data) {
			return refuse(path()+".data", "must be a string")
		}
		*p = Part{Kind: PartText, Text: data, Cache: p.Cache}
	case stringIs(typ, "url"):
		url := jsonscan.Field(src, "url")
		if !isString(url) {
			return refuse(path()+".url", "must be a string")
		}
		p.URL = url
	default:
		return refuse(path()+".type", "only base64, url and (for a document) text sources translate")
	}
	return nil
}

// messagesResult reads a tool_result block: its content a string, or text
// and image blocks.
func messagesResult(p Part, b part, at blockAt) (Part, error) {
	if !isString(b.toolUseID) {
		return p, refuse(at.String()+".tool_use_id", "must be a string")
	}
	p.Kind, p.ID = PartToolResult, b.toolUseID
	p.IsError = isTrue(b.isError)
	switch {
	case !present(b.content):
		p.Text = []byte(`""`)
	case isString(b.content):
		p.Text = b.content
	case isArray(b.content):
		p.Content = []Part{}
		for j, v := range jsonscan.Each(b.content) {
			c, err := messagesBlock(v, blockAt{j: j, in: at.String})
			if err != nil {
				return p, err
			}
			if c.Kind != PartText && c.Kind != PartImage && c.Kind != PartDocument {
				return p, refuse(at.String()+".content["+strconv.Itoa(j)+"]", "a tool result holds text, images and documents")
			}
			c.At = j
			p.Content = append(p.Content, c)
		}
	default:
		return p, refuse(at.String()+".content", "must be a string or an array of blocks")
	}
	return p, nil
}

// messagesTools reads tools (custom ones: server tools run inside
// Anthropic's API) and the tool choice.
func (r *Request) messagesTools(tools, choice []byte) error {
	for j, v := range jsonscan.Each(tools) {
		path := func() string { return "tools[" + strconv.Itoa(j) + "]" }
		if !isObject(v) {
			return refuse(path(), "must be an object")
		}
		f := readFunctionTool(v, "input_schema")
		if present(f.typ) && !stringIs(f.typ, "custom") {
			return refuse(path()+".type", "server tools run inside Anthropic's API and do not translate")
		}
		t, err := neutralTool(f, path, "input_schema")
		if err != nil {
			return err
		}
		t.Cache = f.cache
		r.Tools = append(r.Tools, t)
	}
	if !present(choice) {
		return nil
	}
	if !isObject(choice) {
		return refuse("tool_choice", "must be an object")
	}
	r.ToolChoice.Said = true
	switch typ := jsonscan.Field(choice, "type"); {
	case stringIs(typ, "auto"):
	case stringIs(typ, "any"):
		r.ToolChoice.Mode = ToolAny
	case stringIs(typ, "none"):
		r.ToolChoice.Mode = ToolNone
	case stringIs(typ, "tool"):
		name := jsonscan.Field(choice, "name")
		if !isString(name) {
			return refuse("tool_choice.name", "must be a string")
		}
		r.ToolChoice = ToolChoice{Mode: ToolNamed, Name: name, Said: true}
	default:
		return refuse("tool_choice.type", "must be auto, any, tool or none")
	}
	if isTrue(jsonscan.Field(choice, "disable_parallel_tool_use")) {
		r.ParallelToolCalls = []byte("false")
	}
	return nil
}
