package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// FitForAnthropic makes an Anthropic Messages request, going to an Anthropic
// target as it came, acceptable to Anthropic's own rules where a pool that
// mixes formats leads a client to break them:
//
//   - temperature with top_p: recent Claude models refuse the pair, which
//     an OpenAI target takes; top_p is left out (the temperature alone
//     still sets how varied the answer is).
//   - thinking blocks Gemini signed (a Gemini target served that turn;
//     their signatures are marked "gemini~", see signatures.go): Anthropic cannot
//     check them and refuses the request; they are left out.
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
	messages, foreign := withoutGeminiThinking(messages)
	dropThinking := stringIs(jsonscan.Field(thinking, "type"), "enabled") && toolTurnWithoutThinking(messages)
	if !dropTopP && !dropThinking && !foreign {
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
		if foreign && string(k) == "messages" {
			val = messages
		}
		out = append(out, val...)
	}
	return append(out, '}')
}

// HasGeminiSignature reports whether an Anthropic Messages body may hold a
// thinking block a Gemini target signed (its signature marked "gemini~"),
// which FitForAnthropic leaves out. It looks for the mark's '~', a byte few
// requests hold, rather than for the mark's first bytes, which most do: a
// 4 KiB request costs about what reading its usage does not.
func HasGeminiSignature(body []byte) bool {
	mark := []byte(`"gemini~`)
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '~')
		if j < 0 {
			return false
		}
		i += j + 1
		if i >= len(mark) && bytes.Equal(body[i-len(mark):i], mark) {
			return true
		}
	}
}

// withoutGeminiThinking is Anthropic messages without the thinking blocks
// whose signature Gemini made, and whether there were any (when not, the
// messages as they came). An assistant turn left with no block says "".
func withoutGeminiThinking(messages []byte) ([]byte, bool) {
	if !HasGeminiSignature(messages) {
		return messages, false
	}
	out := make([]byte, 0, len(messages))
	out = append(out, '[')
	dropped := false
	for i, msg := range jsonscan.Each(messages) {
		if i > 0 {
			out = append(out, ',')
		}
		content := jsonscan.Field(msg, "content")
		if !stringIs(jsonscan.Field(msg, "role"), "assistant") || !isArray(content) {
			out = append(out, msg...)
			continue
		}
		out = append(out, '{')
		m := jsonscan.MembersOf(msg)
		for n, k, val, ok := 0, []byte(nil), []byte(nil), false; ; n++ {
			if k, val, ok = m.Next(); !ok {
				break
			}
			if n > 0 {
				out = append(out, ',')
			}
			out = append(jsonscan.AppendString(out, k), ':')
			if string(k) != "content" {
				out = append(out, val...)
				continue
			}
			start, blocks := len(out), 0
			out = append(out, '[')
			for _, b := range jsonscan.Each(val) {
				if stringIs(jsonscan.Field(b, "type"), "thinking") && originOf(jsonscan.Field(b, "signature")) >= sigGemini {
					dropped = true
					continue
				}
				if blocks > 0 {
					out = append(out, ',')
				}
				blocks++
				out = append(out, b...)
			}
			if blocks == 0 {
				out = append(out[:start], `""`...)
			} else {
				out = append(out, ']')
			}
		}
		out = append(out, '}')
	}
	if !dropped {
		return messages, false
	}
	return append(out, ']'), true
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
