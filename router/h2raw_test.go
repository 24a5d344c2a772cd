package router_test

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawH2 is an h2c server written frame by frame, for what Go's own server
// never sends on purpose: a REFUSED_STREAM reset, a GOAWAY in the middle of
// a stream. Each connection is served on one goroutine; every request,
// once its body has arrived, is handed to answer with its number (from 1,
// across connections).
type rawH2 struct {
	ln      net.Listener
	streams atomic.Int64 // requests received
	conns   atomic.Int64 // connections accepted
	answer  func(s *rawStream, n int64) (closeConn bool)
}

// rawStream is one request's stream, to answer on.
type rawStream struct {
	fr *http2.Framer
	id uint32
}

// newRawH2 serves answer on a loopback port; its base_url is url.
func newRawH2(t *testing.T, answer func(s *rawStream, n int64) bool) (h *rawH2, url string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h = &rawH2{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close() })
	go h.accept()
	return h, "http://" + ln.Addr().String() + "/v1"
}

func (h *rawH2) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.conns.Add(1)
		go h.serve(c)
	}
}

// serve reads c's frames until it closes or an answer closes it.
func (h *rawH2) serve(c net.Conn) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		case *http2.HeadersFrame:
			if f.StreamEnded() && h.answer(&rawStream{fr, f.StreamID}, h.streams.Add(1)) {
				return
			}
		case *http2.DataFrame:
			if f.StreamEnded() && h.answer(&rawStream{fr, f.StreamID}, h.streams.Add(1)) {
				return
			}
		}
	}
}

// headers starts a 200 event stream.
func (s *rawStream) headers() {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/event-stream"})
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: b.Bytes(), EndHeaders: true})
}

// data sends part of the body; end ends the stream.
func (s *rawStream) data(p string, end bool) { _ = s.fr.WriteData(s.id, end, []byte(p)) }

// refuse resets the stream as not processed (REFUSED_STREAM).
func (s *rawStream) refuse() { _ = s.fr.WriteRSTStream(s.id, http2.ErrCodeRefusedStream) }

// goAway says the connection closes, having processed up to this stream.
func (s *rawStream) goAway() { _ = s.fr.WriteGoAway(s.id, http2.ErrCodeNo, nil) }

// sseChunk is one Chat Completions stream chunk carrying text.
func sseChunk(text string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n"
}
