package api

import (
	"context"
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
	path := "/v1/installs/" + inst.ID + "/action-runs/" + run.ID + "/cancel"

	var other installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": inst.AppID, "name": "customer-2"}, 201, &other)
	e.call("POST", "/v1/installs/"+other.ID+"/action-runs/"+run.ID+"/cancel", nil, 404, nil)
	e.call("POST", "/v1/installs/"+inst.ID+"/action-runs/act_missing/cancel", nil, 404, nil)
	if c := e.ops.cancelledWorkflows(); len(c) != 0 {
		t.Fatalf("cancelled %v through the wrong install", c)
	}

	var asked wire.ActionRun
	e.call("POST", path, nil, 202, &asked)
	if asked.ID != run.ID || asked.Status != "queued" || len(asked.Steps) != 1 {
		t.Fatalf("answer %+v, want the run with its steps", asked)
	}
	if c := e.ops.cancelledWorkflows(); !reflect.DeepEqual(c, []string{run.WorkflowID}) {
		t.Fatalf("cancelled %v, want %s", c, run.WorkflowID)
	}

	// The workflow records the end; a second cancel is then a conflict.
	if err := e.store.FinishActionRun(context.Background(), run.ID, status.JobCancelled, "cancelled"); err != nil {
		t.Fatal(err)
	}
	res := e.send("POST", path, e.token, nil)
	if res.status != 409 || !strings.Contains(res.apiError(t).Message, "action run "+run.ID+" has already finished (cancelled)") {
		t.Fatalf("a second cancel: %s, want 409", res)
	}
	if c := e.ops.cancelledWorkflows(); len(c) != 1 {
		t.Fatalf("cancelled a finished run: %v", c)
	}
}
