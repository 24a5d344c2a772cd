package translate

// A Messages request's settings beside its messages.

// appendMessagesSettings writes max_tokens, thinking or sampling, top_k,
// stop sequences, metadata, tools, tool choice, output format and the
// stream flag, and closes the request. Anthropic refuses thinking with a
// forced tool choice, and after an assistant tool turn with no thinking
// (one another provider answered): the request then goes without
// thinking (noThinking), rather than not at all.
func appendMessagesSettings(out []byte, r *Request, noThinking bool) ([]byte, error) {
	budget := r.Reasoning.budget()
	if r.ToolChoice.Mode == ToolAny || r.ToolChoice.Mode == ToolNamed || noThinking {
		budget = 0
	}
	out = appendMessagesTools(out, r)
	switch {
	case r.Output.JSONObject:
		return nil, refuse(r.outputPath()+".type", "json_object cannot be held for an Anthropic upstream, which holds answers to a schema only: use json_schema")
	case r.Output.Schema != nil:
		out = append(out, `,"output_config":{"format":{"type":"json_schema","schema":`...)
		out = append(append(out, anthropicSchema(r.Output.Schema)...), "}}"...)
	}
	out = append(out, `,"max_tokens":`...)
	switch n, ok := intValue(r.Limits.MaxTokens); {
	case !present(r.Limits.MaxTokens):
		out = appendInt(out, DefaultMaxTokens+budget)
	default:
		out = append(out, r.Limits.MaxTokens...)
		if budget > 0 && ok {
			if budget = min(budget, n-1); budget < minThinkingBudget {
				budget = 0
			}
		}
	}
	if budget > 0 {
		out = appendInt(append(out, `,"thinking":{"type":"enabled","budget_tokens":`...), budget)
		out = append(out, '}')
	} else {
		out = appendSampling(out, r.Limits.Temperature, r.Limits.TopP)
		out = appendRaw(out, "top_k", r.Limits.TopK)
	}
	if len(r.Limits.Stop) > 0 {
		out = append(key(out, "stop_sequences"), '[')
		for _, s := range r.Limits.Stop {
			out = append(comma(out), s...)
		}
		out = append(out, ']')
	}
	if present(r.User) {
		out = append(append(append(out, `,"metadata":{"user_id":`...), r.User...), '}')
	}
	if r.Stream {
		out = append(out, `,"stream":true`...)
	}
	return append(out, '}'), nil
}

// appendMessagesTools writes tools (with strict and cache marks) and the
// tool choice, which carries disable_parallel_tool_use.
func appendMessagesTools(out []byte, r *Request) []byte {
	if len(r.Tools) == 0 {
		return out
	}
	out = append(key(out, "tools"), '[')
	for i := range r.Tools {
		t := &r.Tools[i]
		out = append(append(comma(out), `{"name":`...), t.Name...)
		out = appendRaw(out, "description", t.Description)
		out = appendSchema(append(out, `,"input_schema":`...), t.Schema)
		out = appendRaw(out, "strict", t.Strict)
		out = append(appendCacheControl(out, t.Cache), '}')
	}
	out = append(out, ']')
	noParallel := string(r.ParallelToolCalls) == "false"
	if r.ToolChoice.Mode == ToolAuto && !r.ToolChoice.Said && !noParallel {
		return out
	}
	out = append(out, `,"tool_choice":{"type":`...)
	switch r.ToolChoice.Mode {
	case ToolNone:
		out = append(out, `"none"`...)
	case ToolAny:
		out = append(out, `"any"`...)
	case ToolNamed:
		out = append(append(out, `"tool","name":`...), r.ToolChoice.Name...)
	default:
		out = append(out, `"auto"`...)
	}
	if noParallel && r.ToolChoice.Mode != ToolNone {
		out = append(out, `,"disable_parallel_tool_use":true`...)
	}
	return append(out, '}')
}
