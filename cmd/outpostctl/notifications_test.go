package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// `notifications create/list/deliveries/delete` against the real API on
// PostgreSQL: the secret is printed once, bad input exits non-zero naming
// the field, -o json answers the API's body.
func TestNotificationsCommands(t *testing.T) {
	apiURL, tok := realAPI(t)
	run := func(want int, args ...string) string {
		t.Helper()
		out, stderr, code := outpostctl(t, args...)
		if code != want {
			t.Fatalf("%q: exit %d, want %d: %s %s", args, code, want, out, stderr)
		}
		return out + stderr
	}
	run(0, "context", "add", "admin", "--api", apiURL, "--token-file", secretFile(t, tok))
	out := run(0, "notifications", "create", "--name", "ops", "--event", "operation.failed,release.halted", "--url", "https://hooks.example/x")
	m := regexp.MustCompile(`subscription ops created: (nsub_\w+) .*\nsigning secret \(shown only now\): (whsec_\w+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("notifications create:\n%s", out)
	}
	id, secret := m[1], m[2]
	if out = run(0, "notifications", "list"); !regexp.MustCompile(`ops\s+`+id+`\s+webhook\s+operation.failed,release.halted\s+https://hooks.example/x\s+true`).MatchString(out) ||
		strings.Contains(out, secret) {
		t.Errorf("notifications list:\n%s", out)
	}
	var list struct {
		Subscriptions []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(run(0, "notifications", "list", "-o", "json")), &list); err != nil || len(list.Subscriptions) != 1 || list.Subscriptions[0].ID != id {
		t.Errorf("notifications list -o json: %+v %v", list, err)
	}
	if out = run(exitUsage, "notifications", "create", "--name", "x", "--event", "operation.exploded", "--url", "https://hooks.example/x"); !strings.Contains(out, "event_types[0]") {
		t.Errorf("an unknown event: %s", out)
	}
	if out = run(0, "notifications", "deliveries", id); !strings.Contains(out, "ID") {
		t.Errorf("notifications deliveries: %s", out)
	}
	if out = run(0, "notifications", "delete", id); !strings.Contains(out, "subscription "+id+" deleted") {
		t.Errorf("notifications delete: %s", out)
	}
	run(exitNotFound, "notifications", "deliveries", id)
}
