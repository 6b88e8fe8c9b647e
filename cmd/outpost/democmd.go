package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// runDemo does against a running control plane what `outpost dev` does in
// its own process: the dev org, its admin token, the demo app and install
// (once), fresh runner tokens, the example synced and, if never provisioned,
// the demo install's provision started. Each runner's token is written to
// <runner-token-dir>/<runner>/token for the runner to read (the compose
// stack's bootstrap service).
func runDemo(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	fs := newFlagSet("demo")
	c.register(fs)
	apiURL := fs.String("api-url", "http://127.0.0.1:8080", "the control API's URL as this process reaches it")
	publicAPI := fs.String("public-api-url", "", "the API's URL as users reach it, printed (default: -api-url)")
	publicUI := fs.String("public-temporal-ui-url", "", "the Temporal UI's URL as users reach it, printed")
	example := fs.String("example", "examples/demo-app", "app config synced to the demo app and provisioned on the demo install")
	tokenDir := fs.String("runner-token-dir", "", "write each runner's token to DIR/<runner>/token (default: <data-dir>/runners)")
	tokenUID := fs.Int("runner-token-uid", -1, "give the token files and their directories to this user and group ID (as root: the runners' user)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *tokenDir == "" {
		*tokenDir = filepath.Join(c.dataDir, "runners")
	}
	if *publicAPI == "" {
		*publicAPI = *apiURL
	}
	s, err := c.openStore(ctx, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkSchema(ctx, log, s); err != nil {
		return err
	}
	boot, err := bootstrap(ctx, s, c.dataDir)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	for _, r := range boot.runners {
		if err := writeRunnerToken(*tokenDir, r, *tokenUID); err != nil {
			return err
		}
	}
	if err := provisionExample(ctx, log, *apiURL, boot, *example); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Printf(`
Outpost's demo is set up: org %q, app %q (%s), install %q (%s), provisioning.
Runner tokens are in %s.

  Temporal UI  %s
  export OUTPOST_TOKEN=%s
  export OUTPOST_API=%s
  export INSTALL=%s

Watch:  curl -s -H "Authorization: Bearer $OUTPOST_TOKEN" $OUTPOST_API/v1/installs/$INSTALL

`, devOrg, devApp, boot.appID, devInstall, boot.installID, *tokenDir, orNone(*publicUI), boot.token, *publicAPI, boot.installID)
	return nil
}

// writeRunnerToken writes r's token to dir/<r.name>/token (mode 0600),
// replacing the file at once so a runner never reads half of it; uid, when
// not -1, owns the directory and the file.
func writeRunnerToken(dir string, r devRunner, uid int) error {
	d := filepath.Join(dir, r.name)
	tmp := filepath.Join(d, ".token.tmp")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("runner token directory: %w", err)
	}
	if err := os.WriteFile(tmp, []byte(r.token+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s's token: %w", r.name, err)
	}
	if uid != -1 {
		for _, p := range []string{d, tmp} {
			if err := os.Chown(p, uid, uid); err != nil {
				return fmt.Errorf("%s's token: %w", r.name, err)
			}
		}
	}
	return os.Rename(tmp, filepath.Join(d, "token"))
}
