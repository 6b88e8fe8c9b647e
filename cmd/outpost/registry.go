package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// registryListenFlag adds -registry-listen, the address of the vendor
// registry a control-plane process serves (api, dev).
func registryListenFlag(fs *envflag.FlagSet) *string {
	return fs.String("registry-listen", "127.0.0.1:5000",
		"address of the vendor's OCI registry, its blobs kept in <data-dir>/registry (\"\": serve none, when another outpost api process serves it; replicas that serve it share the directory)")
}

// startRegistry serves the vendor registry on addr, its blobs in the data
// directory: pushes and pulls need a short-lived credential signed with an
// org's signing key for a job attempt that still holds its lease (see
// internal/attemptcred). The upload secret is derived from the platform's
// current key, so API replicas may serve one shared directory. Nil when addr
// is empty.
func startRegistry(ctx context.Context, s *store.Store, addr, dataDir string) (*registry.Server, error) {
	if addr == "" {
		return nil, nil
	}
	key, err := s.SigningKey(ctx, store.PlatformKeys)
	if err != nil {
		return nil, err
	}
	auth := registry.Tokens{Keys: attemptcred.RegistryKeys(s), Leases: s}
	srv, err := registry.Start(ctx, registry.Config{Addr: addr, Dir: filepath.Join(dataDir, "registry"), Auth: auth,
		UploadSecret: registry.UploadSecret(registry.Key(key))})
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
