package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	controlapi "github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// `audit list` shows the org's changing calls, newest first, refused ones
// too, filtered and paged as asked, never a token's value. Against the real
// API on PostgreSQL (this test links what the binary does not).
func TestAuditList(t *testing.T) {
	apiURL, tok := realAPI(t)
	for _, args := range [][]string{{"context", "add", "test", "--api", apiURL, "--token-file", secretFile(t, tok)}, {"apps", "create", "demo"}} {
		if _, stderr, code := outpostctl(t, args...); code != 0 {
			t.Fatalf("%q: exit %d %s", args, code, stderr)
		}
	}
	if _, _, code := outpostctl(t, "apps", "create", "demo"); code == 0 {
		t.Fatal("creating the app twice succeeded")
	}

	out, stderr, code := outpostctl(t, "audit", "list", "--since", "1h")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "createApp") || !strings.Contains(lines[1], "409 conflict") ||
		!strings.Contains(lines[2], "admin (tok_") || !strings.Contains(lines[2], " 201 ") || !strings.Contains(lines[2], "app_id=app_") {
		t.Errorf("audit list: exit %d %s\n%s", code, stderr, out)
	}
	out, _, code = outpostctl(t, "audit", "list", "-o", "json", "--action", "createApp", "--limit", "1")
	var page struct {
		Events []struct {
			Status int    `json:"status"`
			Action string `json:"action"`
		}
		NextBefore string `json:"next_before"`
	}
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Events) != 1 || page.Events[0].Status != 409 ||
		page.NextBefore == "" {
		t.Errorf("audit list -o json --limit 1: exit %d %v\n%s", code, err, out)
	}
	if strings.Contains(out, tok) {
		t.Errorf("the token's value is in the audit log:\n%s", out)
	}
	if _, stderr, code := outpostctl(t, "audit", "list", "--since", "yesterday"); code != exitUsage || !strings.Contains(stderr, "--since") {
		t.Errorf("--since yesterday: exit %d %s", code, stderr)
	}
}

// realAPI is the control API on PostgreSQL with org acme (the CLI's config
// in a new directory), and the org's admin token. Only tests link it: the
// binary does not.
func realAPI(t *testing.T) (url, token string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	s := storetest.Open(t, store.Postgres)
	ts := httptest.NewServer(controlapi.New(controlapi.Config{Store: s}).Handler())
	t.Cleanup(ts.Close)
	_, tok, err := s.CreateOrg(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return ts.URL, tok
}

// secretFile writes content to a new file of mode 0600 and returns its path.
func secretFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
