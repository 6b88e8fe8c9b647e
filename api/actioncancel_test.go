package api

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
)

// Cancelling a run cancels its workflow (the workflow records the end);
// a finished run is 409 and cancels nothing; a run is found only under
// its own install.
func TestCancelActionRun(t *testing.T) {
	e, inst := actionsEnv(t)
	var run wire.ActionRun
	e.call("POST", "/v1/installs/"+inst.ID+"/actions/hello/runs", map[string]any{}, 201, &run)
	checkCancelRun(t, e, inst, "action run", "action-runs", "act_missing", run.ID, run.WorkflowID, 1, e.store.FinishActionRun)
}

// checkCancelRun checks a cancel of a run (kind, below the install's
// runsPath; missing: an ID of none) whose answer has steps steps: found
// only under its own install, it cancels the run's workflow; once the
// workflow recorded the end (finish), a second cancel is 409 and cancels
// nothing.
func checkCancelRun(t *testing.T, e *testEnv, inst installAnswer, kind, runsPath, missing, runID, workflowID string, steps int,
	finish func(ctx context.Context, id string, st status.Job, why string) error) {
	t.Helper()
	path := "/v1/installs/" + inst.ID + "/" + runsPath + "/" + runID + "/cancel"
	var other installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": inst.AppID, "name": "customer-2"}, 201, &other)
	e.call("POST", "/v1/installs/"+other.ID+"/"+runsPath+"/"+runID+"/cancel", nil, 404, nil)
	e.call("POST", "/v1/installs/"+inst.ID+"/"+runsPath+"/"+missing+"/cancel", nil, 404, nil)
	if c := e.ops.cancelledWorkflows(); len(c) != 0 {
		t.Fatalf("cancelled %v through the wrong install", c)
	}

	var asked struct {
		ID, Status string
		Steps      []json.RawMessage
	}
	e.call("POST", path, nil, 202, &asked)
	if asked.ID != runID || asked.Status != "queued" || len(asked.Steps) != steps {
		t.Fatalf("answer %+v, want the run with its %d steps", asked, steps)
	}
	if c := e.ops.cancelledWorkflows(); !reflect.DeepEqual(c, []string{workflowID}) {
		t.Fatalf("cancelled %v, want %s", c, workflowID)
	}

	// The workflow records the end; a second cancel is then a conflict.
	if err := finish(context.Background(), runID, status.JobCancelled, "cancelled"); err != nil {
		t.Fatal(err)
	}
	res := e.send("POST", path, e.token, nil)
	if res.status != 409 || !strings.Contains(res.apiError(t).Message, kind+" "+runID+" has already finished (cancelled)") {
		t.Fatalf("a second cancel: %s, want 409", res)
	}
	if c := e.ops.cancelledWorkflows(); len(c) != 1 {
		t.Fatalf("cancelled a finished run: %v", c)
	}
}
