package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnTrackerFollowsAKeptAliveConnection: a connection is busy while
// its request is served, open and idle after the answer, and gone once its
// client closes it; wait returns as soon as what it waits for holds, and
// not before (the same wait, bounded, first fails while the connection is
// open).
func TestConnTrackerFollowsAKeptAliveConnection(t *testing.T) {
	answer := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-answer
		_, _ = fmt.Fprint(w, "ok")
	})}
	tr := newConnTracker()
	tr.track(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v", err)
		}
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !tr.wait(ctx, func(open, busy int) bool { return open == 1 && busy == 1 }) {
		t.Fatal("the connection serving a request was not counted open and busy")
	}
	close(answer)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !tr.wait(ctx, func(open, busy int) bool { return open == 1 && busy == 0 }) {
		t.Fatal("the kept-alive connection after its answer was not counted open and idle")
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if tr.wait(short, allClosed) {
		t.Fatal("wait(allClosed) held with a connection open")
	}
	if !tr.wait(ctx, noneBusy) {
		t.Fatal("wait(noneBusy) did not hold with the only connection idle")
	}
	conn.Close()
	if !tr.wait(ctx, allClosed) {
		open, busy, _ := tr.count()
		t.Fatalf("wait(allClosed) after the client closed: open %d, busy %d", open, busy)
	}
}
