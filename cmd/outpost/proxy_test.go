package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/internal/proxied"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// proxiedGateway is a gateway served as `outpost api` serves it, believing
// the PROXY protocol from 127.0.0.1 only, behind `outpost proxy
// -forward-proxy-protocol`; its log (limiter's warnings) goes to logs.
type proxiedGateway struct {
	direct, proxy string // the gateway's address, the proxy's
	logs          *testutil.LockedBuffer
}

func startProxiedGateway(t *testing.T, version string) proxiedGateway {
	logs := &testutil.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	trusted, err := proxied.Parse("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenProxied("gateway", "127.0.0.1:0", trusted)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	limiter := authlimit.New(authlimit.Config{Burst: authlimit.DefaultBurst, Every: time.Hour, Log: log})
	g := gateway.New(gateway.Config{Store: storetest.Open(t, store.Postgres), Logger: log, AuthLimiter: limiter})
	done := make(chan error, 2)
	go func() { done <- serveListener(ctx, log, "gateway", ln, httpserver.New(g.Handler(), httpserver.Defaults)) }()
	p := proxiedGateway{direct: ln.Addr().String(), proxy: testutil.FreeAddr(t), logs: logs}
	go func() {
		done <- runProxy(ctx, []string{"-proxy-protocol-version", version, "-forward-proxy-protocol", p.proxy + "=" + p.direct}, log)
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	for c, err := net.Dial("tcp", p.proxy); ; c, err = net.Dial("tcp", p.proxy) {
		if err == nil {
			c.Close()
			return p
		}
		select {
		case err := <-done:
			t.Fatalf("the gateway or the proxy ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// heartbeat sends a runner heartbeat with a wrong token whose prefix is
// guess, over a connection from the loopback address from to addr; first
// header, when not nil, is written on it. It returns the answer's status
// line ("" when the connection was closed unanswered).
func heartbeat(t *testing.T, from, addr string, guess int, header *proxyproto.Header) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if header != nil {
		if _, err := header.WriteTo(c); err != nil {
			t.Fatal(err)
		}
	}
	// A prefix of its own per client and guess (the limit per prefix is not under test).
	tok := fmt.Sprintf("%s%04d%04d%s", protocol.RunnerTokenPrefix, net.ParseIP(from).To4()[3], guess, strings.Repeat("x", 44))
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: 2\r\nConnection: close\r\n\r\n{}", protocol.PathRunnerHeartbeat, tok)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// Two clients behind one `outpost proxy` that sends the PROXY protocol are
// told apart: the one that keeps failing authentication is answered 429,
// the other, through the same proxy, still 401, and the log names the
// guesser's address. A header from a peer that is not trusted is not
// believed, and a trusted peer must send one.
func TestProxyProtocolTellsClientsApart(t *testing.T) {
	for _, version := range []string{"2", "1"} {
		t.Run("v"+version, func(t *testing.T) {
			p := startProxiedGateway(t, version)
			for i := range authlimit.DefaultBurst {
				if got := heartbeat(t, "127.0.0.2", p.proxy, i, nil); !strings.Contains(got, " 401 ") {
					t.Fatalf("guess %d of 127.0.0.2 through the proxy: %q, want 401", i+1, got)
				}
			}
			if got := heartbeat(t, "127.0.0.2", p.proxy, 99, nil); !strings.Contains(got, " 429 ") {
				t.Fatalf("127.0.0.2 over the limit, through the proxy: %q, want 429", got)
			}
			if got := heartbeat(t, "127.0.0.3", p.proxy, 0, nil); !strings.Contains(got, " 401 ") {
				t.Fatalf("127.0.0.3 through the same proxy: %q, want 401 (not limited)", got)
			}
			if logs := p.logs.String(); !strings.Contains(logs, "over the limit from one source\" source=127.0.0.2") {
				t.Fatalf("the log does not name the client 127.0.0.2:\n%s", logs)
			}
			// 127.0.0.4, not trusted, claims to be 127.0.0.3: the header is
			// not read as one (a malformed request), nothing is counted for 127.0.0.3.
			spoof := proxyproto.HeaderProxyFromAddrs(2, &net.TCPAddr{IP: net.ParseIP("127.0.0.3"), Port: 1},
				&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 2})
			for i := range authlimit.DefaultBurst + 1 {
				if got := heartbeat(t, "127.0.0.4", p.direct, i, spoof); !strings.Contains(got, " 400 ") {
					t.Fatalf("a PROXY header from 127.0.0.4, not trusted: %q, want 400", got)
				}
			}
			if got := heartbeat(t, "127.0.0.3", p.proxy, 1, nil); !strings.Contains(got, " 401 ") {
				t.Fatalf("127.0.0.3 after 127.0.0.4's forged headers: %q, want 401", got)
			}
			// Directly, without a header, 127.0.0.2 is itself: still over the limit.
			if got := heartbeat(t, "127.0.0.2", p.direct, 100, nil); !strings.Contains(got, " 429 ") {
				t.Fatalf("127.0.0.2 directly: %q, want 429", got)
			}
			if got := heartbeat(t, "127.0.0.1", p.direct, 0, nil); got != "" {
				t.Fatalf("the trusted proxy's address without a header: %q, want the connection closed", got)
			}
		})
	}
}
