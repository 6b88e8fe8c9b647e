package workflows

import (
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A runner its customer paused never fails an operation: each wait that
// ends on the pause is followed by another, and the steps run once it ends.
func TestPausedRunnerIsWaitedForUntilResumed(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: steps("sandbox")})
	f.pausedWaits = 3
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v: want the operation to succeed once the runner is resumed", res, err)
	}
	f.mu.Lock()
	waits := slices.DeleteFunc(slices.Clone(f.events), func(e string) bool { return e != "wait for runner" })
	f.mu.Unlock()
	if len(waits) != 4 {
		t.Fatalf("WaitForRunner ran %d times; want 4 (three that found the runner paused, one that found it back)", len(waits))
	}
	f.before("wait for runner", "enqueue sandbox/plan_apply")
	f.wantFinished(status.OpSucceeded, "", "active")
}
