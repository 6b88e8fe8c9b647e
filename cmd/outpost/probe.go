package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
)

// runProbe checks each target and fails on the first that does not answer:
// an http(s) URL must answer GET with 2xx, tcp://host:port must accept a
// connection. It is the images' health check (the control plane's image
// has no shell and no curl).
func runProbe(ctx context.Context, args []string, _ *slog.Logger) error {
	fs := newFlagSet("probe")
	timeout := fs.Duration("timeout", 3*time.Second, "how long each target may take")
	if err := fs.Parse(args, func(string) string { return "" }); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: outpost probe [-timeout 3s] URL|tcp://HOST:PORT...")
	}
	for _, target := range fs.Args() {
		tctx, cancel := context.WithTimeout(ctx, *timeout)
		err := probe(tctx, target)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", target, err)
		}
	}
	return nil
}

func probe(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "tcp":
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return err
		}
		return c.Close()
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("answered %s", resp.Status)
		}
		return nil
	}
	return fmt.Errorf("unknown scheme %q (want http, https or tcp)", u.Scheme)
}
