package api

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

func (o *recordingOps) StartRunbookRun(_ context.Context, run store.RunbookRun) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.startErr, &o.runbooks, run, run.WorkflowID)
}

func (o *recordingOps) SignalRunbookApproval(_ context.Context, workflowID string, step int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gates = append(o.gates, fmt.Sprintf("%s %d", workflowID, step))
	return nil
}

// runbookFiles is actionFiles with runbooks/release.toml: rotate (an
// action with a sensitive input), deploy api, a gate, hello.
func runbookFiles(t *testing.T) fstest.MapFS {
	files := actionFiles(t)
	files["runbooks/release.toml"] = &fstest.MapFile{Data: []byte(`description = "Ship it"
[[inputs]]
name = "password"
type = "string"
sensitive = true
required = true
[[inputs]]
name = "retries"
type = "number"
default = 1
[[steps]]
name = "rotate"
type = "action"
action = "rotate"
[[steps]]
name = "api"
type = "deploy"
component = "api"
[[steps]]
name = "gate"
type = "approval"
description = "Look at the dashboards"
[[steps]]
name = "hello"
type = "action"
action = "hello"
inputs = { name = "ops" }
`)}
	return files
}

func runbooksEnv(t *testing.T) (*testEnv, installAnswer) {
	return configEnv(t, runbookFiles(t))
}

func TestListRunbooksAndTheConfigShowsThem(t *testing.T) {
	e, inst := runbooksEnv(t)
	var list wire.RunbookList
	e.call("GET", "/v1/installs/"+inst.ID+"/runbooks", nil, 200, &list)
	if list.ConfigVersion != 1 || len(list.Runbooks) != 2 || list.Runbooks[1].Name != "upgrade" { // the demo's, and release
		t.Fatalf("runbooks %+v", list)
	}
	rb := list.Runbooks[0]
	if rb.Name != "release" || rb.File != "runbooks/release.toml" || len(rb.Inputs) != 2 || !rb.Inputs[0].Sensitive ||
		len(rb.Steps) != 4 || rb.Steps[1].Kind != "deploy" || rb.Steps[1].Component != "api" || rb.Steps[3].Inputs["name"] != "ops" {
		t.Fatalf("release %+v", rb)
	}
	var cfg wire.AppConfig
	e.call("GET", "/v1/apps/"+inst.AppID+"/configs/1", nil, 200, &cfg)
	if len(cfg.Runbooks) != 2 || cfg.Runbooks[0].Steps[2].Kind != "approval" {
		t.Errorf("the config's runbooks %+v", cfg.Runbooks)
	}
}

func TestSyncRefusesABadRunbook(t *testing.T) {
	e := newTestEnvWithOps(t, newRecordingOps())
	app, _ := e.fixture()
	files := runbookFiles(t)
	files["runbooks/bad.toml"] = &fstest.MapFile{Data: []byte("[[steps]]\nname = \"x\"\ntype = \"restart\"\n")}
	res := e.postConfig(app.ID, "application/gzip", bytes.NewReader(tarGz(t, files)))
	if res.status != 422 || !strings.Contains(string(res.body), `"file":"runbooks/bad.toml","key":"steps[0].type"`) {
		t.Fatalf("sync answer %s", res.body)
	}
}

func TestRunRunbookRefusesBadRequests(t *testing.T) {
	e, inst := runbooksEnv(t)
	e.checkRefused(t, "/v1/installs/"+inst.ID+"/runbooks/", []refusedRun{
		{"release/runs", `{"inputs":{"password":"pw","color":"red"}}`, 400, "inputs.color", `runbook "release" has no input "color"`},
		{"release/runs", `{"inputs":{}}`, 400, "inputs.password", "required"},
		{"release/runs", `{"inputs":{"password":"pw","retries":"many"}}`, 400, "inputs.retries", "number"},
		{"release/runs", `{"inputs":{"password":"pw"},"extra":1}`, 400, "extra", ""},
		{"missing/runs", `{}`, 404, "", `no runbook "missing"`},
	}, func() int { return len(e.ops.runbooks) })
}

func TestRunRunbookRefusedByTheRunnersPolicy(t *testing.T) {
	e, inst := runbooksEnv(t)
	e.allowOnlyHello(t, inst)
	res := e.send("POST", "/v1/installs/"+inst.ID+"/runbooks/release/runs", e.token, `{"inputs":{"password":"pw"}}`)
	if res.status != 409 || !strings.Contains(res.apiError(t).Message, `does not allow action "rotate"`) {
		t.Fatalf("got %s, want 409 in the runner's words", res)
	}
}

// A run is recorded and started; it is approved at its gate, and once
// failed, resumed (started again under the same workflow ID).
func TestRunbookRunApproveAndResume(t *testing.T) {
	e, inst := runbooksEnv(t)
	var run wire.RunbookRun
	res := e.call("POST", "/v1/installs/"+inst.ID+"/runbooks/release/runs", map[string]any{"inputs": map[string]string{"password": "pw-91ab"}}, 201, &run)
	wf := "install/" + inst.ID + "/runbook/release/" + run.ID
	if run.Status != "queued" || run.Inputs["password"] != "(sensitive)" || run.WorkflowID != wf || len(run.Steps) != 4 ||
		run.Steps[0].Target != "rotate" || run.Steps[1].Target != "api" || run.Steps[2].Status != "pending" || strings.Contains(string(res.body), "pw-91ab") {
		t.Fatalf("run %s", res.body)
	}
	if len(e.ops.runbooks) != 1 || e.ops.runbooks[0].SensitiveInputs["password"] != "pw-91ab" {
		t.Fatalf("started %+v", e.ops.runbooks)
	}
	path := "/v1/installs/" + inst.ID + "/runbook-runs/" + run.ID
	if r := e.send("POST", path+"/approve", e.token, ""); r.status != 409 || !strings.Contains(r.apiError(t).Message, "not waiting for approval") {
		t.Errorf("approve before the gate: %s", r)
	}
	if r := e.send("POST", path+"/resume", e.token, ""); r.status != 409 || !strings.Contains(r.apiError(t).Message, "only a failed or cancelled run") {
		t.Errorf("resume a queued run: %s", r)
	}
	// The workflow's part: steps 0 and 1 succeed, the gate waits.
	ctx, st := context.Background(), e.store
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.StartRunbookStep(ctx, run.ID, 0, store.RunbookStepStart{Status: status.JobRunning, ActionRunID: "act_1"}))
	must(st.FinishRunbookStep(ctx, run.ID, 0, status.JobSucceeded, ""))
	must(st.StartRunbookStep(ctx, run.ID, 2, store.RunbookStepStart{Status: store.RunbookWaitingApproval}))
	var got wire.RunbookRun
	e.call("POST", path+"/approve", nil, 202, &got)
	if len(e.ops.gates) != 1 || e.ops.gates[0] != wf+" 2" {
		t.Fatalf("signals %v", e.ops.gates)
	}
	e.call("GET", path, nil, 200, &got)
	if got.Steps[0].ActionRunID != "act_1" || got.Steps[2].ApprovedBy == "" || got.Status != "waiting_approval" {
		t.Fatalf("run %+v", got)
	}
	must(st.FinishRunbookStep(ctx, run.ID, 2, status.JobFailed, "action run act_2 failed"))
	must(st.FinishRunbookRun(ctx, run.ID, status.JobFailed, "step gate: failed"))
	e.call("POST", path+"/resume", nil, 202, &got)
	if got.Status != "queued" || got.Steps[0].Status != "succeeded" || got.Steps[2].Status != "pending" || len(e.ops.runbooks) != 2 ||
		e.ops.runbooks[1].WorkflowID != wf {
		t.Fatalf("resumed %+v, started %d", got, len(e.ops.runbooks))
	}
	var list wire.RunbookRunList
	e.call("GET", "/v1/installs/"+inst.ID+"/runbooks/release/runs", nil, 200, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != run.ID {
		t.Errorf("runs %+v", list.Runs)
	}
}

// Cancelling a run cancels its workflow (which records the end); a
// finished run is 409 and cancels nothing; a run is found only under its
// own install; a cancelled run can be resumed.
func TestCancelRunbookRun(t *testing.T) {
	e, inst := runbooksEnv(t)
	var run wire.RunbookRun
	e.call("POST", "/v1/installs/"+inst.ID+"/runbooks/release/runs", map[string]any{"inputs": map[string]string{"password": "pw"}}, 201, &run)
	checkCancelRun(t, e, inst, "runbook run", "runbook-runs", "rbr_missing", run.ID, run.WorkflowID, 4, e.store.FinishRunbookRun)
	path := "/v1/installs/" + inst.ID + "/runbook-runs/" + run.ID
	var got wire.RunbookRun
	e.call("POST", path+"/resume", nil, 202, &got)
	if got.Status != "queued" || got.Steps[0].Status != "pending" {
		t.Fatalf("resumed %+v", got)
	}
}

// matrixRunbookRun records a run of a runbook, for the authz matrix.
func (e *testEnv) matrixRunbookRun(installID string) string {
	e.t.Helper()
	run, err := e.store.CreateRunbookRun(context.Background(), store.RunbookRun{OrgID: e.org.ID, InstallID: installID, Runbook: "release",
		ConfigVersion: 1, WorkflowID: "install/" + installID + "/runbook/release/x"}, []store.RunbookRunStep{{Name: "gate", Kind: "approval"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return run.ID
}
