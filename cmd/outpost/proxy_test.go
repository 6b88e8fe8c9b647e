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

	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/internal/proxied"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// proxiedPlane is the API and the gateway served by the plane on one
// listener that believes the PROXY protocol from 127.0.0.1 only, behind
// `outpost proxy -forward-proxy-protocol`; its log (the limiter's warnings)
// goes to logs.
type proxiedPlane struct {
	direct, proxy string // the plane's address, the proxy's
	logs          *testutil.LockedBuffer
}

func startProxiedPlane(t *testing.T, version string) proxiedPlane {
	logs := &testutil.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	trusted, err := proxied.Parse("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenProxied("api", "127.0.0.1:0", trusted)
	if err != nil {
		t.Fatal(err)
	}
	s := storetest.Open(t, store.Postgres)
	limiter := authlimit.New(authlimit.Config{Burst: authlimit.DefaultBurst, Every: time.Hour, Log: log})
	pl := &plane{log: log, apiLn: ln, limits: httpserver.Defaults,
		api:     api.New(api.Config{Store: s, Logger: log, AuthLimiter: limiter}),
		gateway: gateway.New(gateway.Config{Store: s, Logger: log, AuthLimiter: limiter})}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	go func() { done <- pl.run(ctx) }()
	p := proxiedPlane{direct: ln.Addr().String(), proxy: testutil.FreeAddr(t), logs: logs}
	go func() {
		done <- runProxy(ctx, []string{"-proxy-protocol-version", version, "-forward-proxy-protocol", p.proxy + "=" + p.direct}, log)
	}()
	t.Cleanup(func() { cancel(); <-done; <-done; ln.Close() })
	for c, err := net.Dial("tcp", p.proxy); ; c, err = net.Dial("tcp", p.proxy) {
		if err == nil {
			c.Close()
			return p
		}
		select {
		case err := <-done:
			t.Fatalf("the plane or the proxy ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// route is a call that needs a token of prefix: one to the API, one to
// the gateway.
type route struct{ method, path, prefix string }

var (
	apiRoute     = route{"GET", "/v1/installs", protocol.APITokenPrefix}
	gatewayRoute = route{"POST", protocol.PathRunnerHeartbeat, protocol.RunnerTokenPrefix}
)

// attempt calls r with a wrong token, a prefix of its own per client and
// guess (the limit per prefix is not under test), over a connection from
// the loopback address from to addr; first header, when not nil, is
// written on it. It returns the answer's status line ("" when the
// connection was closed unanswered).
func attempt(t *testing.T, from, addr string, r route, guess int, header *proxyproto.Header) string {
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
	tok := fmt.Sprintf("%s%04d%04d%s", r.prefix, net.ParseIP(from).To4()[3], guess, strings.Repeat("x", 44))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: outpost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: 2\r\nConnection: close\r\n\r\n{}", r.method, r.path, tok)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// Two clients behind one `outpost proxy` that sends the PROXY protocol are
// told apart by the API and the gateway: the one that keeps failing
// authentication is answered 429, the other, through the same proxy, still 401, and the log names the
// guesser's address. A header from a peer that is not trusted is not
// believed, and a trusted peer must send one.
func TestProxyProtocolTellsClientsApart(t *testing.T) {
	for _, version := range []string{"2", "1"} {
		t.Run("v"+version, func(t *testing.T) {
			p := startProxiedPlane(t, version)
			// 127.0.0.2 fails half its burst on the API, half on the gateway (one limiter).
			for i := range authlimit.DefaultBurst {
				r := []route{apiRoute, gatewayRoute}[i%2]
				if got := attempt(t, "127.0.0.2", p.proxy, r, i, nil); !strings.Contains(got, " 401 ") {
					t.Fatalf("guess %d of 127.0.0.2 through the proxy, %s: %q, want 401", i+1, r.path, got)
				}
			}
			for _, r := range []route{apiRoute, gatewayRoute} {
				if got := attempt(t, "127.0.0.2", p.proxy, r, 99, nil); !strings.Contains(got, " 429 ") {
					t.Fatalf("127.0.0.2 over the limit, through the proxy, %s: %q, want 429", r.path, got)
				}
				if got := attempt(t, "127.0.0.3", p.proxy, r, 0, nil); !strings.Contains(got, " 401 ") {
					t.Fatalf("127.0.0.3 through the same proxy, %s: %q, want 401 (not limited)", r.path, got)
				}
			}
			if logs := p.logs.String(); !strings.Contains(logs, "over the limit from one source\" source=127.0.0.2") {
				t.Fatalf("the log does not name the client 127.0.0.2:\n%s", logs)
			}
			// 127.0.0.4, not trusted, claims to be 127.0.0.3: the header is
			// not read as one (a malformed request), nothing is counted for 127.0.0.3.
			spoof := proxyproto.HeaderProxyFromAddrs(2, &net.TCPAddr{IP: net.ParseIP("127.0.0.3"), Port: 1},
				&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 2})
			for i := range authlimit.DefaultBurst + 1 {
				if got := attempt(t, "127.0.0.4", p.direct, gatewayRoute, i, spoof); !strings.Contains(got, " 400 ") {
					t.Fatalf("a PROXY header from 127.0.0.4, not trusted: %q, want 400", got)
				}
			}
			if got := attempt(t, "127.0.0.3", p.proxy, gatewayRoute, 1, nil); !strings.Contains(got, " 401 ") {
				t.Fatalf("127.0.0.3 after 127.0.0.4's forged headers: %q, want 401", got)
			}
			// Directly, without a header, 127.0.0.2 is itself: still over the limit.
			if got := attempt(t, "127.0.0.2", p.direct, apiRoute, 100, nil); !strings.Contains(got, " 429 ") {
				t.Fatalf("127.0.0.2 directly: %q, want 429", got)
			}
			if got := attempt(t, "127.0.0.1", p.direct, apiRoute, 0, nil); got != "" {
				t.Fatalf("the trusted proxy's address without a header: %q, want the connection closed", got)
			}
		})
	}
}
