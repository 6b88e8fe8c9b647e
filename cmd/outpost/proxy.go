package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/pires/go-proxyproto"
)

// runProxy forwards TCP connections, as a load balancer in front of the
// gateway and the vendor registry does: in the compose stack it is the one
// service on both the control plane's network and the runners', so runners
// reach those two ports and nothing else, and nothing on the control plane's
// network has a route to a runner.
//
// A forward given with -forward-proxy-protocol first sends its upstream a
// PROXY protocol header naming the client (the upstream must expect it:
// `outpost api -proxy-protocol-from`), so that the API and the gateway tell
// the clients behind the proxy apart.
func runProxy(ctx context.Context, args []string, log *slog.Logger) error {
	var forwards []forwarding
	var version int
	fs := newFlagSet("proxy")
	add := func(header bool) func(string) error {
		return func(s string) error {
			listen, target, ok := strings.Cut(s, "=")
			if !ok {
				return fmt.Errorf("%q: want LISTEN=HOST:PORT", s)
			}
			forwards = append(forwards, forwarding{listen: listen, target: target, header: header})
			return nil
		}
	}
	fs.Func("forward", "LISTEN=HOST:PORT, e.g. :8081=api:8081 (repeatable); HOST is resolved for each connection, "+
		"which goes to one of its addresses at random (every replica of a compose service), the next when one refuses", add(false))
	fs.Func("forward-proxy-protocol", "LISTEN=HOST:PORT as -forward, each connection starting with a PROXY protocol header "+
		"that names the client (repeatable)", add(true))
	fs.IntVar(&version, "proxy-protocol-version", 2, "the PROXY protocol version -forward-proxy-protocol sends: 1 (text) or 2 (binary)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(forwards) == 0 {
		return errors.New("usage: outpost proxy -forward LISTEN=HOST:PORT...")
	}
	if version != 1 && version != 2 {
		return fmt.Errorf("-proxy-protocol-version: want 1 or 2, got %d", version)
	}
	errc := make(chan error, len(forwards))
	for _, f := range forwards {
		if f.header {
			f.version = byte(version)
		}
		ln, err := net.Listen("tcp", f.listen)
		if err != nil {
			return fmt.Errorf("proxy: listen on %s: %w", f.listen, err)
		}
		defer ln.Close()
		log.Info("listening", "server", "proxy", "addr", ln.Addr().String(), "to", f.target, "proxy_protocol", f.version)
		go func() { errc <- forward(ctx, log, ln, f) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// forwarding is one -forward: where to listen, where to, and the PROXY
// protocol version to send (0: none).
type forwarding struct {
	listen, target string
	header         bool
	version        byte
}

// forward serves ln until it is closed, each connection copied both ways
// to f's target.
func forward(ctx context.Context, log *slog.Logger, ln net.Listener, f forwarding) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("proxy %s: %w", ln.Addr(), err)
		}
		go func() {
			up, err := dialAny(ctx, f.target)
			if err == nil && f.version != 0 {
				_, err = proxyproto.HeaderProxyFromAddrs(f.version, c.RemoteAddr(), c.LocalAddr()).WriteTo(up)
			}
			if err != nil {
				log.Warn("proxy: no upstream", "to", f.target, "err", err)
				if up != nil {
					up.Close()
				}
				c.Close()
				return
			}
			go func() { io.Copy(up, c); up.Close() }()
			io.Copy(c, up)
			c.Close()
		}()
	}
}

// dialAny connects to one of target's addresses, tried in random order.
func dialAny(ctx context.Context, target string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	d := net.Dialer{Timeout: 5 * time.Second}
	for _, a := range addrs {
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", net.JoinHostPort(a, port)); err == nil {
			return c, nil
		}
	}
	return nil, err
}
