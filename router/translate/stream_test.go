package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// streamFixture is an upstream stream from testdata and the translator for it.
type streamFixture struct {
	name string
	in   []byte
	new  func() Stream
}

func streamFixtures(t *testing.T) []streamFixture {
	t.Helper()
	var fs []streamFixture
	for dir, mk := range map[string]func() Stream{
		"messages_stream": func() Stream {
			return NewModelStream(Messages, Chat, Answer{Model: clientModel, Created: goldenCreated, IncludeUsage: true})
		},
		"chat_stream": func() Stream { return NewModelStream(Chat, Messages, Answer{Model: clientModel}) },
	} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.in.sse"))
		for _, f := range files {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, streamFixture{dir + "/" + filepath.Base(f), in, mk})
		}
	}
	if len(fs) < 8 {
		t.Fatalf("only %d stream fixtures", len(fs))
	}
	return fs
}

// feedPieces feeds in cut at the given offsets, then finishes.
func feedPieces(s Stream, in []byte, cuts ...int) ([]byte, error) {
	var out []byte
	var err error
	prev := 0
	for _, c := range append(cuts, len(in)) {
		if out, err = s.Feed(out, in[prev:c]); err != nil {
			return out, err
		}
		prev = c
	}
	return s.Finish(out)
}

// A stream cut anywhere by the network translates exactly as if it had come
// whole: at every single cut point, and one byte at a time.
func TestStreamSplitAnywhere(t *testing.T) {
	for _, f := range streamFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			whole, err := feedPieces(f.new(), f.in)
			if err = streamErr(filepath.Base(f.name), err); err != nil {
				t.Fatal(err)
			}
			for cut := 1; cut < len(f.in); cut++ {
				got, err := feedPieces(f.new(), f.in, cut)
				if streamErr(filepath.Base(f.name), err) != nil || !bytes.Equal(got, whole) {
					t.Fatalf("cut at %d: err %v, output differs:\n%s\nwant\n%s", cut, err, got, whole)
				}
			}
			every := make([]int, 0, len(f.in))
			for i := 1; i < len(f.in); i++ {
				every = append(every, i)
			}
			if got, err := feedPieces(f.new(), f.in, every...); streamErr(filepath.Base(f.name), err) != nil || !bytes.Equal(got, whole) {
				t.Fatalf("byte by byte: err %v, output differs:\n%s", err, got)
			}
		})
	}
}

// What a client assembles from the translated stream is what a client of the
// upstream's own format assembles from the original: the same text, the same
// tool calls with the same ids, names and arguments, the stop reason mapped,
// the same usage.
func TestStreamSameAnswer(t *testing.T) {
	for _, f := range streamFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			s := f.new()
			out, err := feedPieces(s, f.in)
			if err = streamErr(filepath.Base(f.name), err); err != nil {
				t.Fatal(err)
			}
			var up, down streamResult
			var upErr, downErr error
			var stopWant string
			if strings.HasPrefix(f.name, "messages_stream") {
				up, upErr = checkMessagesStream(string(f.in), false)
				down, downErr = checkChatStream(string(out), true)
				stopWant = finishWord(Chat, finishOf(Messages, []byte(strconv.Quote(up.Stop))))
			} else {
				up, upErr = checkChatStream(string(f.in), false)
				down, downErr = checkMessagesStream(string(out), true)
				stopWant = finishWord(Messages, finishOf(Chat, []byte(strconv.Quote(up.Stop))))
			}
			if upErr != nil || downErr != nil {
				t.Fatalf("upstream fixture: %v; translation: %v", upErr, downErr)
			}
			if up.Err != "" {
				stopWant = "" // the stream ended in an error before any stop reason
				if down.Err != up.Err {
					t.Errorf("error message %q, want the upstream's %q", down.Err, up.Err)
				}
			}
			if down.Text != up.Text || down.Stop != stopWant || down.ID != up.ID || down.Model != clientModel {
				t.Errorf("assembled text %q stop %q id %q model %q; want %q %q %q %q",
					down.Text, down.Stop, down.ID, down.Model, up.Text, stopWant, up.ID, clientModel)
			}
			if !reflect.DeepEqual(down.Tools, up.Tools) {
				t.Errorf("tool calls %+v, want %+v", down.Tools, up.Tools)
			}
			u := s.Usage()
			switch {
			case up.Err != "":
			case up.Usage == nil: // an OpenAI upstream that sent no usage
				if u.Known || down.Usage == nil || down.Usage.InputTokens != 0 || down.Usage.OutputTokens != 0 {
					t.Errorf("no usage upstream: client sees %+v, Usage() %+v; want zeros and unknown", down.Usage, u)
				}
			default:
				// Anthropic has no reasoning count: what the client sees
				// is the rest of it.
				if down.Usage == nil || *down.Usage != *up.Usage || withoutReasoning(u) != *up.Usage {
					t.Errorf("usage: client sees %+v, Usage() %+v; upstream said %+v", down.Usage, u, *up.Usage)
				}
			}
		})
	}
}

// The client's stream opens the moment the upstream's first data event
// arrives, so the gateway can flush a first byte at once (a ping before it
// is no first byte: TestKeepAlivesAreNotData).
func TestStreamOpensOnFirstEvent(t *testing.T) {
	tests := []struct {
		name  string
		s     Stream
		first string
		want  string
	}{
		{"anthropic message_start", NewModelStream(Messages, Chat, Answer{Model: "m", Created: 7, IncludeUsage: false}),
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
			`data: {"id":"msg_1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n"},
		{"openai role chunk", NewModelStream(Chat, Messages, Answer{Model: "m"}),
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"c1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Cut just before the event's end: nothing yet, then all of it.
			got, err := tt.s.Feed(nil, []byte(tt.first[:len(tt.first)-1]))
			if err != nil || len(got) != 0 {
				t.Fatalf("Feed(incomplete event) = %q, %v; want nothing yet", got, err)
			}
			got, err = tt.s.Feed(got, []byte(tt.first[len(tt.first)-1:]))
			if err != nil || string(got) != tt.want {
				t.Errorf("Feed(first event) = %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

// Finish closes a stream whose upstream said how it stopped, and refuses to
// pass off one that did not as whole.
func TestStreamFinish(t *testing.T) {
	const (
		aStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
		aText  = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
		aDelta = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"
		aStop  = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		aErr   = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
		oFirst = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}\n\n"
		oEnd   = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
		oUsage = "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n"
		oDone  = "data: [DONE]\n\n"
	)
	anthropic := func() Stream {
		return NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: true})
	}
	openai := func() Stream { return NewModelStream(Chat, Messages, Answer{Model: "m"}) }
	tests := []struct {
		name      string
		new       func() Stream
		in        string
		wantErr   error
		finishAdd string // what Finish itself appends ("" when nothing)
	}{
		{"anthropic complete", anthropic, aStart + aText + aDelta + aStop, nil, ""},
		// The client's stream ends once the finish and its usage are in
		// (message_delta): Finish has nothing to add.
		{"anthropic without message_stop", anthropic, aStart + aText + aDelta, nil, ""},
		{"anthropic cut before message_delta", anthropic, aStart + aText, ErrTruncated, ""},
		{"anthropic nothing at all", anthropic, "", ErrTruncated, ""},
		{"anthropic ended by an error event", anthropic, aStart + aText + aErr, ErrStreamError, ""},
		{"anthropic last event without its blank line", anthropic, aStart + aText + strings.TrimSuffix(aDelta, "\n\n"), nil,
			`data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\ndata: [DONE]\n\n"},
		{"openai complete", openai, oFirst + oEnd + oUsage + oDone, nil, ""},
		{"openai without [DONE]", openai, oFirst + oEnd + oUsage, nil, ""}, // ended once the usage came
		{"openai without the usage and [DONE]", openai, oFirst + oEnd, nil,
			// The text block was closed at finish_reason already.
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"openai cut before finish_reason", openai, oFirst, ErrTruncated, ""},
		{"openai nothing at all", openai, "", ErrTruncated, ""},
		{"openai [DONE] without finish_reason", openai, oFirst + oDone, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.new()
			fed, err := s.Feed(nil, []byte(tt.in))
			if err != nil {
				t.Fatalf("Feed: %v", err)
			}
			got, err := s.Finish(nil)
			if !errors.Is(err, tt.wantErr) || string(got) != tt.finishAdd {
				t.Errorf("Finish = %q, %v\nwant %q, %v", got, err, tt.finishAdd, tt.wantErr)
			}
			if tt.wantErr == nil || tt.wantErr == ErrStreamError {
				all := string(fed) + string(got)
				var checkErr error
				if strings.HasPrefix(tt.name, "anthropic") {
					_, checkErr = checkChatStream(all, true)
				} else {
					_, checkErr = checkMessagesStream(all, true)
				}
				if checkErr != nil {
					t.Errorf("the closed stream is not valid: %v\n%s", checkErr, all)
				}
			}
		})
	}
}

// An upstream that breaks its format mid-stream: what came before is kept, the
// error wraps ErrInvalidUpstream, names no content, and sticks.
func TestStreamInvalidUpstream(t *testing.T) {
	tests := []struct {
		name string
		s    Stream
		good string
		bad  string
	}{
		{"anthropic data not JSON", NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: false}),
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n",
			"event: content_block_delta\ndata: {SECRET PROMPT\n\n"},
		{"anthropic json delta for a text block", NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: false}),
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"SECRET PROMPT\"}}\n\n"},
		{"openai data not JSON", NewModelStream(Chat, Messages, Answer{Model: "m"}),
			"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
			"data: SECRET PROMPT\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := tt.s.Feed(nil, []byte(tt.good))
			if err != nil || len(before) == 0 {
				t.Fatalf("good events: %q, %v", before, err)
			}
			got, err := tt.s.Feed(before, []byte(tt.bad))
			if !errors.Is(err, ErrInvalidUpstream) || !bytes.Equal(got, before) {
				t.Fatalf("Feed(bad) = %q, %v; want the earlier output and ErrInvalidUpstream", got, err)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q quotes the stream's content", err)
			}
			if _, again := tt.s.Feed(nil, []byte(tt.good)); again != err {
				t.Errorf("later Feed = %v, want the same error", again)
			}
			if _, fin := tt.s.Finish(nil); fin != err {
				t.Errorf("Finish = %v, want the same error", fin)
			}
		})
	}
}

// The usage-only chunk goes to an OpenAI client only when it asked; the usage
// is known either way.
func TestMessagesToChatUsageChunkOnlyWhenAsked(t *testing.T) {
	in, err := os.ReadFile("testdata/messages_stream/text.in.sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []bool{false, true} {
		s := NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: asked})
		out, err := feedPieces(s, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(out), `"choices":[],"usage":`); got != asked {
			t.Errorf("asked %v: usage chunk present %v", asked, got)
		}
		if u := s.Usage(); u != (Usage{InputTokens: 25, OutputTokens: 15, Known: true}) {
			t.Errorf("asked %v: Usage() = %+v", asked, u)
		}
	}
}

// Servers that interleave the deltas of parallel tool calls: each block
// closes only after its last delta (a client takes content_block_stop as
// the block's end), and every call's input still assembles whole.
func TestChatToMessagesInterleavedToolCalls(t *testing.T) {
	chunk := func(calls string) string {
		return `data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[` + calls + `]}}]}` + "\n\n"
	}
	in := chunk(`{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":"{\"x\""}}`) +
		chunk(`{"index":1,"id":"call_b","type":"function","function":{"name":"b","arguments":"{\"y\":"}}`) +
		chunk(`{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"2}"}}`) +
		`data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	out, err := feedPieces(NewModelStream(Chat, Messages, Answer{Model: "m"}), []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r, err := checkMessagesStream(string(out), true)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []toolResult{{"call_a", "a", `{"x":1}`}, {"call_b", "b", `{"y":2}`}}
	if !reflect.DeepEqual(r.Tools, want) || r.Stop != "tool_use" {
		t.Errorf("tools %+v stop %q, want %+v tool_use", r.Tools, r.Stop, want)
	}
}

// A tool_use block that arrives with its whole input (some proxies send it so)
// still reaches the OpenAI client as arguments.
func TestMessagesToChatWholeToolInput(t *testing.T) {
	in := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{\"q\":\"x\"}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	out, err := feedPieces(NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: false}), []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r, err := checkChatStream(string(out), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 1 || r.Tools[0].Args != `{"q":"x"}` || r.Stop != "tool_calls" {
		t.Errorf("assembled %+v stop %q", r.Tools, r.Stop)
	}
}

// Error events: the upstream's type and message cross over; an overflow stays
// recognisable.
func TestStreamErrorEvents(t *testing.T) {
	out, err := feedPieces(NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: false}),
		[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 300000 tokens > 200000 maximum\"}}\n\n"))
	if !errors.Is(err, ErrStreamError) {
		t.Fatal(err)
	}
	want := `data: {"error":{"message":"prompt is too long: 300000 tokens > 200000 maximum","type":"invalid_request_error","param":null,"code":"context_length_exceeded"}}` + "\n\n"
	if string(out) != want {
		t.Errorf("OpenAI error event = %q\nwant %q", out, want)
	}
	tests := []struct{ in, want string }{
		{`{"error":{"message":"Rate limited","type":"requests","code":"rate_limit_exceeded"}}`,
			`{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`},
		{`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			`{"type":"error","error":{"type":"invalid_request_error","message":"too long (context_length_exceeded)"}}`},
		{`{"error":"plain text"}`, `{"type":"error","error":{"type":"api_error","message":"plain text"}}`},
		{`{"error":{"type":"server_error"}}`, `{"type":"error","error":{"type":"api_error","message":"upstream stream error"}}`},
		{`{"error":{"type":"server_error","message":""}}`, `{"type":"error","error":{"type":"api_error","message":"upstream stream error"}}`},
	}
	for _, tt := range tests {
		out, err := feedPieces(NewModelStream(Chat, Messages, Answer{Model: "m"}), []byte("data: "+tt.in+"\n\n"))
		if !errors.Is(err, ErrStreamError) {
			t.Fatal(err)
		}
		if want := "event: error\ndata: " + tt.want + "\n\n"; string(out) != want {
			t.Errorf("%s ->\n%s\nwant\n%s", tt.in, out, want)
		}
	}
}

// StreamErrorEvent is what the SDKs of each format raise as an API error.
func TestStreamErrorEvent(t *testing.T) {
	chat := StreamErrorEvent(Chat, "upstream \"cut\"\n")
	if r, err := checkChatStream(string(chat), true); err != nil || r.Err != "upstream \"cut\"\n" {
		t.Errorf("Chat: %q: %v, message %q", chat, err, r.Err)
	}
	msgs := StreamErrorEvent(Messages, "upstream cut")
	events, err := readEvents(string(msgs))
	if err != nil || len(events) != 1 || events[0].name != "error" {
		t.Fatalf("Messages: %q: %v", msgs, err)
	}
	if err := checkErrorBody(Messages, []byte(events[0].data)); err != nil {
		t.Errorf("Messages error event: %v", err)
	}
	var e struct{ Error struct{ Type string } }
	if json.Unmarshal([]byte(events[0].data), &e); e.Error.Type != "api_error" {
		t.Errorf("Messages error type %q, want api_error", e.Error.Type)
	}
}

// Whatever an upstream sends after its stream's end (or its error event) is
// not the client's, and is not kept either.
func TestStreamIgnoresBytesAfterTheEnd(t *testing.T) {
	tests := []struct {
		name string
		s    Stream
		in   string
	}{
		{"anthropic", NewModelStream(Messages, Chat, Answer{Model: "m", Created: 1, IncludeUsage: false}),
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}\n\n"},
		{"openai", NewModelStream(Chat, Messages, Answer{Model: "m"}),
			"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, err := tt.s.Feed(nil, []byte(tt.in))
			if err != nil || len(end) == 0 {
				t.Fatalf("Feed = %q, %v", end, err)
			}
			for range 3 {
				if out, err := tt.s.Feed(nil, []byte("data: {\"more\": ")); err != nil || len(out) != 0 {
					t.Errorf("Feed after the end = %q, %v; want nothing", out, err)
				}
			}
			// An upstream's own error event ends its stream failed.
			if out, err := tt.s.Finish(nil); (err != nil) != (tt.name == "anthropic") || len(out) != 0 {
				t.Errorf("Finish = %q, %v; want nothing", out, err)
			}
		})
	}
}

// withoutReasoning is u without its reasoning count, which Anthropic's
// usage cannot carry.
func withoutReasoning(u Usage) Usage {
	u.ReasoningTokens, u.ReasoningKnown = 0, false
	return u
}

// Calls the upstream gave no id (Gemini, some OpenAI-compatible servers)
// get ids no call of the conversation holds: the second turn's call is not
// call_0 again.
func TestStreamMadeUpToolIDsUnique(t *testing.T) {
	req := []byte(`{"model":"m","input":[{"type":"message","role":"user","content":"time?"},` +
		`{"type":"function_call","call_id":"call_0","name":"now","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_0","output":"noon"}]}`)
	in := sse(oEvent(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"now","arguments":"{}"}}]}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"now","arguments":"{}"}}]}}]}`),
		oEvent(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		oEvent(`{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}}`), oEvent("[DONE]"))
	out, err := feedPieces(NewModelStream(Chat, Responses, Answer{Model: "m", Created: 1, IDs: NewToolIDs(req, Responses)}), in)
	must(t, err)
	r, err := checkResponsesStream(string(out))
	must(t, err)
	if len(r.Tools) != 2 || r.Tools[0].ID != "call_1" || r.Tools[1].ID != "call_2" {
		t.Errorf("made-up ids %+v, want call_1 and call_2 (the history holds call_0)", r.Tools)
	}
	g := []byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"now","args":{}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}` + "\n\n")
	out, err = feedPieces(NewModelStream(Gemini, Responses, Answer{Model: "m", Created: 1, IDs: NewToolIDs(req, Responses)}), g)
	must(t, err)
	if r, err = checkResponsesStream(string(out)); err != nil || len(r.Tools) != 1 || r.Tools[0].ID != "call_1" {
		t.Errorf("Gemini's call: %+v %v", r.Tools, err)
	}
}

// The matched stop sequence an OpenAI-compatible server names with its
// finish (vLLM's choices[].stop_reason) reaches an Anthropic client's
// message_delta even when the usage, and so message_delta, comes in a later
// read: the writer keeps its own copy, not the upstream's bytes.
func TestStreamStopSequenceAcrossReads(t *testing.T) {
	s := NewModelStream(Chat, Messages, Answer{Model: "m"})
	finish := []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop","stop_reason":"END"}]}` + "\n\n")
	out, err := s.Feed(nil, finish)
	must(t, err)
	copy(finish, bytes.Repeat([]byte("x"), len(finish))) // the caller reuses its buffer
	out, err = s.Feed(out, []byte(`data: {"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n"))
	must(t, err)
	out, err = s.Finish(out)
	must(t, err)
	if !strings.Contains(string(out), `"stop_reason":"stop_sequence","stop_sequence":"END"`) {
		t.Errorf("the matched stop sequence is lost:\n%s", out)
	}
}
