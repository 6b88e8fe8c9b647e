package api

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// actionFiles is the demo app with two more actions: one with a sensitive
// input, one a schedule runs only.
func actionFiles(t *testing.T) fstest.MapFS {
	files := exampleFiles(t)
	files["actions/rotate.toml"] = &fstest.MapFile{Data: []byte(`description = "Rotate the password"
sensitive_outputs = ["new_password"]
[[inputs]]
name = "password"
type = "string"
sensitive = true
required = true
[[inputs]]
name = "retries"
type = "number"
default = 2
[[triggers]]
type = "manual"
[[steps]]
name = "set"
command = ["/bin/sh", "-c", "true"]
[[steps]]
name = "check"
command = ["/bin/true"]
`)}
	files["actions/nightly.toml"] = &fstest.MapFile{Data: []byte(`[[triggers]]
type = "cron"
schedule = "@daily"
[[steps]]
name = "run"
command = ["/bin/true"]
`)}
	return files
}

func actionsEnv(t *testing.T) (*testEnv, installAnswer) {
	return configEnv(t, actionFiles(t))
}

func TestListActions(t *testing.T) {
	e, inst := actionsEnv(t)
	var list wire.ActionList
	e.call("GET", "/v1/installs/"+inst.ID+"/actions", nil, 200, &list)
	byName := map[string]wire.ConfigAction{}
	for _, a := range list.Actions {
		byName[a.Name] = a
	}
	rotate, hello := byName["rotate"], byName["hello"]
	names := slices.Sorted(maps.Keys(byName))
	if list.ConfigVersion != 1 || !slices.Equal(names, []string{"health", "hello", "migrate", "nightly", "rotate", "warm_cache"}) || len(rotate.Inputs) != 2 || !rotate.Inputs[0].Sensitive ||
		rotate.Triggers[0].Type != "manual" || len(rotate.Steps) != 2 || hello.Steps[0] != "greet" ||
		byName["nightly"].Triggers[0].Schedule != "@daily" {
		t.Fatalf("actions %+v", list)
	}
}

func TestRunActionRefusesBadRequests(t *testing.T) {
	e, inst := actionsEnv(t)
	e.checkRefused(t, "/v1/installs/"+inst.ID+"/actions/", []refusedRun{
		{"rotate/runs", `{"inputs":{"password":"pw","color":"red"}}`, 400, "inputs.color", `no input "color"`},
		{"rotate/runs", `{"inputs":{}}`, 400, "inputs.password", "required"},
		{"rotate/runs", `{"inputs":{"password":"pw","retries":"many"}}`, 400, "inputs.retries", "number"},
		{"rotate/runs", `{"inputs":{"password":"pw"},"extra":1}`, 400, "extra", ""},
		{"missing/runs", `{}`, 404, "", `no action "missing"`},
		{"nightly/runs", `{}`, 409, "", "no manual trigger"},
	}, func() int { return len(e.ops.actionRuns) })
}

func TestRunActionRefusedByTheRunnersPolicy(t *testing.T) {
	e, inst := actionsEnv(t)
	e.allowOnlyHello(t, inst)
	res := e.send("POST", "/v1/installs/"+inst.ID+"/actions/rotate/runs", e.token, `{"inputs":{"password":"pw"}}`)
	if res.status != 409 || !strings.Contains(res.apiError(t).Message, `does not allow action "rotate" (allowed: hello)`) {
		t.Fatalf("got %s, want 409 in the runner's words", res)
	}
	e.call("POST", "/v1/installs/"+inst.ID+"/actions/hello/runs", map[string]any{}, 201, nil)
}

func TestRunActionRecordsTheRunAndMasksSecrets(t *testing.T) {
	e, inst := actionsEnv(t)
	var run wire.ActionRun
	e.call("POST", "/v1/installs/"+inst.ID+"/actions/rotate/runs", map[string]any{"inputs": map[string]string{"password": "pw-5f1e", "retries": "3"}}, 201, &run)
	if run.Status != "queued" || run.Trigger != "manual" || run.ConfigVersion != 1 || run.Inputs["password"] != "(sensitive)" ||
		run.Inputs["retries"] != "3" || len(run.Steps) != 2 || run.Steps[1].Status != "pending" || run.StartedBy == "" {
		t.Fatalf("run %+v", run)
	}
	if len(e.ops.actionRuns) != 1 || e.ops.actionRuns[0].WorkflowID != "install/"+inst.ID+"/action/rotate/"+run.ID {
		t.Fatalf("started %+v", e.ops.actionRuns)
	}
	ctx, exit := context.Background(), 0
	if err := e.store.StartActionRunStep(ctx, run.ID, 0, "job_1"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.FinishActionRunStep(ctx, store.ActionRunStep{RunID: run.ID, StepIndex: 0, Status: status.JobSucceeded,
		ExitCode: &exit, Outputs: map[string]string{"at": "noon"}, SensitiveOutputs: map[string]string{"new_password": "pw-77aa"}}); err != nil {
		t.Fatal(err)
	}
	var got wire.ActionRun
	res := e.call("GET", "/v1/installs/"+inst.ID+"/action-runs/"+run.ID, nil, 200, &got)
	s0 := got.Steps[0]
	if got.Status != "running" || s0.JobID == nil || *s0.JobID != "job_1" || s0.Outputs["at"] != "noon" || s0.Outputs["new_password"] != "(sensitive)" {
		t.Fatalf("run %+v", got)
	}
	for _, secret := range []string{"pw-5f1e", "pw-77aa"} {
		if strings.Contains(string(res.body), secret) {
			t.Errorf("the answer shows %s: %s", secret, res.body)
		}
	}
	var second wire.ActionRun
	e.call("POST", "/v1/installs/"+inst.ID+"/actions/rotate/runs", map[string]any{"inputs": map[string]string{"password": "x"}}, 201, &second)
	var list wire.ActionRunList
	e.call("GET", "/v1/installs/"+inst.ID+"/actions/rotate/runs", nil, 200, &list)
	if len(list.Runs) != 2 || list.Runs[0].ID != second.ID || list.Runs[1].ID != run.ID {
		t.Fatalf("runs %+v, want %s then %s", list.Runs, second.ID, run.ID)
	}
	e.call("GET", "/v1/installs/"+inst.ID+"/actions/hello/runs", nil, 200, &list)
	if len(list.Runs) != 0 {
		t.Errorf("hello's runs %+v", list.Runs)
	}
}
