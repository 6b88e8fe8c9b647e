package store_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// An org's release key is made once, on first use (also by processes
// asking at once), signs what its public key verifies, and its private key
// is sealed at rest.
func TestReleaseKeyIsMadeOnceAndSealedAtRest(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newFixture(t, d)
		if _, err := f.s.ReleasePublicKey(ctx, f.org.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("before first use: %v; want not found", err)
		}
		got := make([]store.ReleaseKey, 4)
		made := make([]bool, 4)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], made[i], _ = f.s.ReleaseKey(ctx, f.org.ID) })
		}
		wg.Wait()
		n := 0
		for i, k := range got {
			if k.PublicKey != got[0].PublicKey || k.PrivateKey != got[0].PrivateKey {
				t.Fatalf("key %d differs from key 0", i)
			}
			if made[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d calls made the key; want 1", n)
		}
		pub, priv, err := got[0].Keys()
		if err != nil || !ed25519.Verify(pub, []byte("m"), ed25519.Sign(priv, []byte("m"))) {
			t.Fatalf("the key pair does not sign and verify: %v", err)
		}
		public, err := f.s.ReleasePublicKey(ctx, f.org.ID)
		if err != nil || public.PrivateKey != "" || public.PublicKey != got[0].PublicKey || public.KeyID == "" {
			t.Fatalf("public key %+v, %v", public, err)
		}
		var raw []string
		f.s.DB().Raw("SELECT private_key FROM release_keys").Scan(&raw)
		if len(raw) != 1 || !seal.IsSealed(raw[0]) {
			t.Fatalf("private key at rest: %q; want it sealed", raw)
		}
		if d == store.Postgres && bytes.Contains(storetest.DatabaseBytes(t, f.s), []byte(got[0].PrivateKey)) {
			t.Error("the private key is in a dump of the database")
		}
	})
}
