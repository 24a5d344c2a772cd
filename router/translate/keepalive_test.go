package translate

import (
	"bytes"
	"strings"
	"testing"
)

// TestKeepAlivesAreNotData: comments, pings and empty events before an
// answer count as no data event on every Stream and give the client
// nothing yet; the first data event counts, and a pass-through then relays
// what it held before it, as it came.
func TestKeepAlivesAreNotData(t *testing.T) {
	const (
		comment     = ": PROCESSING\n\n"
		ping        = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
		unnamedPing = "data: {\"type\":\"ping\"}\n\n"
		empty       = "data:\n\ndata: \n\nevent: x\n\n"
		msgStart    = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
		chatFirst   = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
		created     = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\",\"model\":\"m\"}}\n\n"
	)
	keepAlives := comment + ping + unnamedPing + empty
	for _, tc := range []struct {
		name     string
		s        Stream
		first    string
		relayed  bool // a pass-through: the keep-alives reach the client with the first event
		modelled bool // a pass-through that rewrites events (the model)
	}{
		{"Anthropic to chat", NewModelStream(Messages, Chat, Answer{Model: "m"}), msgStart, false, false},
		{"Anthropic to Responses", NewModelStream(Messages, Responses, Answer{Model: "m"}), msgStart, false, false},
		{"chat to Anthropic", NewModelStream(Chat, Messages, Answer{Model: "m"}), chatFirst, false, false},
		{"chat to Responses", NewModelStream(Chat, Responses, Answer{Model: "m"}), chatFirst, false, false},
		{"chat passed through", NewPassThrough(Chat, false, ""), chatFirst, true, false},
		{"chat passed through, usage stripped", NewPassThrough(Chat, true, ""), chatFirst, true, true},
		{"Anthropic passed through", NewPassThrough(Messages, false, ""), msgStart, true, false},
		{"Anthropic passed through, model named", NewPassThrough(Messages, false, "alias"), msgStart, true, true},
		{"Responses passed through", NewPassThrough(Responses, false, ""), created, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []byte
			for i := range len(keepAlives) { // a byte at a time: cut anywhere
				var err error
				if out, err = tc.s.Feed(out, []byte(keepAlives[i:i+1])); err != nil {
					t.Fatalf("Feed(keep-alives) failed: %v", err)
				}
			}
			if len(out) != 0 || tc.s.DataEvents() != 0 {
				t.Fatalf("keep-alives gave %q, DataEvents %d; want nothing, 0", out, tc.s.DataEvents())
			}
			out, err := tc.s.Feed(out, []byte(tc.first))
			if err != nil || tc.s.DataEvents() != 1 || len(out) == 0 {
				t.Fatalf("first data event: %q, %v, DataEvents %d; want output, 1", out, err, tc.s.DataEvents())
			}
			switch {
			case tc.relayed && !tc.modelled && string(out) != keepAlives+tc.first:
				t.Fatalf("pass-through gave %q, want the keep-alives and the event as they came", out)
			case tc.relayed && !bytes.HasPrefix(out, []byte(keepAlives)):
				t.Fatalf("pass-through gave %q, want the keep-alives first", out)
			case !tc.relayed && (strings.Contains(string(out), "ping") || strings.Contains(string(out), "PROCESSING")):
				t.Fatalf("a translation relayed a keep-alive: %q", out)
			}
			if out, _ := tc.s.Feed(nil, []byte(ping+comment)); tc.s.DataEvents() != 1 || !tc.relayed && len(out) != 0 {
				t.Fatalf("keep-alives after the first event: %q, DataEvents %d; want 1", out, tc.s.DataEvents())
			}
		})
	}
}

// A stream that breaks before its first data event gives the client none
// of the keep-alives held.
func TestKeepAlivesOfABrokenStreamAreDropped(t *testing.T) {
	s := NewPassThrough(Chat, false, "")
	if out, err := s.Feed(nil, []byte(": PROCESSING\n\n")); err != nil || len(out) != 0 {
		t.Fatalf("Feed(comment) = %q, %v; want nothing held back", out, err)
	}
	if out, err := s.Feed(nil, []byte("data: {oops\n\n")); err == nil || len(out) != 0 {
		t.Fatalf("Feed(broken event) = %q, %v; want an error and nothing", out, err)
	}
	s = NewPassThrough(Chat, false, "")
	_, _ = s.Feed(nil, []byte(": PROCESSING\n\n"))
	if out, err := s.Finish(nil); err != ErrTruncated || len(out) != 0 {
		t.Fatalf("Finish() = %q, %v; want ErrTruncated and nothing", out, err)
	}
}

// Keep-alives past maxHeldKeepAlives before the first data event are
// dropped, not held without bound.
func TestHeldKeepAlivesAreBounded(t *testing.T) {
	s := NewPassThrough(Chat, false, "").(*passThrough)
	for range 2 * maxHeldKeepAlives / len(": PROCESSING\n\n") {
		_, _ = s.Feed(nil, []byte(": PROCESSING\n\n"))
	}
	if len(s.held) > maxHeldKeepAlives {
		t.Fatalf("held %d bytes of keep-alives, want at most %d", len(s.held), maxHeldKeepAlives)
	}
}
