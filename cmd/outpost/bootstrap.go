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

type bootResult struct {
	token     string
	appID     string
	installID string
	runners   []devRunner
}

// bootstrap creates (once) the dev org, its admin token, the demo app and
// install, and issues fresh runner tokens for this run. The admin token is
// kept in the data directory (mode 0600) so it stays the same across restarts.
func bootstrap(ctx context.Context, s *store.Store, dataDir string) (bootResult, error) {
	var b bootResult
	tokenFile := filepath.Join(dataDir, "admin-token")
	org, err := s.GetOrgByName(ctx, devOrg)
	switch {
	case errors.Is(err, store.ErrNotFound):
		org, b.token, err = s.CreateOrg(ctx, devOrg)
		if err != nil {
			return b, err
		}
		if err := os.WriteFile(tokenFile, []byte(b.token+"\n"), 0o600); err != nil {
			return b, err
		}
	case err != nil:
		return b, err
	default:
		raw, rerr := os.ReadFile(tokenFile)
		b.token = strings.TrimSpace(string(raw))
		if _, aerr := s.AuthenticateAPIToken(ctx, b.token); rerr != nil || aerr != nil {
			// Lost or revoked: issue a new one.
			_, b.token, err = s.CreateAPIToken(ctx, org.ID, fmt.Sprintf("dev-%d", time.Now().Unix()))
			if err != nil {
				return b, err
			}
			if err := os.WriteFile(tokenFile, []byte(b.token+"\n"), 0o600); err != nil {
				return b, err
			}
		}
	}
	build, err := s.EnsureBuildRunner(ctx, org.ID)
	if err != nil {
		return b, err
	}
	apps, err := s.ListApps(ctx, org.ID)
	if err != nil {
		return b, err
	}
	for _, app := range apps {
		if app.Name == devApp {
			b.appID = app.ID
		}
	}
	if b.appID == "" {
		app, err := s.CreateApp(ctx, org.ID, devApp, "the demo app of `outpost dev`")
		if err != nil {
			return b, err
		}
		b.appID = app.ID
	}
	installs, err := s.ListInstalls(ctx, org.ID, b.appID)
	if err != nil {
		return b, err
	}
	for _, in := range installs {
		if in.Name == devInstall {
			b.installID = in.ID
		}
	}
	if b.installID == "" {
		// The example app's one required input, a secret.
		in, _, _, err := s.CreateInstall(ctx, org.ID, b.appID, devInstall,
			[]store.InstallInput{{Name: "db_password", Value: store.NewID("pw"), Sensitive: true}})
		if err != nil {
			return b, err
		}
		b.installID = in.ID
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
