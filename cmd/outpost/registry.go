package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// registryFlags configure the vendor registry a control-plane process
// serves (api, dev).
type registryFlags struct {
	listen, dir string
}

func (r *registryFlags) register(fs *flag.FlagSet, defaultDir string) {
	fs.StringVar(&r.listen, "registry-listen", envOr("OUTPOST_REGISTRY_LISTEN", "127.0.0.1:5000"),
		"address of the vendor's OCI registry (\"\": serve none, when another outpost api process serves it) (env OUTPOST_REGISTRY_LISTEN)")
	fs.StringVar(&r.dir, "registry-dir", envOr("OUTPOST_REGISTRY_DIR", defaultDir),
		"where the vendor registry keeps its blobs (env OUTPOST_REGISTRY_DIR)")
}

// start serves the vendor registry: pushes and pulls need a short-lived
// credential signed with the store's registry key (see activities). Nil
// when not asked for.
func (r *registryFlags) start(ctx context.Context, s *store.Store) (*registry.Server, error) {
	if r.listen == "" {
		return nil, nil
	}
	key, err := s.RegistryKey(ctx)
	if err != nil {
		return nil, err
	}
	srv, err := registry.Start(ctx, registry.Config{Addr: r.listen, Dir: r.dir, Auth: registry.Tokens{Key: key}})
	if err != nil {
		return nil, fmt.Errorf("vendor registry: %w", err)
	}
	return srv, nil
}

// parseRegistryURL reads the vendor registry's URL as runners reach it
// ("http://host:port" for a plain-HTTP loopback registry, "https://host" or
// a bare "host:port", which means HTTPS) into an address and whether it is
// plain HTTP.
func parseRegistryURL(raw string) (address string, plainHTTP bool, err error) {
	if raw == "" {
		return "", false, nil
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return "", false, fmt.Errorf("-registry-url: want http://host:port, https://host[:port] or host:port, got %q", raw)
	}
	return u.Host, u.Scheme == "http", nil
}
