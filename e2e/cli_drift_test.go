package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Maintenance windows and drift with the CLI: a window in a bad time zone
// is refused naming its field; a good one shows the next opening; a drift
// schedule finds the watched component drifted, `drift show --plans` shows
// it with its plan, -o json the API's object.
func TestCLIDriftAndWindows(t *testing.T) {
	s, c := newCLIStack(t)
	app := newDriftApp(t)
	tf, _ := os.ReadFile(installRegistryTF) // the sandbox's registry, as syncConfig adds it
	os.WriteFile(filepath.Join(app.dir, "sandbox", "install_registry.tf"), tf, 0o644)
	c.ok(app.dir, "apps", "sync", ".", "--app", "demo")
	inst := c.createInstall(s, "cust-cd")
	c.ok("", "provision", "cust-cd", "--wait")

	if out := c.ok("", "installs", "windows", "cust-cd"); !strings.Contains(out, "no maintenance windows") {
		t.Fatalf("windows of a new install:\n%s", out)
	}
	c.fails(1, "windows[0].time_zone", "installs", "windows", "cust-cd", "--set",
		`{"days": ["sat"], "start": "02:00", "duration": "4h", "time_zone": "Nowhere/Land"}`)
	later := time.Now().UTC().Add(3 * time.Hour).Truncate(time.Minute)
	out := c.ok("", "installs", "windows", "cust-cd", "--set",
		`[{"days": ["mon","tue","wed","thu","fri","sat","sun"], "start": "`+later.Format("15:04")+`", "duration": "1h", "time_zone": "UTC"}]`)
	if !strings.Contains(out, "mon,tue,wed,thu,fri,sat,sun  "+later.Format("15:04")) || !strings.Contains(out, "next window: "+later.Format(time.RFC3339)) {
		t.Fatalf("windows --set:\n%s", out)
	}
	var op struct {
		ID string `json:"id"`
	}
	c.json("", &op, "reprovision", "cust-cd", "--in-maintenance-window")
	s.waitShowsWindow(inst, op.ID, later)
	c.ok("", "cancel", "cust-cd", op.ID)
	s.waitOp(inst, op.ID, time.Minute)

	if out := c.ok("", "drift", "check", "cust-cd"); !strings.Contains(out, "drift check op_") {
		t.Fatalf("drift check:\n%s", out)
	}
	app.write(t, "two")
	c.fails(1, "give --every DURATION or --off", "drift", "schedule", "cust-cd")
	c.ok("", "drift", "schedule", "cust-cd", "--every", "1s")
	var drift struct {
		Every      string `json:"every"`
		Components []driftRow
	}
	waitFor(t, 2*time.Minute, "a scheduled check to find watched drifted", func() bool {
		c.json("", &drift, "drift", "show", "cust-cd")
		for _, r := range drift.Components {
			if r.Name == "watched" && r.Drifted {
				return true
			}
		}
		return false
	})
	c.ok("", "drift", "schedule", "cust-cd", "--off")
	out = c.ok("", "drift", "show", "cust-cd", "--plans")
	for _, want := range []string{"schedule: none", "watched", "yes", `"two"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("drift show --plans lacks %q:\n%s", want, out)
		}
	}
}
