package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// An operation asked to wait for the install's window shows the wait until
// it opens (a timer: the test environment skips it), then runs its steps.
func TestOperationWaitsForTheMaintenanceWindow(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{InstallID: "ins_1", InMaintenanceWindow: true, Steps: steps("sandbox")})
	opens := f.env.Now().Add(3 * time.Hour).UTC()
	var waits []string
	var waitedUntil time.Time
	f.env.OnActivity(contract.NextMaintenanceWindow, mockAny, "ins_1").Return(contract.Window{Start: opens, End: opens.Add(time.Hour)}, nil)
	f.env.OnActivity(contract.SetOperationWaiting, mockAny, "op_1", mockAny).Return(func(_ context.Context, _ string, until *time.Time) error {
		if until == nil {
			waits = append(waits, "running")
			waitedUntil = f.env.Now()
			return nil
		}
		waits = append(waits, "until "+until.UTC().Format(time.RFC3339))
		return nil
	})
	res := f.run()
	f.wantSteps(res, map[string]status.Step{"sandbox": status.StepSucceeded})
	if want := []string{"until " + opens.Format(time.RFC3339), "running"}; len(waits) != 2 || waits[0] != want[0] || waits[1] != want[1] {
		t.Fatalf("the operation showed %q, want %q", waits, want)
	}
	if waitedUntil.Before(opens) {
		t.Fatalf("the operation ran at %s, before its window opened at %s", waitedUntil, opens)
	}
}

// An open window (or none) runs the operation at once, showing no wait.
func TestOperationInAnOpenWindowRunsAtOnce(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{InstallID: "ins_1", InMaintenanceWindow: true, Steps: steps("sandbox")})
	now := f.env.Now().UTC()
	f.env.OnActivity(contract.NextMaintenanceWindow, mockAny, "ins_1").Return(contract.Window{Open: true, Start: now.Add(-time.Hour), End: now.Add(time.Hour)}, nil)
	res := f.run()
	f.wantSteps(res, map[string]status.Step{"sandbox": status.StepSucceeded})
}
