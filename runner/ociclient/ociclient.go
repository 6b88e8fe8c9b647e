package ociclient

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/outpost-dev/outpost/protocol"
)

// Concurrency is how many blobs (or child manifests) a copy moves at once.
const Concurrency = 8

// transport keeps enough idle connections per registry for Concurrency
// parallel transfers, and retries what registries answer with 429 or 5xx
// and connections closed before an answer (retryPolicy).
var transport = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2 * Concurrency
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	rt := retry.NewTransport(t)
	rt.Policy = func() retry.Policy { return retryPolicy }
	return rt
}()

// retryPolicy is oras-go's default, which also retries what a client sees
// while the registry, or the replica a load balancer gave it, restarts: a
// connection closed before any answer (io.EOF on a fresh connection, which
// net/http does not retry), refused, or every idle one closed by the server.
var retryPolicy = &retry.GenericPolicy{
	Retryable: func(resp *http.Response, err error) (bool, error) {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || closedIdle(err) {
			return true, nil
		}
		return retry.DefaultPredicate(resp, err)
	},
	Backoff: retry.DefaultBackoff, MinWait: 200 * time.Millisecond, MaxWait: 3 * time.Second, MaxRetry: 5,
}

// Repository is repository in the registry of access, for oras-go, with
// the access's credential (anonymous without one).
func Repository(access protocol.RegistryAccess, repository string) (*remote.Repository, error) {
	if err := CheckAddress(access.Address); err != nil {
		return nil, err
	}
	ref := registry.Reference{Registry: access.Address, Repository: repository}
	if err := ref.ValidateRepository(); err != nil {
		return nil, fmt.Errorf("invalid repository %q: lowercase letters, digits and separators (. _ __ - /) only", repository)
	}
	client := &auth.Client{
		Client: &http.Client{Transport: transport},
		Cache:  auth.NewCache(),
	}
	client.SetUserAgent("outpost-runner")
	if access.Username != "" || access.Password != "" {
		client.Credential = auth.StaticCredential(access.Address, auth.Credential{Username: access.Username, Password: access.Password})
	}
	return &remote.Repository{Client: client, Reference: ref, PlainHTTP: access.PlainHTTP}, nil
}

// Name is how a repository is shown: host/repository.
func Name(repo *remote.Repository) string {
	return repo.Reference.Registry + "/" + repo.Reference.Repository
}

// CheckAddress checks a registry address: host[:port], no scheme, no path.
func CheckAddress(address string) error {
	switch {
	case address == "":
		return errors.New("required (host[:port])")
	case strings.Contains(address, "://"):
		return fmt.Errorf("must be host[:port] without a scheme, got %q", address)
	}
	if err := (registry.Reference{Registry: address}).ValidateRegistry(); err != nil || strings.ContainsAny(address, "/@ ") {
		return fmt.Errorf("must be host[:port], got %q", address)
	}
	return nil
}

// closedIdle says whether err is net/http's "server closed idle
// connection" (unexported), which it returns once no pooled connection
// is left alive to retry on.
func closedIdle(err error) bool {
	return err != nil && strings.Contains(err.Error(), "http: server closed idle connection")
}
