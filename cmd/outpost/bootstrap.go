package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/store"
)

// adminTokenFile, in the data directory, holds the dev org's admin token.
const adminTokenFile = "admin-token"

type bootResult struct {
	token     string
	appID     string
	installID string
	runners   []devRunner
}

// bootstrap creates (once) the dev org, its admin token, the demo app and
// install, and issues fresh runner tokens for this run.
func bootstrap(ctx context.Context, s *store.Store, dataDir string) (bootResult, error) {
	var b bootResult
	org, token, err := adminToken(ctx, s, filepath.Join(dataDir, adminTokenFile))
	if err != nil {
		return b, err
	}
	b.token = token
	build, err := s.EnsureBuildRunner(ctx, org.ID)
	if err != nil {
		return b, err
	}
	apps, err := s.ListApps(ctx, org.ID)
	if err != nil {
		return b, err
	}
	b.appID, err = findOrCreate(apps, devApp, func(a store.App) (string, string) { return a.Name, a.ID }, func() (string, error) {
		app, err := s.CreateApp(ctx, org.ID, devApp, "the demo app of `outpost dev`")
		return app.ID, err
	})
	if err != nil {
		return b, err
	}
	installs, err := s.ListInstalls(ctx, org.ID, b.appID)
	if err != nil {
		return b, err
	}
	b.installID, err = findOrCreate(installs, devInstall, func(i store.Install) (string, string) { return i.Name, i.ID }, func() (string, error) {
		// The example app's one required input, a secret.
		in, _, _, err := s.CreateInstall(ctx, org.ID, b.appID, devInstall,
			[]store.InstallInput{{Name: "db_password", Value: store.NewID("pw"), Sensitive: true}})
		return in.ID, err
	})
	if err != nil {
		return b, err
	}
	ir, err := s.GetInstallRunner(ctx, org.ID, b.installID)
	if err != nil {
		return b, err
	}
	for _, r := range []struct {
		name string
		id   string
	}{{"install-" + devInstall, ir.ID}, {"build", build.ID}} {
		tok, err := s.IssueRunnerToken(ctx, org.ID, r.id)
		if err != nil {
			return b, err
		}
		b.runners = append(b.runners, devRunner{name: r.name, token: tok})
	}
	return b, nil
}

// adminToken is the dev org, created the first time, and its admin token,
// kept in tokenFile (mode 0600) so it stays the same across restarts; a
// token lost or revoked is replaced.
func adminToken(ctx context.Context, s *store.Store, tokenFile string) (store.Org, string, error) {
	var token string
	org, err := s.GetOrgByName(ctx, devOrg)
	switch {
	case errors.Is(err, store.ErrNotFound):
		org, token, err = s.CreateOrg(ctx, devOrg)
	case err != nil:
		return org, "", err
	default:
		raw, rerr := os.ReadFile(tokenFile)
		token = strings.TrimSpace(string(raw))
		if _, aerr := s.AuthenticateAPIToken(ctx, token); rerr == nil && aerr == nil {
			return org, token, nil
		}
		_, token, err = s.CreateAPIToken(ctx, org.ID, fmt.Sprintf("dev-%d", time.Now().Unix()))
	}
	if err != nil {
		return org, "", err
	}
	return org, token, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
}

// findOrCreate is the ID of the item named name, or else of the one create
// makes; nameID gives an item's name and ID.
func findOrCreate[T any](items []T, name string, nameID func(T) (string, string), create func() (string, error)) (string, error) {
	for _, it := range items {
		if n, id := nameID(it); n == name {
			return id, nil
		}
	}
	return create()
}
