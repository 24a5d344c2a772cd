package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// FitForAnthropic makes an Anthropic Messages request, going to an Anthropic
// target as it came, acceptable to Anthropic's own rules where a pool that
// mixes formats leads a client to break them:
//
//   - temperature with top_p: recent Claude models refuse the pair, which
//     an OpenAI target takes; top_p is left out (the temperature alone
//     still sets how varied the answer is).
//   - extended thinking on, but the last assistant turn that called tools
//     does not start with a thinking block (Anthropic requires one there):
//     that turn was served by an OpenAI target, which gives none. The
//     request goes without thinking rather than not at all.
//
// Any other request comes back as it came (the same slice). body must be
// valid JSON (the gateway has checked it).
func FitForAnthropic(body []byte) []byte {
	v, ok := jsonscan.Valid(body)
	if !ok || !isObject(v) {
		return body
	}
	var temperature, topP, thinking, messages []byte
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "temperature":
			temperature = val
		case "top_p":
			topP = val
		case "thinking":
			thinking = val
		case "messages":
			messages = val
		}
	}
	dropTopP := present(temperature) && present(topP)
	dropThinking := stringIs(jsonscan.Field(thinking, "type"), "enabled") && toolTurnWithoutThinking(messages)
	if !dropTopP && !dropThinking {
		return body
	}
	out := make([]byte, 0, len(body))
	out = append(out, '{')
	m = jsonscan.MembersOf(v)
	n := 0
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		if (dropTopP && string(k) == "top_p") || (dropThinking && string(k) == "thinking") {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = jsonscan.AppendString(out, k)
		out = append(out, ':')
		out = append(out, val...)
	}
	return append(out, '}')
}

// toolTurnWithoutThinking reports whether the last assistant turn of
// Anthropic messages called tools without starting with a thinking block.
func toolTurnWithoutThinking(messages []byte) bool {
	var last []byte
	for _, msg := range jsonscan.Each(messages) {
		if stringIs(jsonscan.Field(msg, "role"), "assistant") {
			last = jsonscan.Field(msg, "content")
		}
	}
	if !isArray(last) {
		return false
	}
	tools, first := false, true
	for _, b := range jsonscan.Each(last) {
		typ := jsonscan.Field(b, "type")
		if first && (stringIs(typ, "thinking") || stringIs(typ, "redacted_thinking")) {
			return false
		}
		first = false
		tools = tools || stringIs(typ, "tool_use")
	}
	return tools
}
