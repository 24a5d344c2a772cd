package translate

import "testing"

// A Responses stream relayed as it came names its response in its first
// event (response.created): the id the router remembers with the target
// that stored it, however the stream arrives in pieces.
func TestPassThroughReadsTheResponseID(t *testing.T) {
	stream := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_abc\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"gpt-4.1\",\"output\":[]}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_abc\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-4.1\",\"output\":[]}}\n\n"
	for _, tt := range []struct {
		name  string
		split int // where the stream is cut in two reads
		model string
	}{
		{"one read", len(stream), ""},
		{"cut inside the first event", 40, ""},
		{"model renamed", 40, "m"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewPassThrough(Responses, false, tt.model).(*passThrough)
			if _, err := s.Feed(nil, []byte(stream[:tt.split])); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Feed(nil, []byte(stream[tt.split:])); err != nil {
				t.Fatal(err)
			}
			if got := s.ResponseID(); got != "resp_abc" {
				t.Errorf("ResponseID() = %q, want resp_abc", got)
			}
		})
	}
	if got := NewPassThrough(Chat, false, "").(*passThrough).ResponseID(); got != "" {
		t.Errorf("chat stream: ResponseID() = %q, want none", got)
	}
}
