package translate

import (
	"bytes"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// DefaultMaxTokens is the max_tokens sent to an Anthropic upstream when an
// OpenAI request names neither max_completion_tokens nor max_tokens:
// Anthropic requires a limit, OpenAI defaults to the model's own.
const DefaultMaxTokens = 4096

var (
	errNotJSON   = &RequestError{Param: "", Message: "request body is not valid JSON"}
	errNotObject = &RequestError{Param: "", Message: "request body must be a JSON object"}
)

// chatRequest holds the raw values of the OpenAI request members that are
// translated; everything else is dropped or refused as it is read.
type chatRequest struct {
	messages, maxCompletionTokens, maxTokens, temperature, topP, stop []byte
	stream, streamOptions, user, safetyIdentifier                     []byte
	tools, toolChoice, parallelToolCalls                              []byte
}

// ChatToMessages turns an OpenAI Chat Completions request into an Anthropic
// Messages request for upstreamModel. includeUsage reports whether the client
// asked for stream usage (stream_options.include_usage), which the answer's
// stream translator needs to know. A request the Messages API cannot express
// is a *RequestError.
func ChatToMessages(body []byte, upstreamModel string) (out []byte, includeUsage bool, err error) {
	v, err := requestObject(body)
	if err != nil {
		return nil, false, err
	}
	var r chatRequest
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		if err := r.set(k, val); err != nil {
			return nil, false, err
		}
	}
	if err := r.check(); err != nil {
		return nil, false, err
	}

	out = make([]byte, 0, len(v)+len(v)/16+256)
	out = append(out, `{"model":`...)
	out = jsonscan.AppendString(out, upstreamModel)
	out = append(out, `,"max_tokens":`...)
	switch {
	case present(r.maxCompletionTokens):
		out = append(out, r.maxCompletionTokens...)
	case present(r.maxTokens):
		out = append(out, r.maxTokens...)
	default:
		out = appendInt(out, DefaultMaxTokens)
	}
	if present(r.temperature) {
		out = append(out, `,"temperature":`...)
		// OpenAI's scale runs to 2, Anthropic's to 1: a hotter request gets the
		// hottest Anthropic allows rather than a refusal.
		if t, err := strconv.ParseFloat(string(r.temperature), 64); err == nil && t > 1 {
			out = append(out, '1')
		} else {
			out = append(out, r.temperature...)
		}
	}
	if present(r.topP) {
		out = append(out, `,"top_p":`...)
		out = append(out, r.topP...)
	}
	if present(r.stop) && string(r.stop) != "[]" {
		out = append(out, `,"stop_sequences":`...)
		if isString(r.stop) {
			out = append(out, '[')
			out = append(out, r.stop...)
			out = append(out, ']')
		} else {
			out = append(out, r.stop...)
		}
	}
	switch {
	case present(r.user):
		out = append(out, `,"metadata":{"user_id":`...)
		out = append(out, r.user...)
		out = append(out, '}')
	case present(r.safetyIdentifier):
		out = append(out, `,"metadata":{"user_id":`...)
		out = append(out, r.safetyIdentifier...)
		out = append(out, '}')
	}
	if present(r.tools) && string(r.tools) != "[]" {
		if out, err = appendAnthropicTools(out, r.tools); err != nil {
			return nil, false, err
		}
		if out, err = appendAnthropicToolChoice(out, r.toolChoice, r.parallelToolCalls); err != nil {
			return nil, false, err
		}
	}
	if isTrue(r.stream) {
		out = append(out, `,"stream":true`...)
		includeUsage = isTrue(jsonscan.Field(r.streamOptions, "include_usage"))
	}
	out = append(out, `,"messages":[`...)
	t := turns{out: out}
	msgs := jsonscan.ElementsOf(r.messages)
	for i := 0; ; i++ {
		msg, ok := msgs.Next()
		if !ok {
			break
		}
		if err := t.message(i, msg); err != nil {
			return nil, false, err
		}
	}
	t.close()
	out = append(t.out, ']')
	switch len(t.system) {
	case 0:
	case 1:
		out = append(out, `,"system":`...)
		out = append(out, t.system[0]...)
	default:
		out = append(out, `,"system":[`...)
		for i, s := range t.system {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendTextBlock(out, s)
		}
		out = append(out, ']')
	}
	return append(out, '}'), includeUsage, nil
}

// set records one top-level member, refusing the parameters whose loss would
// change what the client gets.
func (r *chatRequest) set(k, v []byte) error {
	switch string(k) {
	case "messages":
		r.messages = v
	case "max_completion_tokens":
		r.maxCompletionTokens = v
	case "max_tokens":
		r.maxTokens = v
	case "temperature":
		r.temperature = v
	case "top_p":
		r.topP = v
	case "stop":
		r.stop = v
	case "stream":
		r.stream = v
	case "stream_options":
		r.streamOptions = v
	case "user":
		r.user = v
	case "safety_identifier":
		r.safetyIdentifier = v
	case "tools":
		r.tools = v
	case "tool_choice":
		r.toolChoice = v
	case "parallel_tool_calls":
		r.parallelToolCalls = v
	case "n":
		if n, ok := intValue(v); present(v) && (!ok || n != 1) {
			return refuse("n", "must be 1: an Anthropic upstream generates one choice")
		}
	case "logprobs":
		if isTrue(v) {
			return refuse("logprobs", "log probabilities are not available from an Anthropic upstream")
		}
	case "top_logprobs":
		if present(v) {
			return refuse("top_logprobs", "log probabilities are not available from an Anthropic upstream")
		}
	case "response_format":
		if present(v) && !stringIs(jsonscan.Field(v, "type"), "text") {
			return refuse("response_format", "an Anthropic upstream cannot be held to a JSON format; only {\"type\":\"text\"} translates")
		}
	case "audio":
		if present(v) {
			return refuse("audio", "audio output is not available from an Anthropic upstream")
		}
	case "modalities":
		if present(v) && !onlyText(v) {
			return refuse("modalities", "audio output is not available from an Anthropic upstream")
		}
	case "functions", "function_call":
		if present(v) {
			return refuse(string(k), "the deprecated functions API is not translated; use tools and tool_choice")
		}
	case "web_search_options":
		if present(v) {
			return refuse("web_search_options", "web search is not available from an Anthropic upstream")
		}
	}
	// Everything else is dropped (docs/translation.md lists what and why):
	// penalties, logit_bias, seed, store, metadata, service_tier, prediction,
	// reasoning_effort, verbosity, prompt_cache_key, and unknown members.
	return nil
}

// onlyText reports whether a modalities array asks for text alone.
func onlyText(v []byte) bool {
	return allElements(v, func(el []byte) bool { return stringIs(el, "text") })
}

// check refuses values of the wrong JSON type, naming the client's parameter
// rather than leaving the upstream to name its own.
func (r *chatRequest) check() error {
	switch {
	case r.messages == nil:
		return refuse("messages", "required")
	case !isArray(r.messages):
		return refuse("messages", "must be an array")
	case present(r.maxCompletionTokens) && !isNumber(r.maxCompletionTokens):
		return refuse("max_completion_tokens", "must be an integer")
	case present(r.maxTokens) && !isNumber(r.maxTokens):
		return refuse("max_tokens", "must be an integer")
	case present(r.temperature) && !isNumber(r.temperature):
		return refuse("temperature", "must be a number")
	case present(r.topP) && !isNumber(r.topP):
		return refuse("top_p", "must be a number")
	case present(r.stop) && !isString(r.stop) && !allStrings(r.stop):
		return refuse("stop", "must be a string or an array of strings")
	case present(r.stream) && !isBool(r.stream):
		return refuse("stream", "must be a boolean")
	case present(r.user) && !isString(r.user):
		return refuse("user", "must be a string")
	case present(r.safetyIdentifier) && !isString(r.safetyIdentifier):
		return refuse("safety_identifier", "must be a string")
	case present(r.tools) && !isArray(r.tools):
		return refuse("tools", "must be an array")
	case present(r.parallelToolCalls) && !isBool(r.parallelToolCalls):
		return refuse("parallel_tool_calls", "must be a boolean")
	}
	return nil
}

func allStrings(v []byte) bool { return allElements(v, isString) }

// turns writes Anthropic messages. Consecutive messages that become the same
// role are merged into one turn (tool results and the user message after them
// are one user turn), and system or developer messages, wherever they stand,
// become the top-level system prompt in their order.
type turns struct {
	out    []byte
	role   string   // of the open turn; "" when none is open
	blocks int      // content blocks written in the open turn
	n      int      // turns written
	system [][]byte // string tokens of the system prompt's parts
}

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

func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

func (t *turns) message(i int, msg []byte) error {
	if !isObject(msg) {
		return refuse(msgPath(i), "must be an object")
	}
	var role, content, toolCalls, toolCallID, refusalText []byte
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
	switch {
	case stringIs(role, "system"), stringIs(role, "developer"):
		return t.systemContent(i, content)
	case stringIs(role, "user"):
		t.open("user")
		return t.userContent(i, content)
	case stringIs(role, "assistant"):
		t.open("assistant")
		return t.assistant(i, content, refusalText, toolCalls)
	case stringIs(role, "tool"):
		t.open("user")
		return t.toolResult(i, toolCallID, content)
	case role == nil:
		return refuse(msgPath(i)+".role", "required")
	}
	return refuse(msgPath(i)+".role", "must be system, developer, user, assistant or tool")
}

func (t *turns) systemContent(i int, content []byte) error {
	if isString(content) {
		if !isEmptyString(content) {
			t.system = append(t.system, content)
		}
		return nil
	}
	if !isArray(content) {
		return refuse(msgPath(i)+".content", "must be a string or an array of text parts")
	}
	for j, p := range jsonscan.Each(content) {
		text, err := textPart(p, func() string { return contentPath(i, j) })
		if err != nil {
			return err
		}
		if !isEmptyString(text) {
			t.system = append(t.system, text)
		}
	}
	return nil
}

func appendTextBlock(out, text []byte) []byte {
	out = append(out, `{"type":"text","text":`...)
	out = append(out, text...)
	return append(out, '}')
}

func (t *turns) text(text []byte) {
	if isEmptyString(text) {
		return // Anthropic refuses empty text blocks
	}
	t.block()
	t.out = appendTextBlock(t.out, text)
}

func (t *turns) userContent(i int, content []byte) error {
	switch {
	case isString(content):
		t.text(content)
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
		switch typ := pt.typ; {
		case stringIs(typ, "text"):
			text, ok := textIn(pt)
			if !ok {
				return notText(pt, contentPath(i, j))
			}
			t.text(text)
		case stringIs(typ, "image_url"):
			if err := t.image(pt.imageURL, contentPath(i, j)+".image_url"); err != nil {
				return err
			}
		case stringIs(typ, "file"):
			if err := t.file(pt.file, contentPath(i, j)+".file"); err != nil {
				return err
			}
		case stringIs(typ, "input_audio"):
			return refuse(contentPath(i, j), "audio input is not available from an Anthropic upstream")
		default:
			return refuse(contentPath(i, j)+".type", "must be text, image_url or file")
		}
	}
	return nil
}

// stringContents returns what the string token v holds, decoded only when it
// has escapes (the common case copies nothing), and whether it had any.
func stringContents(v []byte) (s []byte, escaped bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, false
	}
	return jsonscan.AppendUnquoted(nil, v), true
}

// appendContents writes s as a JSON string; s is raw string contents when
// !escaped (copied as they are, even a megabyte of base64), else decoded text.
func appendContents(out, s []byte, escaped bool) []byte {
	if escaped {
		return jsonscan.AppendString(out, s)
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

// dataURL splits data:MEDIA_TYPE[;params];base64,DATA.
func dataURL(u []byte) (mediaType, data []byte, ok bool) {
	if !bytes.HasPrefix(u, []byte("data:")) {
		return nil, nil, false
	}
	comma := bytes.IndexByte(u, ',')
	if comma < 0 {
		return nil, nil, false
	}
	meta := u[len("data:"):comma]
	if !bytes.HasSuffix(meta, []byte(";base64")) {
		return nil, nil, false
	}
	meta = meta[:len(meta)-len(";base64")]
	if semi := bytes.IndexByte(meta, ';'); semi >= 0 {
		meta = meta[:semi]
	}
	return meta, u[comma+1:], len(meta) > 0
}

// image writes an OpenAI image_url ({"url","detail"}, or the bare URL string
// older clients send) as an Anthropic image block; detail is dropped.
func (t *turns) image(iu []byte, path string) error {
	url := iu
	if isObject(iu) {
		url, path = jsonscan.Field(iu, "url"), path+".url"
	}
	if !isString(url) {
		return refuse(path, "must be a string")
	}
	u, escaped := stringContents(url)
	if mt, data, ok := dataURL(u); ok {
		t.block()
		t.out = append(t.out, `{"type":"image","source":{"type":"base64","media_type":`...)
		t.out = appendContents(t.out, mt, escaped)
		t.out = append(t.out, `,"data":`...)
		t.out = appendContents(t.out, data, escaped)
		t.out = append(t.out, "}}"...)
		return nil
	}
	if bytes.HasPrefix(u, []byte("https://")) || bytes.HasPrefix(u, []byte("http://")) {
		t.block()
		t.out = append(t.out, `{"type":"image","source":{"type":"url","url":`...)
		t.out = append(t.out, url...)
		t.out = append(t.out, "}}"...)
		return nil
	}
	return refuse(path, "must be an http(s) URL or a data:MEDIA_TYPE;base64, URL")
}

// file writes an OpenAI file part holding a PDF as a data URL as an Anthropic
// document block; files by id live in OpenAI's storage and cannot cross over.
func (t *turns) file(f []byte, path string) error {
	data := jsonscan.Field(f, "file_data")
	if !isString(data) {
		return refuse(path, "only a PDF given inline as file_data translates for an Anthropic upstream")
	}
	u, escaped := stringContents(data)
	mt, b64, ok := dataURL(u)
	if !ok || string(mt) != "application/pdf" {
		return refuse(path+".file_data", "must be a data:application/pdf;base64, URL")
	}
	t.block()
	t.out = append(t.out, `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":`...)
	t.out = appendContents(t.out, b64, escaped)
	t.out = append(t.out, '}')
	if name := jsonscan.Field(f, "filename"); isString(name) {
		t.out = append(t.out, `,"title":`...)
		t.out = append(t.out, name...)
	}
	t.out = append(t.out, '}')
	return nil
}

func (t *turns) assistant(i int, content, refusalText, toolCalls []byte) error {
	before := t.blocks
	switch {
	case isString(content):
		t.text(content)
	case isArray(content):
		for j, p := range jsonscan.Each(content) {
			pt, _ := readPart(p)
			switch typ := pt.typ; {
			case stringIs(typ, "text"):
				text, ok := textIn(pt)
				if !ok {
					return notText(pt, contentPath(i, j))
				}
				t.text(text)
			case stringIs(typ, "refusal"):
				if isString(pt.refusal) {
					t.text(pt.refusal)
				}
			default:
				return refuse(contentPath(i, j)+".type", "must be text or refusal")
			}
		}
	case present(content):
		return refuse(msgPath(i)+".content", "must be a string, an array of text parts or null")
	}
	if t.blocks == before && isString(refusalText) {
		t.text(refusalText) // a refusal is what the assistant said
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
	t.block()
	t.out = append(t.out, `{"type":"tool_use","id":`...)
	var err error
	if t.out, err = appendToolID(t.out, tc.id, path()+".id"); err != nil {
		return err
	}
	t.out = append(t.out, `,"name":`...)
	t.out = append(t.out, tc.name...)
	t.out = append(t.out, `,"input":`...)
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

// appendToolID writes a tool call id as Anthropic accepts it: letters,
// digits, '_' and '-' only. Other bytes become '_', the same way wherever the
// id appears, so a call and its result still match.
func appendToolID(out, id []byte, path string) ([]byte, error) {
	if !isString(id) || len(id) == 2 {
		return out, refuse(path, "must be a non-empty string")
	}
	inner := id[1 : len(id)-1]
	clean := true
	for _, c := range inner {
		if !idByte(c) {
			clean = false
			break
		}
	}
	if clean {
		return append(out, id...), nil
	}
	s, _ := stringContents(id)
	out = append(out, '"')
	for _, c := range s {
		if !idByte(c) {
			c = '_'
		}
		out = append(out, c)
	}
	return append(out, '"'), nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (t *turns) toolResult(i int, id, content []byte) error {
	t.block()
	t.out = append(t.out, `{"type":"tool_result","tool_use_id":`...)
	var err error
	if t.out, err = appendToolID(t.out, id, msgPath(i)+".tool_call_id"); err != nil {
		return err
	}
	t.out = append(t.out, `,"content":`...)
	switch {
	case isString(content):
		t.out = append(t.out, content...)
	case !present(content):
		t.out = append(t.out, `""`...)
	case isArray(content):
		t.out = append(t.out, '[')
		for j, p := range jsonscan.Each(content) {
			text, err := textPart(p, func() string { return contentPath(i, j) })
			if err != nil {
				return err
			}
			if j > 0 {
				t.out = append(t.out, ',')
			}
			t.out = appendTextBlock(t.out, text)
		}
		t.out = append(t.out, ']')
	default:
		return refuse(msgPath(i)+".content", "must be a string or an array of text parts")
	}
	t.out = append(t.out, '}')
	return nil
}

// appendAnthropicTools writes OpenAI function tools as Anthropic tools.
func appendAnthropicTools(out, tools []byte) ([]byte, error) {
	out = append(out, `,"tools":[`...)
	for j, tool := range jsonscan.Each(tools) {
		path := "tools[" + strconv.Itoa(j) + "]"
		if !isObject(tool) {
			return out, refuse(path, "must be an object")
		}
		if typ := jsonscan.Field(tool, "type"); present(typ) && !stringIs(typ, "function") {
			return out, refuse(path+".type", "only function tools translate for an Anthropic upstream")
		}
		var name, desc, params []byte
		fn := jsonscan.Field(tool, "function")
		if !isObject(fn) {
			return out, refuse(path+".function", "must be an object")
		}
		m := jsonscan.MembersOf(fn)
		for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
			switch string(k) {
			case "name":
				name = v
			case "description":
				desc = v
			case "parameters":
				params = v
			}
			// strict is dropped: Anthropic validates tool input its own way.
		}
		if !isString(name) {
			return out, refuse(path+".function.name", "must be a string")
		}
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"name":`...)
		out = append(out, name...)
		if isString(desc) {
			out = append(out, `,"description":`...)
			out = append(out, desc...)
		}
		out = append(out, `,"input_schema":`...)
		if isObject(params) {
			out = append(out, params...)
		} else {
			// OpenAI allows a function without parameters; Anthropic needs a schema.
			out = append(out, `{"type":"object","properties":{}}`...)
		}
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

// appendAnthropicToolChoice maps tool_choice and parallel_tool_calls: auto ->
// auto, none -> none, required -> any, a named function -> tool;
// parallel_tool_calls false -> disable_parallel_tool_use true.
func appendAnthropicToolChoice(out, choice, parallel []byte) ([]byte, error) {
	typ, name := "auto", []byte(nil)
	switch {
	case !present(choice):
		if !present(parallel) || isTrue(parallel) {
			return out, nil // Anthropic's default is the same: auto, in parallel
		}
	case stringIs(choice, "auto"):
	case stringIs(choice, "none"):
		typ = "none"
	case stringIs(choice, "required"):
		typ = "any"
	case isObject(choice) && stringIs(jsonscan.Field(choice, "type"), "function"):
		name = jsonscan.Field(jsonscan.Field(choice, "function"), "name")
		if !isString(name) {
			return out, refuse("tool_choice.function.name", "must be a string")
		}
		typ = "tool"
	case isObject(choice):
		return out, refuse("tool_choice.type", "only auto, none, required or a named function translate for an Anthropic upstream")
	default:
		return out, refuse("tool_choice", "must be auto, none, required or {\"type\":\"function\",...}")
	}
	out = append(out, `,"tool_choice":{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if name != nil {
		out = append(out, `,"name":`...)
		out = append(out, name...)
	}
	if string(parallel) == "false" && typ != "none" {
		out = append(out, `,"disable_parallel_tool_use":true`...)
	}
	return append(out, '}'), nil
}
