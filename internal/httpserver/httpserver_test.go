package httpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// small are limits a test can outlast: a slow client is cut after them.
var small = httpserver.Limits{ReadHeader: 300 * time.Millisecond, Read: time.Second, Write: 5 * time.Second,
	Idle: time.Second, MaxHeaderBytes: 4 << 10}

// giveUp is when a test stops waiting for the server to cut a client: far
// beyond the limits, so reaching it means the server never did.
const giveUp = 60 * time.Second

// newGateway serves a real gateway (on PostgreSQL) with the small limits.
func newGateway(t *testing.T) *httptest.Server {
	t.Helper()
	s := storetest.Open(t, store.Postgres)
	g := gateway.New(gateway.Config{Store: s})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = httpserver.New(g.Handler(), small)
	srv.Start()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv
}

// dial opens a raw TCP connection to srv.
func dial(t *testing.T, srv *httptest.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(giveUp)); err != nil {
		t.Fatal(err)
	}
	return c
}

// startRegister dials srv and writes a register request's line, its Host
// header, then rest (more headers, a body: as much as the test sends at once).
func startRegister(t *testing.T, srv *httptest.Server, rest string) net.Conn {
	t.Helper()
	c := dial(t, srv)
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\n%s", protocol.PathRegister, rest); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle sends data one byte at a time, a byte every 20ms (repeating it),
// until a write fails: the server closed the connection. It fails the test
// if the server is still reading at giveUp.
func trickle(t *testing.T, c net.Conn, data string) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := c.Write([]byte{data[i%len(data)]}); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server still reads the slow client after %s", giveUp)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertClosed reads what the server sent until the connection ends, which
// must be before giveUp.
func assertClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open after %s (read %q)", giveUp, got)
	}
	return string(got)
}

// assertServes checks that srv answers another client meanwhile: a
// registration without a token is the gateway's 400 naming the field.
func assertServes(t *testing.T, srv *httptest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+protocol.PathRegister, strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "registration_token") {
		t.Fatalf("another client: %d %s, want the gateway's 400 on registration_token", res.StatusCode, body)
	}
}

// Slowloris: headers sent a byte at a time never finish; the server closes
// the connection once ReadHeader has passed, and serves others meanwhile.
func TestSlowHeadersAreCut(t *testing.T) {
	t.Parallel()
	srv := newGateway(t)
	c := startRegister(t, srv, "")
	done := make(chan struct{})
	go func() { defer close(done); assertServes(t, srv) }()
	trickle(t, c, "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaa\r\n")
	assertClosed(t, c)
	<-done
	assertServes(t, srv)
}

// A body sent a byte at a time: the server stops reading it once Read has
// passed and closes the connection; others are served.
func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	srv := newGateway(t)
	c := startRegister(t, srv, "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"name\":\"")
	trickle(t, c, "a")
	assertClosed(t, c)
	assertServes(t, srv)
}

// An idle keep-alive connection is closed after Idle.
func TestIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	srv := newGateway(t)
	c := startRegister(t, srv, "Content-Length: 2\r\n\r\n{}")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || res.Close {
		t.Fatalf("first request: %d (close %v), want 400 on a kept-alive connection", res.StatusCode, res.Close)
	}
	assertClosed(t, c)
}

// Headers over MaxHeaderBytes are refused (431) and the connection closed.
func TestHugeHeadersAreRefused(t *testing.T) {
	t.Parallel()
	srv := newGateway(t)
	c := startRegister(t, srv, "X-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
	if got := assertClosed(t, c); !strings.HasPrefix(got, "HTTP/1.1 431") {
		t.Fatalf("got %.60q, want a 431", got)
	}
	assertServes(t, srv)
}

// Check refuses limits that would cut a long poll.
func TestCheck(t *testing.T) {
	if err := httpserver.Defaults.Check(35 * time.Second); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	if err := small.Check(35 * time.Second); err == nil {
		t.Fatal("a 5s write timeout passed a 35s long poll")
	}
}
