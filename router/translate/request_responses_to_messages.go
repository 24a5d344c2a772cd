package translate

import (
	"errors"
	"strconv"
	"strings"
)

// ResponsesToMessages turns an OpenAI Responses request into an Anthropic
// Messages request for upstreamModel, by way of Chat Completions: the
// Responses request as ResponsesToChat writes it, then as ChatToMessages
// does (so every rule of that crossing holds: tool ids, thinking, sampling,
// structured outputs). ids is as for ChatToMessages. A refusal names the
// Responses request's own field.
func ResponsesToMessages(body []byte, upstreamModel string, ids *ToolIDs) ([]byte, error) {
	chat, src, err := responsesToChat(body, upstreamModel)
	if err != nil {
		return nil, err
	}
	out, _, err := ChatToMessages(chat, upstreamModel, ids)
	var re *RequestError
	if errors.As(err, &re) {
		return nil, src.rename(re)
	}
	return out, err
}

// chatToResponsesPaths renames the Chat Completions fields a refusal may
// name to the Responses fields they came from; messages[i] is renamed by
// rename, from where message i came from.
var chatToResponsesPaths = [...]struct{ chat, responses string }{
	{".function.parameters", ".parameters"},
	{".function.name", ".name"},
	{".function.strict", ".strict"},
	{"response_format", "text.format"},
	{"reasoning_effort", "reasoning.effort"},
	{"max_completion_tokens", "max_output_tokens"},
}

// rename gives a refusal of the chat translation the Responses request's
// field names.
func (s *chatSources) rename(re *RequestError) *RequestError {
	param := re.Param
	if rest, ok := strings.CutPrefix(param, "messages["); ok {
		end := strings.IndexByte(rest, ']')
		i, err := strconv.Atoi(rest[:max(end, 0)])
		if end < 0 || err != nil || i < 0 || i >= len(s.msgs) {
			return re
		}
		item, rest := itemPath(s.msgs[i]), rest[end+1:]
		if call, ok := strings.CutPrefix(rest, ".tool_calls["); ok {
			end := strings.IndexByte(call, ']')
			k, err := strconv.Atoi(call[:max(end, 0)])
			if end >= 0 && err == nil && k >= 0 && k < len(s.calls[i]) {
				item, rest = itemPath(s.calls[i][k]), strings.Replace(call[end+1:], ".function.arguments", ".arguments", 1)
				rest = strings.Replace(rest, ".id", ".call_id", 1)
			}
		}
		if s.tool[i] { // a function_call_output item
			rest = strings.Replace(strings.Replace(rest, ".tool_call_id", ".call_id", 1), ".content", ".output", 1)
		}
		param = item + rest
	} else {
		for _, p := range chatToResponsesPaths {
			param = strings.Replace(param, p.chat, p.responses, 1)
		}
	}
	if param == re.Param {
		return re
	}
	return &RequestError{Param: param, Message: param + strings.TrimPrefix(re.Message, re.Param)}
}
