package main

import (
	"regexp"
	"strings"
	"testing"
)

// `users create/list/role` and `tokens create --scope --expires --user`,
// `tokens list` and `tokens revoke`, against the real API on PostgreSQL: a
// deploy token of an approver+operator works within its scope and is
// refused beyond it (403, naming the scope); revoked, it is refused (401).
func TestUsersAndScopedTokens(t *testing.T) {
	apiURL, tok := realAPI(t)
	mustRun := mustRunner(t)
	mustRun("context", "add", "admin", "--api", apiURL, "--token-file", secretFile(t, tok))
	mustRun("apps", "create", "demo")

	out := mustRun("users", "create", "alice", "--role", "operator:demo", "--role", "approver",
		"--password-file", secretFile(t, "correct horse battery\n"))
	if !strings.Contains(out, "person alice created: usr_") {
		t.Errorf("users create: %s", out)
	}
	if out = mustRun("users", "list"); !regexp.MustCompile(`alice\s+usr_\w+\s+person\s+operator:app_\w+,approver`).MatchString(out) {
		t.Errorf("users list:\n%s", out)
	}
	out = mustRun("tokens", "create", "--name", "ci", "--scope", "deploy", "--expires", "30d", "--user", "alice")
	m := regexp.MustCompile(`token ci created: (tok_\w+) \(scopes deploy, expires 20\d\d-.*\)\ntoken \(shown only now\): (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("tokens create:\n%s", out)
	}
	tokID, ciToken := m[1], m[2]
	if out = mustRun("tokens", "list"); !regexp.MustCompile(`ci\s+` + tokID + `\s+usr_\w+\s+deploy\s+20\d\d-\S+\s+never\s`).MatchString(out) {
		t.Errorf("tokens list:\n%s", out)
	}

	mustRun("context", "add", "ci", "--api", apiURL, "--token-file", secretFile(t, ciToken))
	mustRun("--context", "ci", "apps", "list")
	if _, stderr, code := outpostctl(t, "--context", "ci", "users", "list"); code != exitUsage || !strings.Contains(stderr, "403") ||
		!strings.Contains(stderr, "do not include admin") {
		t.Errorf("the deploy token lists users: exit %d %s", code, stderr)
	}
	if out = mustRun("users", "role", "alice", "--role", "viewer"); !strings.Contains(out, "alice now has roles viewer") {
		t.Errorf("users role: %s", out)
	}
	if _, stderr, code := outpostctl(t, "tokens", "create", "--name", "x", "--scope", "root"); code != exitUsage || !strings.Contains(stderr, "scopes") {
		t.Errorf("--scope root: exit %d %s", code, stderr)
	}
	if out = mustRun("tokens", "revoke", tokID); !strings.Contains(out, "token ci ("+tokID+") revoked") {
		t.Errorf("tokens revoke: %s", out)
	}
	if _, stderr, code := outpostctl(t, "--context", "ci", "apps", "list"); code != exitAuth {
		t.Errorf("the revoked token: exit %d %s, want %d", code, stderr, exitAuth)
	}
}
