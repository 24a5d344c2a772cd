package upstream

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
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
