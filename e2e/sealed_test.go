package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// The install's sensitive values, whatever its modules do with them (a
// local-exec that echoes one, a variable not declared sensitive that takes
// another), appear in no job log, plan, API answer or Temporal history, nor
// in a dump of the database; a debug command's output and the app config
// are sealed there too, and read back whole by the API.
func TestLeakyModuleLeavesNoTrace(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/leaky-app")
	const echoed, plain, debug, later = "echoed-pw-7b1e42", "plain-token-3c9d05", "debug-output-pw-81fa", "later-sensitive-note-5e0c"
	inst, _ := s.newInstall("leaky", map[string]any{"name": "db_password", "value": echoed, "sensitive": true},
		map[string]any{"name": "api_token", "value": plain, "sensitive": true}, map[string]any{"name": "note", "value": later})
	op := s.provisioned(inst, 3*time.Minute)
	sandbox := op.step(t, "sandbox")
	if !strings.Contains(sandbox.Plan, "(sensitive value)") {
		t.Errorf("the sandbox's plan does not show the token scrubbed:\n%s", sandbox.Plan)
	}
	if !s.logsContain(sandbox.ApplyJobID, "echoed: (sensitive value)") && !s.logsContain(sandbox.PlanJobID, "echoed: (sensitive value)") {
		t.Errorf("the local-exec's echo is not in the logs, scrubbed")
	}
	for _, secret := range []string{echoed, plain} {
		if strings.Contains(sandbox.Plan, secret) {
			t.Errorf("the sandbox's plan shows %s", secret)
		}
		s.assertSecretHidden(inst, op, secret)
	}

	// A debug command's output (not its arguments: the shell makes it):
	// the API gives it whole.
	if got := s.debugOutput(inst, "echo debug-output-pw-8$((0+1))fa"); !strings.Contains(got, debug) {
		t.Errorf("the command's output through the API: %q", got)
	}

	// A later config declares the plain input sensitive: deploying it seals
	// the value.
	v2 := filepath.Join(t.TempDir(), "app")
	copyDir(t, "testdata/leaky-app", v2)
	toml := filepath.Join(v2, "outpost.toml")
	text, _ := os.ReadFile(toml)
	os.WriteFile(toml, []byte(strings.Replace(string(text), `name = "note"`, `name = "note"`+"\nsensitive = true", 1)), 0o644)
	s.syncConfig(v2)
	if op := s.waitOp(inst, s.startOp(inst, "/deploy", nil).ID, 3*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("deploy of the config that declares note sensitive: %s %q", op.Status, op.Error)
	}
	var sealed []string
	s.store.DB().Raw("SELECT value FROM install_inputs WHERE install_id = ? AND name = 'note' AND sensitive", inst).Scan(&sealed)
	if len(sealed) != 1 || !seal.IsSealed(sealed[0]) {
		t.Errorf("note after the deploy of a config that declares it sensitive: %q; want it sealed", sealed)
	}
	s.checkDumpHides(echoed, plain, debug, later, "config-smtp-pw-4d2a")
}

// debugOutput runs a debug command on the install's runner and returns its
// output as the API gives it.
func (s *stack) debugOutput(inst, script string) string {
	s.t.Helper()
	var c command
	if code := s.do("POST", "/v1/installs/"+inst+"/commands", map[string]any{"command": []string{"sh", "-c", script}, "timeout_seconds": 60}, &c); code != http.StatusAccepted {
		s.t.Fatalf("POST commands: %d %+v", code, c)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !status.JobTerminal(c.Status) {
		if time.Now().After(deadline) {
			s.t.Fatalf("command %s still %s", c.ID, c.Status)
		}
		s.do("GET", "/v1/installs/"+inst+"/commands/"+c.ID+"?wait=10", nil, &c)
	}
	if c.Status != status.JobSucceeded {
		s.t.Fatalf("command %+v", c)
	}
	return c.Output
}

// checkDumpHides checks that a pg_dump of the database holds none of the
// secrets, nor the org's registry signing key; that the app configs and
// debug commands are sealed; and that it is a dump of this database.
func (s *stack) checkDumpHides(secrets ...string) {
	s.t.Helper()
	key, err := s.store.SigningKey(context.Background(), s.orgID)
	if err != nil {
		s.t.Fatal(err)
	}
	dump := storetest.DatabaseBytes(s.t, s.store)
	if !bytes.Contains(dump, []byte(s.orgID)) {
		s.t.Fatalf("the dump (%d bytes) does not hold the org's ID: not a dump of this database", len(dump))
	}
	for _, secret := range append(secrets, base64.RawStdEncoding.EncodeToString(key.Secret)) {
		if bytes.Contains(dump, []byte(secret)) {
			s.t.Errorf("a pg_dump of the database holds %s", secret)
		}
	}
	var stored []string
	err = s.store.DB().Raw("SELECT content FROM app_configs UNION ALL SELECT output FROM install_commands WHERE output <> ''").Scan(&stored).Error
	if err != nil || len(stored) == 0 {
		s.t.Fatalf("app configs and command outputs: %d, %v", len(stored), err)
	}
	for _, v := range stored {
		if !seal.IsSealed(v) {
			s.t.Errorf("an app config or a command's output is stored in clear (%d bytes)", len(v))
		}
	}
}
