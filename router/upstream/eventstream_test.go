package upstream

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// frame encodes one event-stream message.
func frame(t testing.TB, headers map[string]string, payload []byte) []byte {
	t.Helper()
	var m eventstream.Message
	for _, k := range []string{":message-type", ":event-type", ":exception-type", ":error-code", ":content-type"} {
		if v, ok := headers[k]; ok {
			m.Headers.Set(k, eventstream.StringValue(v))
		}
	}
	m.Payload = payload
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// chunkFrame is Bedrock's chunk event carrying an Anthropic event, with
// the padding field Bedrock adds.
func chunkFrame(t testing.TB, event string) []byte {
	payload := `{"bytes":"` + base64.StdEncoding.EncodeToString([]byte(event)) + `","p":"abcdefghijklmnopqrstuvwxyzABCDEF"}`
	return frame(t, map[string]string{":message-type": "event", ":event-type": "chunk", ":content-type": "application/json"}, []byte(payload))
}

const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`
	evDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`
	evStop  = `{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":3,"outputTokenCount":1,"invocationLatency":120,"firstByteLatency":80}}`
)

func readAllES(data []byte, max int) (string, error) {
	out, err := io.ReadAll(NewEventStreamReader(bytes.NewReader(data), max))
	return string(out), err
}

func TestEventStreamReader(t *testing.T) {
	t.Parallel()
	good := append(append(chunkFrame(t, evStart), chunkFrame(t, evDelta)...), chunkFrame(t, evStop)...)
	corrupt := bytes.Clone(good)
	corrupt[len(chunkFrame(t, evStart))+40] ^= 0xff // inside the second message's payload
	oversized := bytes.Clone(good)
	oversized[0], oversized[1] = 0x7f, 0xff
	exception := append(chunkFrame(t, evStart), frame(t, map[string]string{":message-type": "exception", ":exception-type": "modelStreamErrorException"}, []byte(`{"message":"the model failed"}`))...)
	tests := []struct {
		name    string
		data    []byte
		want    string // SSE read before the end
		wantErr error  // nil: a clean end
	}{
		{"chunks, padded", good, "event: message_start\ndata: " + evStart + "\n\nevent: content_block_delta\ndata: " + evDelta + "\n\nevent: message_stop\ndata: " + evStop + "\n\n", nil},
		{"a corrupt CRC", corrupt, "event: message_start\ndata: " + evStart + "\n\n", ErrEventStreamCorrupt},
		{"truncated mid-message", good[:len(good)-7], "event: message_start\ndata: " + evStart + "\n\nevent: content_block_delta\ndata: " + evDelta + "\n\n", io.ErrUnexpectedEOF},
		{"an oversized length", oversized, "", ErrEventStreamTooLarge},
		{"an exception frame", exception, "event: message_start\ndata: " + evStart + "\n\n", &StreamException{Type: "modelStreamErrorException"}},
		{"an error frame", frame(t, map[string]string{":message-type": "error", ":error-code": "InternalFailure"}, nil), "", &StreamException{Type: "InternalFailure"}},
		{"empty", nil, "", nil},
		{"a chunk that is not an Anthropic event", frame(t, map[string]string{":message-type": "event", ":event-type": "chunk"}, []byte(`{"bytes":"bm90IGpzb24="}`)), "", ErrEventStreamCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAllES(tt.data, 64<<10)
			if got != tt.want {
				t.Errorf("read\n%q\nwant\n%q", got, tt.want)
			}
			var se, wantSE *StreamException
			switch {
			case errors.As(tt.wantErr, &wantSE):
				if !errors.As(err, &se) || *se != *wantSE {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			case !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestEventStreamExceptionKeepsNoMessage: an exception's message (which
// may quote the request) is not in the error.
func TestEventStreamExceptionKeepsNoMessage(t *testing.T) {
	t.Parallel()
	_, err := readAllES(frame(t, map[string]string{":message-type": "exception", ":exception-type": "validationException"}, []byte(`{"message":"secret prompt text"}`)), 0)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("err = %v", err)
	}
}

// TestEventStreamSmallReads: the SSE comes out whole through 1-byte reads.
func TestEventStreamSmallReads(t *testing.T) {
	t.Parallel()
	r := NewEventStreamReader(bytes.NewReader(append(chunkFrame(t, evStart), chunkFrame(t, evDelta)...)), 0)
	var out []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		out = append(out, b[:n]...)
		if err != nil {
			break
		}
	}
	if want := "event: message_start\ndata: " + evStart + "\n\nevent: content_block_delta\ndata: " + evDelta + "\n\n"; string(out) != want {
		t.Errorf("got %q", out)
	}
}

func FuzzEventStreamReader(f *testing.F) {
	f.Add(append(chunkFrame(f, evStart), chunkFrame(f, evDelta)...))
	f.Add(frame(f, map[string]string{":message-type": "exception", ":exception-type": "throttlingException"}, []byte(`{}`)))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := io.ReadAll(NewEventStreamReader(bytes.NewReader(data), 64<<10))
		if err == nil && len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			t.Errorf("a clean end mid-event: %q", out)
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			if line != "" && !strings.HasPrefix(line, "event: ") && !strings.HasPrefix(line, "data: ") {
				t.Fatalf("a line that is not SSE: %q", line)
			}
		}
	})
}

// framesReader yields one frame a Read, as frames of a paced stream
// arrive.
type framesReader struct {
	frame []byte
	left  int
}

func (f *framesReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	f.left--
	return copy(p, f.frame), nil
}

// BenchmarkEventStreamFrame is the cost of decoding one chunk frame into
// its SSE event, frames arriving one at a time.
func BenchmarkEventStreamFrame(b *testing.B) {
	one := chunkFrame(b, evDelta)
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(one)))
	src := &framesReader{frame: one, left: 1000}
	r := NewEventStreamReader(src, 0)
	for b.Loop() {
		if src.left == 0 {
			src.left = 1000
			r = NewEventStreamReader(src, 0)
		}
		if _, err := r.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEventStreamFramesThatCameTogether: frames already buffered are
// decoded by one Read; an exception among them comes after the data
// before it.
func TestEventStreamFramesThatCameTogether(t *testing.T) {
	t.Parallel()
	data := append(append(chunkFrame(t, evStart), chunkFrame(t, evDelta)...),
		frame(t, map[string]string{":message-type": "exception", ":exception-type": "modelStreamErrorException"}, []byte(`{}`))...)
	r := NewEventStreamReader(bytes.NewReader(data), 0)
	buf := make([]byte, 4096)
	n, err := r.Read(buf)
	if want := "event: message_start\ndata: " + evStart + "\n\nevent: content_block_delta\ndata: " + evDelta + "\n\n"; string(buf[:n]) != want || err != nil {
		t.Fatalf("first read %q, %v; want both events", buf[:n], err)
	}
	var se *StreamException
	if n, err := r.Read(buf); n != 0 || !errors.As(err, &se) || se.Type != "modelStreamErrorException" {
		t.Errorf("second read %d, %v; want the exception", n, err)
	}
}

// answerFrames is a short Bedrock answer as the simulator sends one:
// fourteen chunk frames (message_start, a text block of ten deltas,
// message_delta, message_stop), padded as Bedrock pads them.
func answerFrames(tb testing.TB) []byte {
	events := []string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}
	for i := range 9 {
		events = append(events, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word`+strings.Repeat("s", i)+` "}}`)
	}
	events = append(events, `{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`, evStop)
	var out []byte
	for _, ev := range events {
		out = append(out, chunkFrame(tb, ev)...)
	}
	return out
}

// BenchmarkEventStreamAnswer is what a whole short answer costs its
// reader, made for it (as each stream's is) and read to the end, its
// frames arriving together.
func BenchmarkEventStreamAnswer(b *testing.B) {
	data := answerFrames(b)
	buf := make([]byte, 8<<10)
	src := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		src.Reset(data)
		r := NewEventStreamReader(src, 0)
		for {
			_, err := r.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// chunkBytesScanned is chunkBytes without its fast path: the payload
// through the JSON scanner alone.
func chunkBytesScanned(payload []byte) []byte {
	var b64 []byte
	if !jsonscan.Object(payload, func(name, val []byte) {
		if string(name) == "bytes" && len(val) >= 2 && val[0] == '"' {
			b64 = val[1 : len(val)-1]
		}
	}) {
		return nil
	}
	return b64
}

// FuzzChunkBytes: the fast path reads every payload as the scanner does
// (the same string, or none), and takes nothing the base64 decoder would
// accept that the scanner refuses.
func FuzzChunkBytes(f *testing.F) {
	for _, p := range []string{
		`{"bytes":"eyJ0eXBlIjoicGluZyJ9","p":"abcdefghij"}`, `{"bytes":"eyJ0eXBlIjoicGluZyJ9"}`,
		`{"bytes":"eyJ0eXBl\nIjoicGluZyJ9","p":"ab"}`, `{"bytes":"eyJ0eXBl\r\nIjoicGluZyJ9"}`,
		`{"bytes":"ab\"cd","p":"x"}`, `{"bytes":"","p":""}`, `{"bytes":"QQ==","p":"a-b"}`,
		`{"bytes":"QQ==","p":"ab"} `, `{"bytes":"QQ==","p":"ab","bytes":"Qg=="}`, `{"bytes":"Q\u0051==","p":"ab"}`,
		`{"bytes":"QQ==","p":"ab"`, `{"bytes":"QQ==",`, `{"bytes":"QQ==\t"}`,
	} {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, want := chunkBytes(payload), chunkBytesScanned(payload)
		if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
			// The fast path may take a string the scanner refuses only when
			// no base64 decoding accepts it either.
			if want == nil && got != nil {
				if _, err := base64.StdEncoding.DecodeString(string(got)); err != nil {
					return
				}
			}
			t.Fatalf("chunkBytes(%q) = %q, the scanner reads %q", payload, got, want)
		}
	})
}

// TestEventStreamReadersShareBuffers: a reader gives its buffers back
// when its stream ends, and the next reader, made with them, reads its
// own stream whole; an ended reader keeps answering its end.
func TestEventStreamReadersShareBuffers(t *testing.T) {
	t.Parallel()
	answer := answerFrames(t)
	want, err := io.ReadAll(NewEventStreamReader(bytes.NewReader(answer), 0))
	if err != nil || !bytes.HasSuffix(want, []byte("event: message_stop\ndata: "+evStop+"\n\n")) {
		t.Fatalf("first answer: %v, %q", err, want)
	}
	exception := append(chunkFrame(t, evStart), frame(t, map[string]string{":message-type": "exception", ":exception-type": "throttlingException"}, []byte(`{}`))...)
	for i := range 50 {
		a := NewEventStreamReader(bytes.NewReader(answer), 0)
		b := NewEventStreamReader(bytes.NewReader(exception), 0)
		buf := make([]byte, 100) // reads smaller than the frames that came together
		var outA, outB []byte
		var errA, errB error
		for errA == nil || errB == nil {
			if errA == nil {
				var n int
				n, errA = a.Read(buf)
				outA = append(outA, buf[:n]...)
			}
			if errB == nil {
				var n int
				n, errB = b.Read(buf)
				outB = append(outB, buf[:n]...)
			}
		}
		if errA != io.EOF || !bytes.Equal(outA, want) {
			t.Fatalf("round %d: answer %v, %q", i, errA, outA)
		}
		var se *StreamException
		if !errors.As(errB, &se) || string(outB) != "event: message_start\ndata: "+evStart+"\n\n" {
			t.Fatalf("round %d: exception stream %v, %q", i, errB, outB)
		}
		if n, err := a.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("an ended reader read %d, %v", n, err)
		}
	}
}
