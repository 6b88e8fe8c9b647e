package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/registry"
)

// flakyLeases fails its first lookups (the database restarting), then says
// the attempt holds its lease.
type flakyLeases struct{ fail, calls int }

func (l *flakyLeases) AttemptHoldsLease(context.Context, string, int) (bool, error) {
	l.calls++
	if l.calls <= l.fail {
		return false, errors.New("connection refused")
	}
	return true, nil
}

func TestALeaseLookupThatFailsIsTriedAgainWhileTheClientWaits(t *testing.T) {
	user, pass := registry.IssueAttemptCredential(key, "build/b1", nil, "job_1", 1, time.Hour, time.Now())

	leases := &flakyLeases{fail: 2}
	if err := (registry.Tokens{Keys: &registry.StaticKeys{key}, Leases: leases}).Authorize(t.Context(), user, pass, nil); err != nil || leases.calls != 3 {
		t.Fatalf("two failed lookups, then the lease: %v after %d lookups, want authorized after 3", err, leases.calls)
	}

	// A client that went away is answered at once, with the lookup's error.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	leases = &flakyLeases{fail: 100}
	err := (registry.Tokens{Keys: &registry.StaticKeys{key}, Leases: leases}).Authorize(gone, user, pass, nil)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || leases.calls != 1 {
		t.Fatalf("lookups failing, client gone: %v after %d lookups, want the lookup's error after 1", err, leases.calls)
	}
}

// flakyKeys fails its first lookups (the database restarting), then finds
// the keys it holds.
type flakyKeys struct {
	fail, calls int
	keys        registry.StaticKeys
}

func (k *flakyKeys) RegistryKey(ctx context.Context, id string) (registry.Key, error) {
	k.calls++
	if k.calls <= k.fail {
		return registry.Key{}, errors.New("connection refused")
	}
	return k.keys.RegistryKey(ctx, id)
}

func TestAKeyLookupThatFailsIsTriedAgainButAnUnknownKeyIsNot(t *testing.T) {
	user, pass := registry.IssueCredential(key, "build/b1", nil, time.Hour, time.Now())

	keys := &flakyKeys{fail: 2, keys: registry.StaticKeys{key}}
	if err := (registry.Tokens{Keys: keys}).Authorize(t.Context(), user, pass, nil); err != nil || keys.calls != 3 {
		t.Fatalf("two failed lookups, then the key: %v after %d lookups, want authorized after 3", err, keys.calls)
	}

	keys = &flakyKeys{keys: registry.StaticKeys{}} // the key is retired
	if err := (registry.Tokens{Keys: keys}).Authorize(t.Context(), user, pass, nil); err == nil || keys.calls != 1 {
		t.Fatalf("unknown key: %v after %d lookups, want refused after 1", err, keys.calls)
	}
}
