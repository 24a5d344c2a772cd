package translate

import "testing"

// TestStreamUsageNeverGoesDown: a message_delta that repeats input_tokens
// as 0 (some servers send every count) has not un-read the prompt.
func TestStreamUsageNeverGoesDown(t *testing.T) {
	u := messagesUsage(Usage{}, []byte(`{"input_tokens":21,"output_tokens":1}`))
	u = messagesUsage(u, []byte(`{"input_tokens":0,"output_tokens":9}`))
	if u.InputTokens != 21 || u.OutputTokens != 9 || !u.Known {
		t.Errorf("usage %+v, want 21 in, 9 out", u)
	}
}
