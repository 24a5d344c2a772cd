package translate

// A Gemini request's settings beside its contents: tools, toolConfig and
// generationConfig.

// appendGeminiTools writes the function declarations (schemas as JSON
// Schema, parametersJsonSchema) and the function-calling mode: AUTO, ANY
// (a named tool: ANY limited to it), NONE. Gemini cannot be held to one
// call at a time: a request that forbids parallel calls is refused.
func appendGeminiTools(out []byte, r *Request) ([]byte, error) {
	if len(r.Tools) == 0 {
		return out, nil
	}
	if err := r.refuseSerialCalls("a Gemini upstream"); err != nil {
		return out, err
	}
	out = append(key(out, "tools"), `[{"functionDeclarations":[`...)
	for i := range r.Tools {
		t := &r.Tools[i]
		out = append(append(comma(out), `{"name":`...), t.Name...)
		out = appendRaw(out, "description", t.Description)
		out = append(appendSchema(append(out, `,"parametersJsonSchema":`...), t.Schema), '}')
	}
	out = append(out, "]}]"...)
	switch r.ToolChoice.Mode {
	case ToolNone:
		out = append(out, `,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`...)
	case ToolAny:
		out = append(out, `,"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`...)
	case ToolNamed:
		out = append(out, `,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[`...)
		out = append(append(out, r.ToolChoice.Name...), "]}}"...)
	}
	return out, nil
}

// appendGeminiConfig writes generationConfig: limits, sampling, stop
// sequences, structured output and thinking.
func appendGeminiConfig(out []byte, r *Request) []byte {
	l := &r.Limits
	start := len(out)
	out = append(key(out, "generationConfig"), '{')
	open := len(out)
	out = appendRaw(out, "maxOutputTokens", l.MaxTokens)
	out = appendRaw(out, "temperature", l.Temperature)
	out = appendRaw(out, "topP", l.TopP)
	out = appendRaw(out, "topK", l.TopK)
	if len(l.Stop) > 0 {
		out = append(key(out, "stopSequences"), '[')
		for _, s := range l.Stop {
			out = append(comma(out), s...)
		}
		out = append(out, ']')
	}
	if r.Output.Schema != nil || r.Output.JSONObject {
		out = append(key(out, "responseMimeType"), `"application/json"`...)
		out = appendRaw(out, "responseJsonSchema", r.Output.Schema)
	}
	out = appendThinkingConfig(out, &r.Reasoning)
	if len(out) == open {
		return out[:start]
	}
	return append(out, '}')
}

// appendThinkingConfig writes thinkingConfig: the budget (0 when the
// client turned thinking off) and includeThoughts when a summary is asked.
func appendThinkingConfig(out []byte, re *Reasoning) []byte {
	budget := re.budget()
	if budget == 0 && !re.Off && !re.Summary {
		return out
	}
	out = append(key(out, "thinkingConfig"), '{')
	if budget > 0 || re.Off {
		out = appendInt(append(out, `"thinkingBudget":`...), budget)
	}
	if re.Summary && !re.Off {
		out = append(comma(out), `"includeThoughts":true`...)
	}
	return append(out, '}')
}
