package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// The embedded mode makes its key on first start and reads it again after;
// a wrong key is refused at start naming the one the data keys need;
// PostgreSQL without a key is refused, saying how to give one.
func TestKeyEncryptionKeyAtStart(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	c := common{dataDir: dir}
	var (
		installID string
		org       store.Org
	)
	withOrg(t, &c, log, func(s *store.Store, o store.Org) (err error) {
		org = o
		var inst store.Install
		inst, _, _, err = s.CreateInstall(t.Context(), org.ID, mustApp(t, s, org.ID), "i", []store.InstallInput{{Name: "pw", Value: "x", Sensitive: true}})
		installID = inst.ID
		return err
	})
	made, err := seal.LoadLocalKey(filepath.Join(dir, kekFileName))
	if err != nil {
		t.Fatalf("the key made on first start: %v", err)
	}
	s, err := c.openStore(t.Context(), log, false)
	if err != nil {
		t.Fatalf("start again with the key made: %v", err)
	}
	s.Close()

	other := filepath.Join(t.TempDir(), "other.kek")
	os.WriteFile(other, []byte(seal.GenerateKeyText()), 0o600)
	c.kek.file = other
	if _, err := c.openStore(t.Context(), log, false); err == nil || !strings.Contains(err.Error(), made.ID()) {
		t.Errorf("start with another key: %v; want an error naming %s", err, made.ID())
	}

	// outpost kek rotate: the data keys under the other key, which alone
	// reads the sensitive input; the first key alone is refused, naming it.
	prev := filepath.Join(dir, kekFileName)
	if err := runKEK(t.Context(), []string{"rotate", "-data-dir", dir, "-kek-file", other, "-kek-previous-file", prev}, log); err != nil {
		t.Fatalf("kek rotate: %v", err)
	}
	otherKey, _ := seal.LoadLocalKey(other)
	if s, err = c.openStore(t.Context(), log, false); err != nil {
		t.Fatalf("start with the new key alone after the rotation: %v", err)
	}
	inst, err := s.GetInstall(t.Context(), org.ID, installID)
	s.Close()
	if err != nil || len(inst.Inputs) != 1 || inst.Inputs[0].Value != "x" {
		t.Errorf("the sensitive input after the rotation: %+v, %v", inst.Inputs, err)
	}
	c.kek.file = ""
	if _, err := c.openStore(t.Context(), log, false); err == nil || !strings.Contains(err.Error(), otherKey.ID()) {
		t.Errorf("start with the first key after the rotation: %v; want an error naming %s", err, otherKey.ID())
	}

	pg := common{dataDir: t.TempDir(), databaseURL: storetest.NewPostgresDatabase(t)}
	if _, err := pg.openStore(t.Context(), log, true); err == nil || !strings.Contains(err.Error(), "OUTPOST_KEK") {
		t.Errorf("PostgreSQL without a key: %v; want an error naming OUTPOST_KEK", err)
	}
}

func mustApp(t *testing.T, s *store.Store, orgID string) string {
	t.Helper()
	app, err := s.CreateApp(t.Context(), orgID, "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	return app.ID
}

// outpost signing-key: a rotation makes the org a new current key; the old
// one, retired, no longer verifies; the current one cannot be retired.
func TestSigningKeyRotateAndRetire(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	c := common{dataDir: dir}
	var (
		org store.Org
		old store.SigningKey
	)
	withOrg(t, &c, log, func(s *store.Store, o store.Org) (err error) {
		org = o
		old, err = s.SigningKey(t.Context(), org.ID)
		return err
	})
	run := func(args ...string) error { return runSigningKey(t.Context(), append(args, "-data-dir", dir), log) }
	if err := run("retire", "-id", old.ID); err == nil || !strings.Contains(err.Error(), "rotate first") {
		t.Errorf("retire the current key: %v", err)
	}
	if err := run("rotate", "-owner", org.ID); err != nil {
		t.Fatal(err)
	}
	if err := run("retire", "-id", old.ID); err != nil {
		t.Fatal(err)
	}
	if err := run("list", "-owner", org.ID); err != nil {
		t.Fatal(err)
	}
	s, err := c.openStore(t.Context(), log, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cur, err := s.SigningKey(t.Context(), org.ID); err != nil || cur.ID == old.ID {
		t.Errorf("current key %s, %v; want a new one", cur.ID, err)
	}
	if _, err := s.SigningKeyByID(t.Context(), old.ID); err == nil {
		t.Error("the retired key still verifies")
	}
}

// withOrg opens c's store (migrated), creates an org, runs f and closes the
// store.
func withOrg(t *testing.T, c *common, log *slog.Logger, f func(*store.Store, store.Org) error) {
	t.Helper()
	s, err := c.openStore(t.Context(), log, true)
	if err != nil {
		t.Fatal(err)
	}
	org, _, err := s.CreateOrg(t.Context(), "acme")
	if err == nil {
		err = f(s, org)
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
}
