package conn

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestReasonPhrase(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]string{
		200: "OK", 404: "Not Found", 503: "Service Unavailable", // net/http's own
		529: "Site is overloaded", 499: "Client Closed Request", 520: "Web Server Returned an Unknown Error",
		530: "Origin DNS Error", 498: "Invalid Token",
		555: "Server Error", 460: "Client Error", 299: "Success", 399: "Redirection", 199: "Informational",
		999: "Unknown Status",
	} {
		if got := ReasonPhrase(code); got != want {
			t.Errorf("ReasonPhrase(%d) = %q, want %q", code, got, want)
		}
	}
}

// phraseServer serves h on loopback behind ReasonPhrases and GuardFraming,
// stacked as the binary stacks them, and returns its address.
func phraseServer(t *testing.T, h http.Handler, configure func(*http.Server)) string {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	if configure != nil {
		configure(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := ReasonPhrases(srv, GuardFraming(srv, ln))
	go srv.Serve(served)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// statusHandler answers /NNN with status NNN and a body naming it; /body
// with a 200 whose body starts like a generic status line (which must
// pass as written); /continue reads the body first (Expect: 100-continue)
// and answers 520. A request framed two ways gets 400, as the gateway's
// handler answers it.
func statusHandler(w http.ResponseWriter, r *http.Request) {
	if FramingFault(r) != "" {
		w.Header().Set("Connection", "close")
		http.Error(w, "both Transfer-Encoding and Content-Length", http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/body":
		io.WriteString(w, "HTTP/1.1 529 status code 529\r\n")
		return
	case "/continue":
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(520)
		io.WriteString(w, "520 body")
		return
	}
	var code int
	fmt.Sscanf(r.URL.Path, "/%d", &code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"status":%d}`, code)
}

// readResponse reads one final response off br (skipping interim 1xx
// ones): its status line as the bytes on the wire say it, and its body.
func readResponse(t *testing.T, br *bufio.Reader, method string) (string, string) {
	t.Helper()
	for {
		if _, err := br.Peek(1); err != nil {
			t.Fatalf("reading the status line: %v", err)
		}
		buffered, _ := br.Peek(br.Buffered())
		line, _, ok := strings.Cut(string(buffered), "\r\n")
		for !ok && len(buffered) < 1024 { // the rest of the line is on its way
			var err error
			if buffered, err = br.Peek(len(buffered) + 1); err != nil {
				t.Fatalf("reading the status line: %v", err)
			}
			line, _, ok = strings.Cut(string(buffered), "\r\n")
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("after %q: %v", line, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%q: reading the body: %v", line, err)
		}
		if resp.StatusCode >= 200 {
			return line, string(body)
		}
	}
}

// TestReasonPhrasesOnTheWire: over a real HTTP/1.1 connection, a status
// net/http has no text for goes out with its phrase; every response of a
// kept-alive and a pipelined connection is right, bodies are untouched,
// HTTP/1.0 and 100-continue work, and the framing guard beneath still sees
// its connection.
func TestReasonPhrasesOnTheWire(t *testing.T) {
	t.Parallel()
	addr := phraseServer(t, http.HandlerFunc(statusHandler), nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	exchange := func(req, wantStatus, wantBody string) {
		t.Helper()
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		status, body := readResponse(t, br, "GET")
		if status != wantStatus || body != wantBody {
			t.Errorf("%q: %q %q, want %q %q", strings.SplitN(req, "\r\n", 2)[0], status, body, wantStatus, wantBody)
		}
	}
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: gw\r\n\r\n" }

	exchange(get("/529"), "HTTP/1.1 529 Site is overloaded", `{"status":529}`)
	exchange(get("/200"), "HTTP/1.1 200 OK", `{"status":200}`)
	exchange(get("/body"), "HTTP/1.1 200 OK", "HTTP/1.1 529 status code 529\r\n")
	exchange(get("/499"), "HTTP/1.1 499 Client Closed Request", `{"status":499}`)
	exchange("POST /continue HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi",
		"HTTP/1.1 520 Web Server Returned an Unknown Error", "520 body")

	// Pipelined: three requests in one write, three answers in order.
	if _, err := io.WriteString(conn, get("/555")+get("/503")+get("/530")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HTTP/1.1 555 Server Error", "HTTP/1.1 503 Service Unavailable", "HTTP/1.1 530 Origin DNS Error"} {
		if status, _ := readResponse(t, br, "GET"); status != want {
			t.Errorf("pipelined: %q, want %q", status, want)
		}
	}

	// Framed two ways: the guard beneath still sees it (400, closed).
	exchange("POST /529 HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 400 Bad Request", "both Transfer-Encoding and Content-Length\n")
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after a request framed two ways: read %v, want the connection closed", err)
	}

	// HTTP/1.0.
	c10, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c10.Close()
	io.WriteString(c10, "GET /529 HTTP/1.0\r\n\r\n")
	c10.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, _ := bufio.NewReader(c10).ReadString('\n'); line != "HTTP/1.0 529 Site is overloaded\r\n" {
		t.Errorf("HTTP/1.0: %q, want HTTP/1.0 529 Site is overloaded", line)
	}

	// And what a Go client reads.
	resp, err := http.Get("http://" + addr + "/529")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Status != "529 Site is overloaded" {
		t.Errorf("http.Get: Status %q, want 529 Site is overloaded", resp.Status)
	}
}

// TestReasonPhrasesLeaveHTTP2Alone: an HTTP/2 connection (h2c, prior
// knowledge) through the same listener gets its statuses and bodies
// intact: its frames are never taken for a status line.
func TestReasonPhrasesLeaveHTTP2Alone(t *testing.T) {
	t.Parallel()
	addr := phraseServer(t, http.HandlerFunc(statusHandler), func(srv *http.Server) {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	})
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, code := range []int{529, 200, 555, 529} {
		resp, err := client.Get(fmt.Sprintf("http://%s/%d", addr, code))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != code || string(body) != fmt.Sprintf(`{"status":%d}`, code) {
			t.Errorf("HTTP/%d %d %q, want HTTP/2 %d and its body", resp.ProtoMajor, resp.StatusCode, body, code)
		}
	}
}

// discardConn is a connection whose writes go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkPhraseConnWrite: the cost per response of the wrapper on the
// hot path: the idle state, a status line net/http knows (looked at and
// left), and four body writes.
func BenchmarkPhraseConnWrite(b *testing.B) {
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\ndata: {\"id\":\"1\"}\n\n")
	chunk := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n")
	b.Run("plain", func(b *testing.B) {
		var c net.Conn = discardConn{}
		b.ReportAllocs()
		for b.Loop() {
			c.Write(head)
			for range 4 {
				c.Write(chunk)
			}
		}
	})
	b.Run("phrases", func(b *testing.B) {
		pc := &phraseConn{Conn: discardConn{}}
		var c net.Conn = pc
		b.ReportAllocs()
		for b.Loop() {
			pc.atStatus.Store(true) // what ConnState(StateIdle) does
			c.Write(head)
			for range 4 {
				c.Write(chunk)
			}
		}
	})
	b.Run("phrases-rewrite", func(b *testing.B) { // the rare path: a 529
		pc := &phraseConn{Conn: discardConn{}}
		head := []byte("HTTP/1.1 529 status code 529\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n")
		b.ReportAllocs()
		for b.Loop() {
			pc.atStatus.Store(true)
			pc.Write(head)
		}
	})
}

// BenchmarkAPIListenerRequest: a kept-alive request and its answer over
// loopback, through the framing guard alone and with ReasonPhrases on top.
func BenchmarkAPIListenerRequest(b *testing.B) {
	for _, withPhrases := range []bool{false, true} {
		name := "guard"
		if withPhrases {
			name = "guard+phrases"
		}
		b.Run(name, func(b *testing.B) {
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"ok":true}`)
			})}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			served := ReasonPhrases(srv, GuardFraming(srv, ln))
			if withPhrases {
				served = ReasonPhrases(srv, served)
			}
			go srv.Serve(served)
			defer srv.Close()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			req := []byte("GET / HTTP/1.1\r\nHost: gw\r\n\r\n")
			b.ReportAllocs()
			for b.Loop() {
				conn.Write(req)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
