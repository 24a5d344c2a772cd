package translate

// ResponsesToMessages turns an OpenAI Responses request into an Anthropic
// Messages request for upstreamModel, through the neutral model (every rule
// of the crossing holds: tool ids, thinking, sampling, structured outputs;
// a reasoning item's encrypted_content comes back as the thinking's
// signature). ids is as for ChatToMessages. A refusal names the Responses
// request's own field.
func ResponsesToMessages(body []byte, upstreamModel string, ids *ToolIDs) ([]byte, error) {
	out, _, err := EncodeRequest(Responses, body, Messages, upstreamModel, ids)
	return out, err
}
