package upstream

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// converseFrame is a ConverseStream event: its type names the payload.
func converseFrame(t testing.TB, typ, payload string) []byte {
	return frame(t, map[string]string{":message-type": "event", ":event-type": typ, ":content-type": "application/json"}, []byte(payload))
}

func TestConverseStreamReader(t *testing.T) {
	t.Parallel()
	var data []byte
	data = append(data, converseFrame(t, "messageStart", `{"role":"assistant","p":"abc"}`)...)
	data = append(data, converseFrame(t, "contentBlockDelta", "{\"contentBlockIndex\":0,\n \"delta\":{\"text\":\"Hi\"}}")...)
	data = append(data, converseFrame(t, "metadata", `{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":12}}`)...)
	out, err := io.ReadAll(NewConverseStreamReader(bytes.NewReader(data), 0))
	want := `data: {"messageStart":{"role":"assistant","p":"abc"}}` + "\n\n" +
		`data: {"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}` + "\n\n" +
		`data: {"metadata":{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":12}}}` + "\n\n"
	if err != nil || string(out) != want {
		t.Fatalf("got %q, %v\nwant %q", out, err, want)
	}

	// An exception after the first event ends the stream with its type.
	ex := append(converseFrame(t, "messageStart", `{"role":"assistant"}`),
		frame(t, map[string]string{":message-type": "exception", ":exception-type": "throttlingException"}, []byte(`{"message":"slow down"}`))...)
	out, err = io.ReadAll(NewConverseStreamReader(bytes.NewReader(ex), 0))
	var se *StreamException
	if !errors.As(err, &se) || se.Type != "throttlingException" || string(out) != `data: {"messageStart":{"role":"assistant"}}`+"\n\n" {
		t.Errorf("exception: got %q, %v", out, err)
	}

	// An event type that could not be written as a JSON name is corrupt.
	_, err = io.ReadAll(NewConverseStreamReader(bytes.NewReader(converseFrame(t, `bad"type`, `{}`)), 0))
	if !errors.Is(err, ErrEventStreamCorrupt) {
		t.Errorf("quoted type: %v, want ErrEventStreamCorrupt", err)
	}
}
