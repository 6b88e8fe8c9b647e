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

// adminTokenFile, in the data directory, holds the dev org's admin token;
// adminPasswordFile its admin user's password (both mode 0600).
const (
	adminTokenFile    = "admin-token"
	adminPasswordFile = "admin-password"
)

type bootResult struct {
	token     string
	password  string // set when the org was created by this run
	appID     string
	installID string
	runners   []devRunner
}

// bootstrap creates (once) the dev org, its admin token, the demo app and
// install, and issues fresh runner tokens for this run.
func bootstrap(ctx context.Context, s *store.Store, dataDir string) (bootResult, error) {
	var b bootResult
	org, token, password, err := adminToken(ctx, s, dataDir)
	if err != nil {
		return b, err
	}
	b.token, b.password = token, password
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

// adminToken is the dev org, created the first time with its local admin
// (whose password it returns then, and keeps in adminPasswordFile), and the
// admin's token, kept in adminTokenFile so it stays the same across
// restarts; a token lost or revoked is replaced.
func adminToken(ctx context.Context, s *store.Store, dataDir string) (store.Org, string, string, error) {
	tokenFile := filepath.Join(dataDir, adminTokenFile)
	org, err := s.GetOrgByName(ctx, devOrg)
	if errors.Is(err, store.ErrNotFound) {
		a, err := s.CreateOrgWithAdmin(ctx, devOrg)
		if err != nil {
			return a.Org, "", "", err
		}
		if err := os.WriteFile(filepath.Join(dataDir, adminPasswordFile), []byte(a.Password+"\n"), 0o600); err != nil {
			return a.Org, "", "", err
		}
		return a.Org, a.Token, a.Password, os.WriteFile(tokenFile, []byte(a.Token+"\n"), 0o600)
	}
	if err != nil {
		return org, "", "", err
	}
	raw, rerr := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(raw))
	if _, aerr := s.AuthenticateAPIToken(ctx, token); rerr == nil && aerr == nil {
		return org, token, "", nil
	}
	admin, err := s.GetUserByName(ctx, org.ID, store.LocalAdminName)
	if err != nil {
		return org, "", "", err
	}
	_, token, err = s.CreateAPIToken(ctx, store.NewAPIToken{OrgID: org.ID, UserID: admin.ID,
		Name: fmt.Sprintf("dev-%d", time.Now().Unix()), Scopes: []string{store.ScopeAdmin}})
	if err != nil {
		return org, "", "", err
	}
	return org, token, "", os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
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
