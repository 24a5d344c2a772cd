package translate

// A Chat Completions request's settings beside its messages.

// appendChatSettings writes the limits, sampling, stop sequences, user,
// tools, tool choice, response format, reasoning effort and stream flag,
// and closes the request.
func appendChatSettings(out []byte, r *Request) ([]byte, error) {
	l := &r.Limits
	out = appendRaw(out, "max_completion_tokens", l.MaxTokens)
	if len(l.Stop) > 0 {
		out = append(key(out, "stop"), '[')
		for _, s := range l.Stop {
			out = append(comma(out), s...)
		}
		out = append(out, ']')
	}
	out = appendRaw(out, "temperature", l.Temperature)
	out = appendRaw(out, "top_p", l.TopP)
	out = appendRaw(out, "user", r.User)
	if len(r.Tools) > 0 {
		out = appendChatToolList(out, r)
		out = appendRaw(out, "parallel_tool_calls", r.ParallelToolCalls)
	}
	switch {
	case r.Output.Schema != nil:
		out = append(out, `,"response_format":{"type":"json_schema","json_schema":{"name":`...)
		if isString(r.Output.Name) {
			out = append(out, r.Output.Name...)
		} else {
			out = append(out, `"output"`...)
		}
		out = append(append(append(out, `,"strict":true,"schema":`...), r.Output.Schema...), "}}"...)
	case r.Output.JSONObject:
		out = append(out, `,"response_format":{"type":"json_object"}`...)
	}
	if effort := r.Reasoning.chatEffort(); effort != "" {
		out = append(append(append(out, `,"reasoning_effort":"`...), effort...), '"')
	}
	if r.Stream {
		out = append(out, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(out, '}'), nil
}

// chatEffort is the reasoning_effort an OpenAI upstream gets: the client's
// own word when it spoke OpenAI's, else derived from a budget.
func (r *Reasoning) chatEffort() string {
	switch {
	case r.Off:
		if r.Effort == "none" {
			return "none"
		}
		return ""
	case r.Effort != "":
		return r.Effort
	}
	return r.effort()
}

// appendChatToolList writes tools and tool_choice.
func appendChatToolList(out []byte, r *Request) []byte {
	out = append(key(out, "tools"), '[')
	for i := range r.Tools {
		t := &r.Tools[i]
		out = append(append(comma(out), `{"type":"function","function":{"name":`...), t.Name...)
		out = appendRaw(out, "description", t.Description)
		out = appendRaw(out, "parameters", t.Schema)
		out = appendRaw(out, "strict", t.Strict)
		out = append(out, "}}"...)
	}
	out = append(out, ']')
	switch r.ToolChoice.Mode {
	case ToolAuto:
		if r.ToolChoice.Said || string(r.ParallelToolCalls) == "false" {
			out = append(out, `,"tool_choice":"auto"`...)
		}
	case ToolNone:
		out = append(out, `,"tool_choice":"none"`...)
	case ToolAny:
		out = append(out, `,"tool_choice":"required"`...)
	case ToolNamed:
		out = append(out, `,"tool_choice":{"type":"function","function":{"name":`...)
		out = append(append(out, r.ToolChoice.Name...), "}}"...)
	}
	return out
}
