package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// TestBootstrapKeepsItsTokenAppAndInstall: a restart finds the admin token,
// app and install the first run made; a lost token is replaced and kept.
func TestBootstrapKeepsItsTokenAppAndInstall(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, store.SQLite)
	dir := t.TempDir()
	first, err := bootstrap(ctx, s, dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bootstrap(ctx, s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.token != first.token || again.appID != first.appID || again.installID != first.installID {
		t.Errorf("a restart changed the dev org: %+v, then %+v", first, again)
	}
	if len(again.runners) != 2 || again.runners[0].token == first.runners[0].token {
		t.Errorf("runner tokens %+v, then %+v: want two, fresh at each run", first.runners, again.runners)
	}

	file := filepath.Join(dir, "admin-token")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	lost, err := bootstrap(ctx, s, dir)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(file)
	if err != nil || string(kept) != lost.token+"\n" || lost.token == first.token {
		t.Errorf("after losing the token file: token %q, file %q (%v); want a new token, kept", lost.token, kept, err)
	}
	if _, err := s.AuthenticateAPIToken(ctx, lost.token); err != nil {
		t.Errorf("the new token does not authenticate: %v", err)
	}
	if lost.appID != first.appID || lost.installID != first.installID {
		t.Errorf("losing the token changed the app or install: %+v", lost)
	}
}
