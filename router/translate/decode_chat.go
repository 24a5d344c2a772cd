package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Reading an OpenAI Chat Completions request into the neutral model. The
// parameters no other format can say (n > 1, log probabilities, audio, the
// deprecated functions API, web search) are refused here, since whatever
// format the request is sent on in cannot say them; the rest crosses over
// as slices of the body.

// decodeChat reads a Chat Completions request.
func decodeChat(r *Request, body []byte) (*Request, error) {
	var c chatRequest
	if _, err := readRequest(body, c.set, c.check); err != nil {
		return nil, err
	}
	r.reset(Chat)
	r.ParallelToolCalls = c.parallelToolCalls
	for i, msg := range jsonscan.Each(c.messages) {
		if err := r.chatMessage(i, msg); err != nil {
			return nil, err
		}
	}
	r.Limits = Limits{MaxTokens: c.maxCompletionTokens, Temperature: c.temperature, TopP: c.topP}
	if !present(r.Limits.MaxTokens) {
		r.Limits.MaxTokens = c.maxTokens
	}
	r.Limits.Stop = stopList(c.stop)
	r.User = c.user
	if !present(r.User) {
		r.User = c.safetyIdentifier
	}
	if isTrue(c.stream) {
		r.Stream = true
		r.IncludeUsage = isTrue(jsonscan.Field(c.streamOptions, "include_usage"))
	}
	if err := r.chatTools(c.tools, c.toolChoice); err != nil {
		return nil, err
	}
	var err error
	if r.Output, err = chatOutput(c.responseFormat); err != nil {
		return nil, err
	}
	if present(c.reasoningEffort) {
		if _, err := thinkingBudget(c.reasoningEffort); err != nil {
			return nil, err
		}
		r.Reasoning.Effort = jsonscan.Unquote(c.reasoningEffort)
		r.Reasoning.Off = r.Reasoning.Effort == "none"
	}
	return r, nil
}

// stopList is stop sequences given as one string or an array of them.
func stopList(v []byte) [][]byte {
	switch {
	case isString(v):
		return [][]byte{v}
	case !isArray(v):
		return nil
	}
	var out [][]byte
	for _, s := range jsonscan.Each(v) {
		out = append(out, s)
	}
	return out
}

// chatMessage reads one message: system and developer messages join the
// system prompt, tool messages are user turns holding one result.
func (r *Request) chatMessage(i int, msg []byte) error {
	if !isObject(msg) {
		return refuse(msgPath(i), "must be an object")
	}
	var role, content, toolCalls, callID, refusalText, cache []byte
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
			callID = v
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
				return refuse(msgPath(i)+".audio", "audio is not translated")
			}
		}
	}
	t := Turn{Role: RoleUser, At: i, Cache: cache}
	var err error
	switch {
	case stringIs(role, "system"), stringIs(role, "developer"):
		r.Developer = r.Developer || stringIs(role, "developer")
		return r.chatSystem(i, content, cache)
	case stringIs(role, "user"):
		t.Parts, err = r.chatContent(i, content, false)
	case stringIs(role, "assistant"):
		t.Role = RoleAssistant
		if t.Parts, err = r.chatContent(i, content, true); err == nil && isString(refusalText) {
			t.Parts = append(t.Parts, Part{Kind: PartRefusal, Text: refusalText, At: -1})
		}
		if err == nil {
			t.Parts, err = r.chatCalls(i, toolCalls, t.Parts)
		}
	case stringIs(role, "tool"):
		t.Parts, err = r.chatResult(i, callID, content)
	default:
		return refuse(msgPath(i)+".role", "must be system, developer, user, assistant or tool")
	}
	if err != nil {
		return err
	}
	r.Turns = append(r.Turns, t)
	return nil
}

// chatSystem adds a system message's text to the system prompt.
func (r *Request) chatSystem(i int, content, cache []byte) error {
	parts, err := r.chatContent(i, content, false)
	if err != nil {
		return err
	}
	for j := range parts {
		if parts[j].Kind != PartText {
			return refuse(contentPath(i, j), "must be a text part")
		}
	}
	if n := len(parts); n > 0 && present(cache) {
		parts[n-1].Cache = cache
	}
	if r.System == nil {
		r.System = parts // capped: a later system message's append copies
	} else {
		r.System = append(r.System, parts...)
	}
	return nil
}

// chatContent reads a message's content: a string, or an array of text,
// image, file and (for the assistant) refusal parts.
func (r *Request) chatContent(i int, content []byte, assistant bool) ([]Part, error) {
	switch {
	case !present(content):
		return nil, nil
	case isString(content):
		return r.one(Part{Kind: PartText, Text: content, At: -1}), nil
	case !isArray(content):
		return nil, refuse(msgPath(i)+".content", "must be a string or an array of parts")
	}
	start := len(r.parts)
	for j, v := range jsonscan.Each(content) {
		p, ok := readPart(v)
		path := func() string { return contentPath(i, j) }
		if !ok {
			return nil, refuse(path(), "must be an object")
		}
		np := Part{At: j, Cache: p.cacheControl}
		var err error
		switch {
		case stringIs(p.typ, "text"):
			np.Kind, np.Text = PartText, p.text
			if !isString(p.text) {
				return nil, refuse(path()+".text", "must be a string")
			}
		case assistant && stringIs(p.typ, "refusal"):
			np.Kind, np.Text = PartRefusal, p.refusal
		case !assistant && stringIs(p.typ, "image_url"):
			err = chatImage(&np, p.imageURL, path()+".image_url")
		case !assistant && stringIs(p.typ, "file"):
			err = chatFile(&np, p.file, path()+".file")
		case stringIs(p.typ, "input_audio"):
			return nil, refuse(path(), "audio input is not translated")
		default:
			return nil, refuse(path()+".type", "only text, image_url and file parts translate")
		}
		if err != nil {
			return nil, err
		}
		start = r.add(start, np)
	}
	return r.since(start), nil
}

// chatImage reads an image_url ({"url","detail"} or the bare URL) into p:
// a data: URL inline, an http(s) URL by reference; detail is dropped.
func chatImage(p *Part, iu []byte, path string) error {
	url := iu
	if isObject(iu) {
		if d := jsonscan.Field(iu, "detail"); isString(d) {
			p.Detail = d
		}
		url, path = jsonscan.Field(iu, "url"), path+".url"
	}
	if !isString(url) {
		return refuse(path, "must be a string")
	}
	p.Kind = PartImage
	u := url[1 : len(url)-1] // the escaped form: slices of it cross over
	if mt, data, ok := dataURL(u); ok {
		p.MediaType, p.Data, p.DataEscaped = mt, data, hasEscape(u)
		return nil
	}
	if len(u) > 7 && (string(u[:8]) == "https://" || string(u[:7]) == "http://") {
		p.URL = url
		return nil
	}
	return refuse(path, "must be an http(s) URL or a data:MEDIA_TYPE;base64, URL")
}

// chatFile reads a file part holding a PDF inline as file_data; a file
// by id lives in OpenAI's storage and cannot cross over.
func chatFile(p *Part, f []byte, path string) error {
	data := jsonscan.Field(f, "file_data")
	if !isString(data) {
		return refuse(path, "only a PDF given inline as file_data translates")
	}
	return inlineFile(p, data, jsonscan.Field(f, "filename"), path+".file_data")
}

// inlineFile reads a PDF given as a data: URL string token, and its
// file name, into p.
func inlineFile(p *Part, data, name []byte, path string) error {
	mt, b64, ok := dataURL(data[1 : len(data)-1])
	if !ok || string(mt) != "application/pdf" {
		return refuse(path, "must be a data:application/pdf;base64, URL")
	}
	p.Kind, p.MediaType, p.Data = PartDocument, mt, b64
	p.DataEscaped = hasEscape(b64)
	if isString(name) {
		p.Title = name
	}
	return nil
}

// hasEscape reports whether raw string contents hold a JSON escape.
func hasEscape(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return true
		}
	}
	return false
}

// chatCalls appends an assistant message's tool calls to its parts, the
// whole turn then one run in r.parts.
func (r *Request) chatCalls(i int, calls []byte, parts []Part) ([]Part, error) {
	if !present(calls) {
		return parts, nil
	}
	if !isArray(calls) {
		return nil, refuse(msgPath(i)+".tool_calls", "must be an array")
	}
	start := len(r.parts)
	for _, p := range parts {
		start = r.add(start, p)
	}
	for j, c := range jsonscan.Each(calls) {
		path := func() string { return msgPath(i) + ".tool_calls[" + strconv.Itoa(j) + "]" }
		if !isObject(c) {
			return nil, refuse(path(), "must be an object")
		}
		tc := readToolCall(c)
		switch {
		case present(tc.typ) && !stringIs(tc.typ, "function"):
			return nil, refuse(path()+".type", "only function tool calls translate")
		case !isString(tc.id):
			return nil, refuse(path()+".id", "must be a string")
		case !isString(tc.name):
			return nil, refuse(path()+".function.name", "must be a string")
		case present(tc.args) && !isString(tc.args):
			return nil, refuse(path()+".function.arguments", "must be a string")
		}
		start = r.add(start, Part{Kind: PartToolCall, ID: tc.id, Name: tc.name, Args: tc.args, ArgsQuoted: true, At: j})
	}
	return r.since(start), nil
}

// chatResult reads a tool message: the result of call id, its content a
// string or text parts.
func (r *Request) chatResult(i int, id, content []byte) ([]Part, error) {
	if !isString(id) {
		return nil, refuse(msgPath(i)+".tool_call_id", "must be a string")
	}
	p := Part{Kind: PartToolResult, ID: id, At: -1}
	switch {
	case isString(content):
		p.Text = content
	case present(content):
		parts, err := r.chatContent(i, content, false)
		if err != nil {
			return nil, err
		}
		p.Content = parts
		if p.Content == nil {
			p.Content = []Part{}
		}
	default:
		p.Text = []byte(`""`)
	}
	return r.one(p), nil
}
