package store_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// Each org signs with a key of its own, created once; a rotation makes a
// new current key and the old one verifies until it is retired; the
// current key cannot be retired.
func TestSigningKeysPerOrgRotateAndRetire(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		a, err := f.s.SigningKey(ctx, f.org.ID)
		if err != nil || len(a.Secret) != 32 || a.ID == "" || a.Owner != f.org.ID {
			t.Fatalf("key: %+v, %v", a, err)
		}
		if again, err := f.s.SigningKey(ctx, f.org.ID); err != nil || again.ID != a.ID || !bytes.Equal(again.Secret, a.Secret) {
			t.Fatalf("second read gave another key: %+v, %v", again, err)
		}
		other, _, err := f.s.CreateOrg(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		// Processes asking at once for an org's first key get one key.
		var wg sync.WaitGroup
		got := make([]store.SigningKey, 4)
		for i := range got {
			wg.Go(func() { got[i], _ = f.s.SigningKey(ctx, other.ID) })
		}
		wg.Wait()
		for _, k := range got[1:] {
			if k.ID != got[0].ID || !bytes.Equal(k.Secret, got[0].Secret) || len(k.Secret) != 32 {
				t.Fatalf("concurrent first keys %q and %q: want one", got[0].ID, k.ID)
			}
		}
		b := got[0]
		if b.ID == a.ID || bytes.Equal(b.Secret, a.Secret) {
			t.Fatalf("another org's key %+v: want a key of its own", b)
		}

		if err := f.s.RetireSigningKey(ctx, a.ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("retire the current key: %v, want ErrConflict", err)
		}
		rotated, err := f.s.RotateSigningKey(ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur, err := f.s.SigningKey(ctx, f.org.ID); err != nil || cur.ID != rotated.ID {
			t.Errorf("current key after rotation %+v, %v; want %s", cur, err, rotated.ID)
		}
		if old, err := f.s.SigningKeyByID(ctx, a.ID); err != nil || !bytes.Equal(old.Secret, a.Secret) {
			t.Errorf("the old key after rotation: %v (it verifies until retired)", err)
		}
		if err := f.s.RetireSigningKey(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.SigningKeyByID(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a retired key: %v, want ErrNotFound", err)
		}
		keys, err := f.s.ListSigningKeys(ctx, f.org.ID)
		if err != nil || len(keys) != 2 || keys[0].ID != rotated.ID || keys[1].RetiredAt == nil || keys[0].Secret != "" {
			t.Errorf("keys %+v, %v", keys, err)
		}
	})
}

// The key all orgs shared, in clear in settings, is moved by Migrate to the
// sealed legacy key: credentials without a key ID verify with it.
func TestLegacySigningKeyIsSealedByMigrate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		s := storetest.Open(t, d)
		legacy := []byte("the-shared-key-of-32-bytes-xyz!!")
		clear := base64.RawStdEncoding.EncodeToString(legacy)
		if err := s.DB().Exec("INSERT INTO settings (name, value) VALUES ('registry_signing_key', ?)", clear).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		k, err := s.SigningKeyByID(ctx, "")
		if err != nil || k.ID != store.LegacyKeyID || !bytes.Equal(k.Secret, legacy) || k.Owner != "" {
			t.Fatalf("legacy key %+v, %v", k, err)
		}
		var raw []string
		s.DB().Raw("SELECT secret FROM registry_keys UNION ALL SELECT value FROM settings WHERE name = 'registry_signing_key'").Scan(&raw)
		if len(raw) != 1 || !seal.IsSealed(raw[0]) {
			t.Errorf("after migrate: %q; want the key sealed, and gone from settings", raw)
		}
		if d == store.Postgres && bytes.Contains(storetest.DatabaseBytes(t, s), []byte(clear)) {
			t.Error("the legacy key is still in a dump of the database")
		}
		if err := s.Migrate(ctx); err != nil { // again: nothing to move
			t.Fatal(err)
		}
	})
}
