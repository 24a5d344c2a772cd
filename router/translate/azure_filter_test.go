package translate

import "testing"

// TestAzureFilterFramesAreNotData: Azure OpenAI's content-filter frames
// (the first frame's empty choices with prompt_filter_results, and
// choices holding only filter annotations) are no data event: no first
// byte on any chat stream, and translation does not fail on them; a frame
// with a delta still is one, annotations and all.
func TestAzureFilterFramesAreNotData(t *testing.T) {
	t.Parallel()
	const (
		promptFilter = `data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}` + "\n\n"
		filterOnly   = `data: {"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":5},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":0,"id":"","model":"","object":""}` + "\n\n"
		first        = `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null,"content_filter_results":{}}]}` + "\n\n"
	)
	for _, tc := range []struct {
		name string
		s    Stream
	}{
		{"chat passed through", NewPassThrough(Chat, false, "")},
		{"chat to Anthropic", NewModelStream(Chat, Messages, Answer{Model: "m"})},
		{"chat to Responses", NewModelStream(Chat, Responses, Answer{Model: "m"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.s.Feed(nil, []byte(promptFilter+filterOnly)); err != nil || tc.s.DataEvents() != 0 {
				t.Fatalf("filter frames: err %v, DataEvents %d; want nil, 0", err, tc.s.DataEvents())
			}
			if _, err := tc.s.Feed(nil, []byte(first)); err != nil || tc.s.DataEvents() != 1 {
				t.Fatalf("first content frame: err %v, DataEvents %d; want nil, 1", err, tc.s.DataEvents())
			}
			if _, err := tc.s.Feed(nil, []byte(filterOnly)); err != nil || tc.s.DataEvents() != 1 {
				t.Fatalf("a later filter-only frame: err %v, DataEvents %d; want nil, 1", err, tc.s.DataEvents())
			}
		})
	}
}
