package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// A component's variables read the outputs of the install's latest
// succeeded run of an action: provisioning before the action has run fails
// naming it; a manual run with an input writes outputs (the second step's
// version wins, the token is sealed); the next provision's terraform gets
// them, the token never in its logs.
func TestActionOutputsFeedAComponent(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/action-output-app")
	inst := s.install.ID

	early := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 3*time.Minute)
	if app := early.step(t, "app"); early.Status != status.OpFailed ||
		!strings.Contains(app.Error+early.Error, `action "migrate" has never run successfully on this install`) {
		t.Fatalf("provision before migrate ran: %s %q, app %+v", early.Status, early.Error, app)
	}

	run := s.waitActionRun(s.runAction("migrate", map[string]string{"target": "blue"}).ID, 2*time.Minute)
	if run.Status != "succeeded" {
		t.Fatalf("migrate: %+v", run)
	}
	done := s.provisioned(inst, 3*time.Minute)
	outs := s.stepOutputs(inst, "app").Outputs
	if got := string(outs["schema"].Value) + " " + string(outs["token_length"].Value); got != `"blue-7" 8` {
		t.Fatalf("app's outputs %s, want the schema of migrate's last step and the 8-byte token", got)
	}
	app := done.step(t, "app")
	for _, job := range []string{app.PlanJobID, app.ApplyJobID} {
		if job != "" && s.logsContain(job, "tok-blue") {
			t.Errorf("job %s's log shows the sealed token", job)
		}
	}
	if strings.Contains(app.Plan, "tok-blue") {
		t.Errorf("the plan shows the sealed token:\n%s", app.Plan)
	}
}
