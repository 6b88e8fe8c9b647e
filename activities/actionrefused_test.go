package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

var exclusiveCronApp = storetest.MinimalApp(map[string]string{
	"actions/backup.toml": `exclusive = true
[[triggers]]
type = "cron"
schedule = "0 * * * *"
[[steps]]
name = "backup"
command = ["/bin/true"]
`,
})

// A scheduled exclusive run refused while the install was held is recorded,
// then ended; when the try that recorded it failed before ending it, the
// retry ends it rather than handing the workflow a run it would start
// without the install's lock.
func TestRetriedRecordEndsARefusedRun(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	storetest.SyncConfig(t, s, tn, exclusiveCronApp)
	a := &Actions{store: s, render: &renderer{store: s}}
	// What refuseRun's first try left: the run recorded without the lock, not ended.
	half, err := s.CreateActionRun(ctx, store.ActionRun{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Action: "backup",
		ConfigVersion: 1, Trigger: appconfig.TriggerCron, WorkflowID: "wf-refused"}, []string{"backup"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.RecordActionRun(ctx, tn.Install.ID, "backup", "wf-refused")
	if err != nil || id != half.ID {
		t.Fatalf("retry: %q, %v; want the run recorded first (%s)", id, err, half.ID)
	}
	run, err := s.GetActionRunByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != status.JobFailed || !strings.HasPrefix(run.Error, "not started") {
		t.Fatalf("the refused run after the retry: %s %q, want failed, not started", run.Status, run.Error)
	}

	// A run that took the lock is handed back as it is.
	held, err := a.RecordActionRun(ctx, tn.Install.ID, "backup", "wf-held")
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.RecordActionRun(ctx, tn.Install.ID, "backup", "wf-held")
	if err != nil || again != held {
		t.Fatalf("retry of a recorded run: %q, %v; want %s", again, err, held)
	}
	if run, _ := s.GetActionRunByID(ctx, held); store.ActionRunDone(run) || !run.Exclusive {
		t.Fatalf("the held run after a retry: %+v, want running with the lock", run)
	}
}
