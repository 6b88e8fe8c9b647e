package activities_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/worker/devserver"
	"github.com/outpost-dev/outpost/worker/devserver/devservertest"
)

// TestReconcileActionSchedules, on a real Temporal server: an install's
// cron actions become schedules that start ActionRun; a new version changes
// one and drops another, whose schedule goes; version 0 leaves none; another
// install's schedules are left alone.
func TestReconcileActionSchedules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sc := scheduleClient(t, "actions-test")
	reconcile := func(install string, want map[string][]string) {
		t.Helper()
		if err := activities.ReconcileActionSchedules(ctx, sc, "outpost-q", install, want); err != nil {
			t.Fatalf("reconcile %s %v: %v", install, want, err)
		}
	}
	// next is the time of day ("15:04") of a schedule's next run, checking
	// what it starts; "" when it has none.
	next := func(install, action string) string {
		t.Helper()
		d, err := sc.GetHandle(ctx, contract.ActionScheduleID(install, action)).Describe(ctx)
		if err != nil {
			return ""
		}
		wf := d.Schedule.Action.(*client.ScheduleWorkflowAction)
		var in contract.ActionRunInput
		if err := converter.GetDefaultDataConverter().FromPayload(wf.Args[0].(*commonpb.Payload), &in); err != nil {
			t.Fatal(err)
		}
		if wf.Workflow != contract.WorkflowActionRun || wf.TaskQueue != "outpost-q" || wf.ID != "install/"+install+"/action/"+action+"/cron" ||
			in != (contract.ActionRunInput{InstallID: install, Action: action}) {
			t.Errorf("%s/%s starts %v on %s as %s with %+v", install, action, wf.Workflow, wf.TaskQueue, wf.ID, in)
		}
		if len(d.Info.NextActionTimes) == 0 {
			t.Fatalf("%s/%s has no next run", install, action)
		}
		return d.Info.NextActionTimes[0].UTC().Format("15:04")
	}
	// listed waits until the server's list of schedules (what a reconcile
	// deletes from) shows exactly ids among the install's.
	listed := func(install string, ids ...string) {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			got = nil
			it, err := sc.List(ctx, client.ScheduleListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for it.HasNext() {
				e, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(e.ID, "install/"+install+"/") {
					got = append(got, e.ID)
				}
			}
			slices.Sort(got)
			if reflect.DeepEqual(got, ids) || len(got) == 0 && len(ids) == 0 {
				return
			}
		}
		t.Fatalf("schedules of %s listed: %v, want %v", install, got, ids)
	}
	id := contract.ActionScheduleID

	reconcile("ins_other", map[string][]string{"backup": {"0 1 * * *"}})
	reconcile("ins_1", map[string][]string{"warm": {"0 3 * * *"}, "rotate": {"30 4 * * *"}})
	if w, r := next("ins_1", "warm"), next("ins_1", "rotate"); w != "03:00" || r != "04:30" {
		t.Fatalf("next runs: warm %q, rotate %q; want 03:00 and 04:30", w, r)
	}
	listed("ins_1", id("ins_1", "rotate"), id("ins_1", "warm"))

	// A new version: warm's schedule changes, rotate has no cron any more.
	reconcile("ins_1", map[string][]string{"warm": {"15 6 * * *"}})
	if w, r := next("ins_1", "warm"), next("ins_1", "rotate"); w != "06:15" || r != "" {
		t.Fatalf("after the change: warm next at %q (want 06:15), rotate %q (want no schedule)", w, r)
	}
	listed("ins_1", id("ins_1", "warm"))

	// Deprovisioned: none left; the other install keeps its own.
	reconcile("ins_1", nil)
	if w := next("ins_1", "warm"); w != "" {
		t.Fatalf("after deprovision warm still runs next at %s", w)
	}
	listed("ins_1")
	if b := next("ins_other", "backup"); b != "01:00" {
		t.Fatalf("the other install's schedule: next %q, want 01:00", b)
	}
}

// CronActions: the actions of a config with cron triggers, each with its
// expressions.
func TestCronActions(t *testing.T) {
	cfg, err := appconfig.Load(os.DirFS("../appconfig/testdata/actions-app"))
	if err != nil {
		t.Fatal(err)
	}
	if got := activities.CronActions(cfg); !reflect.DeepEqual(got, map[string][]string{"ping": {"*/5 * * * *"}}) {
		t.Errorf("cron actions = %v, want ping's only (migrate has no cron trigger)", got)
	}
	if got := activities.CronActions(nil); len(got) != 0 {
		t.Errorf("cron actions of no config = %v", got)
	}
}

// scheduleClient is a schedule client of a Temporal dev server of its own,
// stopped when the test ends.
func scheduleClient(tb testing.TB, namespace string) client.ScheduleClient {
	tb.Helper()
	return devservertest.Client(tb, devserver.Options{DataDir: tb.TempDir(), UIPort: -1, Namespace: namespace}).ScheduleClient()
}
