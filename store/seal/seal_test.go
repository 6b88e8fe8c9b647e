package seal

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpensOnlyInItsPlace(t *testing.T) {
	dk := NewDataKey()
	v, err := Seal(dk, "dk_1", "jobs.manifest/job_a", "password=hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v, "hunter2") || !IsSealed(v) {
		t.Fatalf("sealed value %q", v)
	}
	if got, err := Open(dk, v, "jobs.manifest/job_a"); err != nil || got != "password=hunter2" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := Open(dk, v, "jobs.manifest/job_b"); !errors.Is(err, ErrTampered) {
		t.Fatalf("open in another row: %v, want ErrTampered", err)
	}
	if _, err := Open(NewDataKey(), v, "jobs.manifest/job_a"); !errors.Is(err, ErrTampered) {
		t.Fatalf("open with another key: %v, want ErrTampered", err)
	}
}

func TestKeyringNamesTheMissingKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kek")
	old, created, err := LoadOrCreateLocalKey(path)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	again, created, err := LoadOrCreateLocalKey(path)
	if err != nil || created || again.ID() != old.ID() {
		t.Fatalf("load again: %v %v %v", again, created, err)
	}
	wrapped, _ := old.Wrap(ctx, NewDataKey())
	other, _ := ParseLocalKey(GenerateKeyText())
	ring, _ := NewKeyring(other)
	_, err = ring.Unwrap(ctx, old.ID(), wrapped)
	if !errors.Is(err, ErrUnknownKEK) || !strings.Contains(err.Error(), old.ID()) {
		t.Fatalf("unwrap with the key missing: %v", err)
	}
	ring, _ = NewKeyring(other, old)
	if _, err := ring.Unwrap(ctx, old.ID(), wrapped); err != nil {
		t.Fatalf("unwrap with a previous key: %v", err)
	}
	if _, err := other.Unwrap(ctx, wrapped); !errors.Is(err, ErrWrongKEK) {
		t.Fatalf("unwrap with a wrong key: %v", err)
	}
	if _, err := ParseLocalKey("c2hvcnQ="); err == nil || !strings.Contains(err.Error(), "32") {
		t.Fatalf("short key: %v", err)
	}
}
