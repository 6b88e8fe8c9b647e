package appconfig

import (
	"reflect"
	"testing"
	"testing/fstest"
)

const releaseRunbook = "runbooks/release.toml"

// withRunbooks is withActions with runbooks/release.toml: migrate, deploy
// db, an approval gate, reprovision.
func withRunbooks() fstest.MapFS {
	f := withActions()
	f[releaseRunbook] = file(`description = "Ship a new version"

[[inputs]]
name = "token"
type = "string"
required = true
sensitive = true

[[inputs]]
name = "steps"
type = "number"
default = 2

[[steps]]
name = "migrate"
type = "action"
action = "migrate"
inputs = { target = "v2" }

[[steps]]
name = "deploy_db"
type = "deploy"
component = "db"

[[steps]]
name = "gate"
type = "approval"
description = "Check the dashboards"

[[steps]]
name = "again"
type = "reprovision"
`)
	return f
}

func TestRunbooksLoad(t *testing.T) {
	c := load(t, withRunbooks())
	if got := c.RunbookNames(); !reflect.DeepEqual(got, []string{"release"}) {
		t.Fatalf("runbooks = %v", got)
	}
	r, _ := c.Runbook("release")
	want := []RunbookStep{
		{Name: "migrate", Kind: StepAction, Action: "migrate", Inputs: map[string]string{"target": "v2"}},
		{Name: "deploy_db", Kind: StepDeploy, Component: "db"},
		{Name: "gate", Kind: StepApproval, Description: "Check the dashboards"},
		{Name: "again", Kind: StepReprovision},
	}
	if r.File != releaseRunbook || r.Description != "Ship a new version" || !reflect.DeepEqual(r.Steps, want) {
		t.Errorf("release = %+v", r)
	}
	if len(r.Inputs) != 2 || !r.Inputs[0].Sensitive || r.Inputs[1].Type != InputNumber {
		t.Errorf("inputs = %+v", r.Inputs)
	}
	m, _ := c.Action("migrate")
	got := r.Steps[0].ActionInputs(m, map[string]string{"token": "s3cret", "steps": "4", "other": "x"})
	if !reflect.DeepEqual(got, map[string]string{"target": "v2", "token": "s3cret", "steps": "4"}) {
		t.Errorf("action inputs = %v", got)
	}
	if _, err := r.CheckRunInputs(map[string]string{"steps": "x"}); err == nil {
		t.Error("a bad number and a missing required input were accepted")
	}
}

// TestRunbookProblems: each mistake in a runbook file is a problem naming
// the file and the key.
func TestRunbookProblems(t *testing.T) {
	rb := releaseRunbook
	checkProblems(t, withRunbooks, []problemCase{
		{"unknown step type", func(f fstest.MapFS) { replace(f, rb, `type = "reprovision"`, `type = "restart"`) },
			rb, "steps[3].type", `unknown step type "restart" (one of action, deploy, reprovision, approval)`},
		{"unknown action", func(f fstest.MapFS) { replace(f, rb, `action = "migrate"`, `action = "migrat"`) },
			rb, "steps[0].action", `no action "migrat" (actions: "migrate", "ping")`},
		{"unknown component", func(f fstest.MapFS) { replace(f, rb, `component = "db"`, `component = "api"`) },
			rb, "steps[1].component", `no component "api" (components: "db")`},
		{"undeclared action input", func(f fstest.MapFS) { replace(f, rb, `target = "v2"`, `tagret = "v2"`) },
			rb, "steps[0].inputs.tagret", `action "migrate" has no input "tagret" (inputs: "target", "steps", "token")`},
		{"bad input value", func(f fstest.MapFS) { replace(f, rb, `target = "v2"`, `steps = "many"`) },
			rb, "steps[0].inputs.steps", `action "migrate" takes input "steps" as a number: "many" is not a number`},
		{"runbook input of another type", func(f fstest.MapFS) { replace(f, rb, "type = \"number\"\ndefault = 2", `type = "bool"`) },
			rb, "inputs[1].type", `input "steps" is a bool, but action "migrate" (steps[0].action) takes it as a number`},
		{"required action input not given", func(f fstest.MapFS) { replace(f, rb, `name = "token"`, `name = "secret"`) },
			rb, "steps[0].inputs", `action "migrate" requires input "token"`},
		{"bad runbook input type", func(f fstest.MapFS) { replace(f, rb, `type = "number"`, `type = "integer"`) },
			rb, "inputs[1].type", `"integer" is not an input type`},
		{"action without action", func(f fstest.MapFS) { replace(f, rb, "action = \"migrate\"\n", "") },
			rb, "steps[0].action", "an action step needs the action it runs"},
		{"deploy without component", func(f fstest.MapFS) { replace(f, rb, "component = \"db\"\n", "") },
			rb, "steps[1].component", "a deploy step needs the component it deploys"},
		{"component on an approval", func(f fstest.MapFS) { replace(f, rb, `description = "Check the dashboards"`, `component = "db"`) },
			rb, "steps[2].component", "only a deploy step takes component (this step's type is approval)"},
		{"inputs on a deploy", func(f fstest.MapFS) { replace(f, rb, `component = "db"`, "component = \"db\"\ninputs = { a = \"b\" }") },
			rb, "steps[1].inputs", "only an action step takes inputs (this step's type is deploy)"},
		{"unknown key", func(f fstest.MapFS) { replace(f, rb, `type = "reprovision"`, "type = \"reprovision\"\nretries = 2") },
			rb, "steps[3].retries", `unknown key "retries"`},
		{"type missing", func(f fstest.MapFS) { replace(f, rb, "type = \"reprovision\"\n", "") },
			rb, "steps[3].type", "is required"},
		{"duplicate step name", func(f fstest.MapFS) { replace(f, rb, `name = "again"`, `name = "gate"`) },
			rb, "steps[3].name", `step "gate" is already defined`},
		{"no steps", func(f fstest.MapFS) { f[rb] = file("steps = []\n") }, rb, "steps", "at least one step"},
		{"invalid runbook name", func(f fstest.MapFS) { f["runbooks/Ship-It.toml"] = f[rb] },
			"runbooks/Ship-It.toml", "", `runbook name "Ship-It" (the file's name) must be 1-63 lowercase letters`},
	})
}
