package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Reading an OpenAI Responses request into the neutral model. Each input
// item is one turn (At is its index in input): a message, a function call,
// a function call's output, or a reasoning item, whose encrypted_content
// carries a thinking signature back to the upstream that signed it.
// Instructions and system or developer messages are the system prompt.

// decodeResponses reads a Responses request.
func decodeResponses(r *Request, body []byte) (*Request, error) {
	var q responsesRequest
	var include []byte
	set := func(k, v []byte) error {
		if string(k) == "include" {
			include = v
		}
		return q.set(k, v)
	}
	if _, err := readRequest(body, set, q.check); err != nil {
		return nil, err
	}
	r.reset(Responses)
	r.Stream, r.IncludeUsage, r.ParallelToolCalls = isTrue(q.stream), true, q.parallelToolCalls
	r.Limits = Limits{MaxTokens: q.maxOutputTokens, Temperature: q.temperature, TopP: q.topP}
	r.User = q.user
	if !present(r.User) {
		r.User = q.safetyIdentifier
	}
	if present(q.instructions) && !isEmptyString(q.instructions) {
		r.System = r.one(Part{Kind: PartText, Text: q.instructions, At: -1})
	}
	if isString(q.input) {
		r.Turns = []Turn{{Role: RoleUser, At: 0, Parts: []Part{{Kind: PartText, Text: q.input, At: -1}}}}
	}
	for j, item := range jsonscan.Each(q.input) {
		if err := r.responsesItem(j, item); err != nil {
			return nil, err
		}
	}
	if err := r.responsesTools(q.tools, q.toolChoice); err != nil {
		return nil, err
	}
	var err error
	if r.Output, err = responsesOutput(jsonscan.Field(q.text, "format")); err != nil {
		return nil, err
	}
	r.Reasoning.Encrypted = allElements(include, isString) && hasString(include, "reasoning.encrypted_content")
	return r, r.responsesReasoning(q.reasoning)
}

// hasString reports whether the array v holds the string s.
func hasString(v []byte, s string) bool {
	for _, el := range jsonscan.Each(v) {
		if stringIs(el, s) {
			return true
		}
	}
	return false
}

// responsesReasoning reads reasoning.effort and reasoning.summary.
func (r *Request) responsesReasoning(v []byte) error {
	effort := jsonscan.Field(v, "effort")
	if present(effort) {
		if !isString(effort) {
			return refuse("reasoning.effort", "must be a string")
		}
		if _, err := thinkingBudget(effort); err != nil {
			return refuse("reasoning.effort", "must be none, minimal, low, medium, high or xhigh")
		}
		r.Reasoning.Effort = jsonscan.Unquote(effort)
		r.Reasoning.Off = r.Reasoning.Effort == "none"
	}
	summary := jsonscan.Field(v, "summary")
	r.Reasoning.Summary = present(summary) && !stringIs(summary, "none")
	return nil
}

// responsesItem reads one input item as a turn.
func (r *Request) responsesItem(j int, item []byte) error {
	if !isObject(item) {
		return refuse(itemPath(j), "must be an object")
	}
	var typ, role, content, callID, name, args, output []byte
	m := jsonscan.MembersOf(item)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = v
		case "role":
			role = v
		case "content":
			content = v
		case "call_id":
			callID = v
		case "name":
			name = v
		case "arguments":
			args = v
		case "output":
			output = v
		}
	}
	switch {
	case !present(typ) || stringIs(typ, "message"):
		return r.responsesMessage(j, role, content)
	case stringIs(typ, "function_call"):
		return r.responsesCall(j, callID, name, args)
	case stringIs(typ, "function_call_output"):
		return r.responsesCallOutput(j, callID, output)
	case stringIs(typ, "reasoning"):
		r.responsesThinking(j, item)
		return nil
	case stringIs(typ, "item_reference"):
		return refuse(itemPath(j), "an item reference needs the stored items only an OpenAI target with the Responses API keeps")
	}
	return refuse(itemPath(j)+".type", "must be message, function_call, function_call_output or reasoning; the other items belong to tools that run inside OpenAI's API")
}

// responsesMessage reads a message item; system and developer messages
// join the system prompt.
func (r *Request) responsesMessage(j int, role, content []byte) error {
	t := Turn{Role: RoleUser, At: j}
	switch {
	case stringIs(role, "assistant"):
		t.Role = RoleAssistant
	case stringIs(role, "user"), stringIs(role, "system"), stringIs(role, "developer"):
	case role == nil:
		return refuse(itemPath(j)+".role", "required")
	default:
		return refuse(itemPath(j)+".role", "must be user, assistant, system or developer")
	}
	switch {
	case isString(content):
		t.Parts = r.one(Part{Kind: PartText, Text: content, At: -1})
	case isArray(content):
		start := len(r.parts)
		for k, v := range jsonscan.Each(content) {
			p, err := responsesPart(v, func() string { return itemPath(j) + ".content[" + strconv.Itoa(k) + "]" }, t.Role == RoleAssistant)
			if err != nil {
				return err
			}
			p.At = k
			start = r.add(start, p)
		}
		t.Parts = r.since(start)
	default:
		return refuse(itemPath(j)+".content", "must be a string or an array of content parts")
	}
	if stringIs(role, "system") || stringIs(role, "developer") {
		r.Developer = r.Developer || stringIs(role, "developer")
		for _, p := range t.Parts {
			if p.Kind != PartText {
				return refuse(itemPath(j)+".content", "a system message holds text only")
			}
		}
		r.System = append(r.System, t.Parts...)
		return nil
	}
	r.Turns = append(r.Turns, t)
	return nil
}

// responsesPart reads one content part of a message or of a function
// call's output.
func responsesPart(v []byte, path func() string, assistant bool) (Part, error) {
	if !isObject(v) {
		return Part{}, refuse(path(), "must be an object")
	}
	var typ, text, refusalText, imageURL, detail, fileID, fileData, filename []byte
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "type":
			typ = val
		case "text":
			text = val
		case "refusal":
			refusalText = val
		case "image_url":
			imageURL = val
		case "detail":
			detail = val
		case "file_id":
			fileID = val
		case "file_data":
			fileData = val
		case "filename":
			filename = val
		}
	}
	p := Part{}
	switch {
	case stringIs(typ, "input_text"), stringIs(typ, "output_text"):
		if !isString(text) {
			return p, refuse(path()+".text", "must be a string")
		}
		p.Kind, p.Text = PartText, text
	case assistant && stringIs(typ, "refusal") && isString(refusalText):
		p.Kind, p.Text = PartRefusal, refusalText
	case !assistant && stringIs(typ, "input_image"):
		if !isString(imageURL) {
			return p, refuse(path(), "only an image given by image_url translates (a file_id lives in OpenAI's storage)")
		}
		if isString(detail) {
			p.Detail = detail
		}
		return p, chatImage(&p, imageURL, path()+".image_url")
	case !assistant && stringIs(typ, "input_file"):
		if !isString(fileData) || present(fileID) {
			return p, refuse(path(), "only a file given inline as file_data translates (a file_id lives in OpenAI's storage)")
		}
		return p, inlineFile(&p, fileData, filename, path()+".file_data")
	default:
		return p, refuse(path()+".type", "must be input_text, input_image, input_file, output_text or refusal")
	}
	return p, nil
}
