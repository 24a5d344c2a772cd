package translate

import "fmt"

// The Anthropic message object an answer translated for an Anthropic
// client must be.

type aMessageResponse struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []aBlock `json:"content"`
	StopReason   string   `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        aUsage   `json:"usage"`
}

var stopReasons = map[string]bool{"end_turn": true, "max_tokens": true, "stop_sequence": true, "tool_use": true, "pause_turn": true, "refusal": true}

// checkMessage holds b to the Anthropic message object.
func checkMessage(b []byte) (aMessageResponse, error) {
	var m aMessageResponse
	if err := strictDecode(b, &m); err != nil {
		return m, err
	}
	if m.ID == "" || m.Type != "message" || m.Role != "assistant" || m.Model == "" || m.Content == nil || !stopReasons[m.StopReason] {
		return m, fmt.Errorf("header fields wrong: %+v", m)
	}
	for j, bl := range m.Content {
		switch bl.Type {
		case "text":
			if bl.Text == nil || *bl.Text == "" {
				return m, fmt.Errorf("content[%d]: empty text", j)
			}
		case "tool_use":
			if !anthropicIDPattern.MatchString(bl.ID) || bl.Name == "" || !isObjectJSON(bl.Input) {
				return m, fmt.Errorf("content[%d] = %+v", j, bl)
			}
		case "thinking":
			if bl.Thinking == nil {
				return m, fmt.Errorf("content[%d]: thinking without its text", j)
			}
		case "redacted_thinking":
			if bl.Data == "" {
				return m, fmt.Errorf("content[%d]: redacted_thinking without data", j)
			}
		default:
			return m, fmt.Errorf("content[%d].type %q", j, bl.Type)
		}
	}
	return m, nil
}
