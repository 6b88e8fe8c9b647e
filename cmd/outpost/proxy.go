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
)

// runProxy forwards TCP connections, as a load balancer in front of the
// gateway and the vendor registry does: in the compose stack it is the one
// service on both the control plane's network and the runners', so runners
// reach those two ports and nothing else, and nothing on the control plane's
// network has a route to a runner.
func runProxy(ctx context.Context, args []string, log *slog.Logger) error {
	var forwards []string
	fs := newFlagSet("proxy")
	fs.Func("forward", "LISTEN=HOST:PORT, e.g. :8081=api:8081 (repeatable); HOST is resolved for each connection, "+
		"which goes to one of its addresses at random (every replica of a compose service), the next when one refuses",
		func(s string) error { forwards = append(forwards, s); return nil })
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(forwards) == 0 {
		return errors.New("usage: outpost proxy -forward LISTEN=HOST:PORT...")
	}
	errc := make(chan error, len(forwards))
	for _, f := range forwards {
		listen, target, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("-forward %q: want LISTEN=HOST:PORT", f)
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return fmt.Errorf("proxy: listen on %s: %w", listen, err)
		}
		defer ln.Close()
		log.Info("listening", "server", "proxy", "addr", ln.Addr().String(), "to", target)
		go func() { errc <- forward(ctx, log, ln, target) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// forward serves ln until it is closed, each connection copied both ways
// to target.
func forward(ctx context.Context, log *slog.Logger, ln net.Listener, target string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("proxy %s: %w", ln.Addr(), err)
		}
		go func() {
			up, err := dialAny(ctx, target)
			if err != nil {
				log.Warn("proxy: no upstream", "to", target, "err", err)
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
