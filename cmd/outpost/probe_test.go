package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// The images' health check: a 2xx answer and an open port pass; anything
// else fails, naming the target.
func TestProbe(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer bad.Close()
	closed := testutil.FreeAddr(t)
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string // "" for success, else text of the error
	}{
		{[]string{ok.URL}, ""},
		{[]string{"tcp://" + strings.TrimPrefix(ok.URL, "http://")}, ""},
		{[]string{ok.URL, bad.URL + "/healthz"}, bad.URL + "/healthz: answered 503 Service Unavailable"},
		{[]string{"tcp://" + closed}, "tcp://" + closed + ": "},
		{[]string{"ftp://x"}, `unknown scheme "ftp"`},
		{nil, "usage: outpost probe"},
	} {
		err := runProbe(ctx, tc.args, slog.New(slog.DiscardHandler))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("probe %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The proxy copies each connection both ways to its target, and closes one
// it has no upstream for.
func TestProxyForwards(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	for target, want := range map[string]string{echo.Addr().String(): "hello", testutil.FreeAddr(t): ""} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go forward(ctx, log, ln, forwarding{target: target})
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte("hello"))
		got := make([]byte, 5)
		n, _ := io.ReadFull(c, got)
		c.Close()
		if string(got[:n]) != want {
			t.Errorf("through the proxy to %s: read %q, want %q", target, got[:n], want)
		}
	}
	if err := runProxy(ctx, []string{"-forward", "nonsense"}, log); err == nil || !strings.Contains(err.Error(), "want LISTEN=HOST:PORT") {
		t.Errorf("a bad -forward: %v", err)
	}
}
