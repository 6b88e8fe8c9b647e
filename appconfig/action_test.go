package appconfig

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/protocol"
)

const actionsApp = "testdata/actions-app"

// withActions is testdata/actions-app in memory: a db component and the
// actions migrate (manual and hooks, inputs, scripts) and ping (cron).
func withActions() fstest.MapFS {
	files := fstest.MapFS{}
	root := os.DirFS(actionsApp)
	if err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		files[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	}); err != nil {
		panic(err)
	}
	return files
}

func TestActionsLoad(t *testing.T) {
	c, err := Load(os.DirFS(actionsApp))
	if err != nil {
		t.Fatalf("load %s: %v", actionsApp, err)
	}
	if got := c.ActionNames(); !reflect.DeepEqual(got, []string{"migrate", "ping"}) {
		t.Fatalf("actions = %v, want migrate and ping sorted", got)
	}
	m, ok := c.Action("migrate")
	if !ok {
		t.Fatal("Action(migrate) not found")
	}
	if m.File != "actions/migrate.toml" || m.Description != "Run database migrations" || m.TimeoutSeconds != 900 || !m.Exclusive || m.Health {
		t.Errorf("migrate = %+v", m)
	}
	if !reflect.DeepEqual(m.SensitiveOutputs, []string{"password"}) || m.EnvVars["TARGET"] != "{{ .action.inputs.target }}" || len(m.EnvVars) != 6 {
		t.Errorf("migrate sensitive outputs %v, env %v", m.SensitiveOutputs, m.EnvVars)
	}
	if got := m.InputNames(); !reflect.DeepEqual(got, []string{"target", "steps", "token"}) || !m.Inputs[2].Required || !m.Inputs[2].Sensitive {
		t.Errorf("migrate inputs = %+v", m.Inputs)
	}
	wantTriggers := []Trigger{{Type: TriggerManual},
		{Type: TriggerBefore, Operation: "deploy_component", Component: "db", ContinueOnFailure: true,
			Inputs: map[string]string{"token": "{{ .install.inputs.region }}-token", "steps": "3"}},
		{Type: TriggerAfter, Operation: "provision", When: WhenSuccess,
			Inputs: map[string]string{"token": "{{ .components.db.outputs.url }}", "target": "{{ .components.db.outputs.host }}"}}}
	if !reflect.DeepEqual(m.Triggers, wantTriggers) {
		t.Errorf("migrate triggers = %+v, want %+v", m.Triggers, wantTriggers)
	}
	script, _ := os.ReadFile(actionsApp + "/actions/migrate.sh")
	if len(m.Steps) != 3 || m.Steps[0].Name != "migrate" || m.Steps[0].Script != "actions/migrate.sh" || m.Steps[0].ScriptText != string(script) ||
		m.Steps[1].Name != "check" || m.Steps[1].Command[0] != "sh" || m.Steps[1].Script != "" ||
		m.Steps[2].Script != "actions/lib/helper.sh" || m.Steps[2].ScriptText != "echo helper\n" {
		t.Errorf("migrate steps = %+v", m.Steps)
	}
	p, _ := c.Action("ping")
	if p.TimeoutSeconds != 600 || !p.Health || p.Exclusive || p.Description != "" {
		t.Errorf("ping = %+v, want the default timeout (10m) and health", p)
	}
	if want := []Trigger{{Type: TriggerCron, Schedule: "*/5 * * * *"}, {Type: TriggerAfter, Operation: "deploy_config", When: WhenAlways}}; !reflect.DeepEqual(p.Triggers, want) {
		t.Errorf("ping triggers = %+v", p.Triggers)
	}
	if _, ok := c.Action("nope"); ok {
		t.Error("Action(nope) found")
	}
	// A config without actions/ has none.
	if c := load(t, base()); len(c.Actions) != 0 {
		t.Errorf("base has actions %v", c.ActionNames())
	}
}

// TestActionProblems: each mistake in an action file is a problem naming the
// file and the key.
func TestActionProblems(t *testing.T) {
	const mig, ping = "actions/migrate.toml", "actions/ping.toml"
	set := func(name, s string) func(fstest.MapFS) { return func(f fstest.MapFS) { f[name] = file(s) } }
	steps := "[[steps]]\nname = \"a\"\ncommand = [\"true\"]\n"
	manual := "[[triggers]]\ntype = \"manual\"\n"
	checkProblems(t, withActions, []problemCase{
		{"unknown key", func(f fstest.MapFS) { replace(f, ping, "health = true", "health = true\nretries = 3") },
			ping, "retries", `unknown key "retries"`},
		{"unknown key in a step", func(f fstest.MapFS) { replace(f, ping, `command = ["true"]`, "command = [\"true\"]\nshell = \"bash\"") },
			ping, "steps[0].shell", `unknown key "shell"`},
		{"unknown trigger type", func(f fstest.MapFS) { replace(f, ping, `type = "after"`, `type = "webhook"`) },
			ping, "triggers[1].type", `unknown trigger type "webhook" (one of manual, cron, before, after)`},
		{"bad cron expression", func(f fstest.MapFS) { replace(f, ping, `"*/5 * * * *"`, `"*/5 * * *"`) },
			ping, "triggers[0].schedule", `"*/5 * * *" is not a cron expression`},
		{"cron out of range", func(f fstest.MapFS) { replace(f, ping, `"*/5 * * * *"`, `"61 * * * *"`) },
			ping, "triggers[0].schedule", "is not a cron expression"},
		{"cron without a schedule", func(f fstest.MapFS) { replace(f, ping, "schedule = \"*/5 * * * *\"\n", "") },
			ping, "triggers[0].schedule", "a cron trigger needs a schedule"},
		{"schedule on a manual trigger", set(ping, "[[triggers]]\ntype = \"manual\"\nschedule = \"* * * * *\"\n"+steps),
			ping, "triggers[0].schedule", "only a cron trigger takes schedule"},
		{"missing script", func(f fstest.MapFS) { delete(f, "actions/migrate.sh") },
			mig, "steps[0].script", "cannot read actions/migrate.sh"},
		{"script outside the config", func(f fstest.MapFS) { replace(f, mig, `script = "migrate.sh"`, `script = "../../etc/passwd"`) },
			mig, "steps[0].script", "must name a file of the config"},
		{"absolute script", func(f fstest.MapFS) { replace(f, mig, `script = "migrate.sh"`, `script = "/bin/sh"`) },
			mig, "steps[0].script", "must name a file of the config"},
		{"script too large", func(f fstest.MapFS) {
			f["actions/migrate.sh"] = &fstest.MapFile{Data: []byte(strings.Repeat("#", protocol.MaxActionScriptBytes+1))}
		}, mig, "steps[0].script", "a script may be at most 262144"},
		{"script and command", func(f fstest.MapFS) {
			replace(f, mig, `script = "migrate.sh"`, "script = \"migrate.sh\"\ncommand = [\"true\"]")
		},
			mig, "steps[0].script", "a script or a command, not both"},
		{"neither script nor command", func(f fstest.MapFS) { replace(f, mig, "script = \"migrate.sh\"\n", "") },
			mig, "steps[0].script", "a step needs a script"},
		{"empty command", func(f fstest.MapFS) { replace(f, ping, `command = ["true"]`, `command = []`) },
			ping, "steps[0].command", "must name a program"},
		{"duplicate step name", func(f fstest.MapFS) { replace(f, mig, `name = "check"`, `name = "migrate"`) },
			mig, "steps[1].name", `step "migrate" is already defined`},
		{"invalid step name", func(f fstest.MapFS) { replace(f, mig, `name = "check"`, `name = "Check-It"`) },
			mig, "steps[1].name", "lowercase letters"},
		{"no steps", set(ping, "steps = []\n"+manual), ping, "steps", "at least one step"},
		{"steps missing", set(ping, manual), ping, "steps", "is required"},
		{"undeclared action input", func(f fstest.MapFS) { replace(f, mig, `.action.inputs.target`, `.action.inputs.tagret`) },
			mig, "env_vars.TARGET", `no input "tagret" is declared in actions/migrate.toml`},
		{"unknown component in a template", func(f fstest.MapFS) { replace(f, mig, `.components.db.outputs.url`, `.components.cache.outputs.url`) },
			mig, "env_vars.DB_URL", `no component "cache"`},
		{"unknown output in a template", func(f fstest.MapFS) { replace(f, mig, `.components.db.outputs.url`, `.components.db.outputs.uri`) },
			mig, "env_vars.DB_URL", `has no output "uri"`},
		{"undeclared install input", func(f fstest.MapFS) { replace(f, mig, `.install.inputs.region`, `.install.inputs.zone`) },
			mig, "env_vars.REGION", `no input "zone" is declared in outpost.toml`},
		{"runner's env var", func(f fstest.MapFS) { appendTo(f, ping, "[env_vars]\nOUTPOST_OUTPUTS = \"x\"\n") },
			ping, "env_vars.OUTPOST_OUTPUTS", "set by the runner"},
		{"hook of an unknown component", func(f fstest.MapFS) { replace(f, mig, `component = "db"`, `component = "api"`) },
			mig, "triggers[1].component", `no component "api" (components: "db")`},
		{"component hook without a component", func(f fstest.MapFS) { replace(f, mig, "component = \"db\"\n", "") },
			mig, "triggers[1].component", "needs the component it guards"},
		{"component on an install hook", func(f fstest.MapFS) {
			replace(f, mig, "operation = \"provision\"", "operation = \"provision\"\ncomponent = \"db\"")
		},
			mig, "triggers[2].component", "only a hook of deploy_component or teardown_component names a component"},
		{"unknown hook operation", func(f fstest.MapFS) { replace(f, mig, `operation = "provision"`, `operation = "deploy"`) },
			mig, "triggers[2].operation", `unknown operation "deploy"`},
		{"when on a before hook", func(f fstest.MapFS) { replace(f, mig, "continue_on_failure = true", "when = \"always\"") },
			mig, "triggers[1].when", "only an after trigger takes when"},
		{"bad when", func(f fstest.MapFS) { replace(f, ping, `when = "always"`, `when = "sometimes"`) },
			ping, "triggers[1].when", `"sometimes" is not one of success, failure, always`},
		{"continue_on_failure on an after hook", func(f fstest.MapFS) { replace(f, ping, `when = "always"`, "continue_on_failure = true") },
			ping, "triggers[1].continue_on_failure", "only a before trigger takes continue_on_failure"},
		{"hook input the action does not declare", func(f fstest.MapFS) { replace(f, mig, `steps = "3"`, `stpes = "3"`) },
			mig, "triggers[1].inputs.stpes", `action "migrate" has no input "stpes" (inputs: "target", "steps", "token")`},
		{"hook input of the wrong type", func(f fstest.MapFS) { replace(f, mig, `steps = "3"`, `steps = "three"`) },
			mig, "triggers[1].inputs.steps", `input "steps" is a number: "three" is not a number`},
		{"hook without a required input", func(f fstest.MapFS) { replace(f, mig, `token = "{{ .install.inputs.region }}-token", `, "") },
			mig, "triggers[1].inputs", `action "migrate" requires input "token"`},
		{"hook input reading an unknown output", func(f fstest.MapFS) {
			replace(f, mig, `target = "{{ .components.db.outputs.host }}"`, `target = "{{ .components.db.outputs.hots }}"`)
		},
			mig, "triggers[2].inputs.target", `has no output "hots"`},
		{"hook input reading the run's inputs", func(f fstest.MapFS) {
			replace(f, mig, `target = "{{ .components.db.outputs.host }}"`, `target = "{{ .action.inputs.steps }}"`)
		},
			mig, "triggers[2].inputs.target", "a hook's inputs are what makes the run's inputs"},
		{"inputs on a cron trigger", func(f fstest.MapFS) {
			replace(f, ping, `schedule = "*/5 * * * *"`, "schedule = \"*/5 * * * *\"\ninputs = { a = \"b\" }")
		},
			ping, "triggers[0].inputs", "only a before or after trigger takes inputs"},
		{"bad timeout", func(f fstest.MapFS) { replace(f, mig, `timeout = "15m"`, `timeout = "15"`) },
			mig, "timeout", `"15" is not a duration`},
		{"timeout over 2h", func(f fstest.MapFS) { replace(f, mig, `timeout = "15m"`, `timeout = "3h"`) },
			mig, "timeout", "must be between 1s and 2h0m0s"},
		{"invalid action name", func(f fstest.MapFS) { f["actions/Warm-Cache.toml"] = f[ping] },
			"actions/Warm-Cache.toml", "", `action name "Warm-Cache" (the file's name) must be 1-63 lowercase letters`},
		{"no triggers", set(ping, "triggers = []\n"+steps), ping, "triggers", "at least one trigger"},
		{"triggers missing", set(ping, steps), ping, "triggers", "is required"},
		{"bad action input type", func(f fstest.MapFS) { replace(f, mig, `type = "number"`, `type = "integer"`) },
			mig, "inputs[1].type", `"integer" is not an input type`},
		{"bad sensitive output name", func(f fstest.MapFS) { replace(f, mig, `["password"]`, `["pass word"]`) },
			mig, "sensitive_outputs[0]", "is not an output name"},
		{"bad TOML", func(f fstest.MapFS) { appendTo(f, ping, "x = = 1\n") }, ping, "", "invalid TOML"},
		{"health of an unknown component", func(f fstest.MapFS) {
			replace(f, ping, "health = true", "health = true\ncomponents = [\"db\", \"cache\"]")
		},
			ping, "components[1]", `no component "cache" (components: "db")`},
		{"components of an action that is not a health check", func(f fstest.MapFS) {
			replace(f, mig, "exclusive = true", "exclusive = true\ncomponents = [\"db\"]")
		}, mig, "components", "only a health-check action (health = true) names the components it checks"},
		{"a component two health actions check", func(f fstest.MapFS) {
			replace(f, mig, "exclusive = true", "exclusive = true\nhealth = true\ncomponents = [\"db\"]")
			replace(f, ping, "health = true", "health = true\ncomponents = [\"db\"]")
		}, ping, "components[0]", `"db" is already checked by action "migrate"`},
		{"a component named twice", func(f fstest.MapFS) {
			replace(f, ping, "health = true", "health = true\ncomponents = [\"db\", \"db\"]")
		},
			ping, "components[1]", `"db" is named twice`},
	})
}

// TestActionUsesABadInputQuietly: a template that reads an input declared
// with a problem is not reported again.
func TestActionUsesABadInputQuietly(t *testing.T) {
	f := withActions()
	replace(f, "actions/migrate.toml", `type = "number"`, `type = "integer"`)
	replace(f, "actions/migrate.toml", `TARGET = "{{ .action.inputs.target }}"`, `TARGET = "{{ .action.inputs.steps }}"`)
	for _, p := range problemsOf(t, f) {
		if p.Key == "env_vars.TARGET" {
			t.Errorf("a reference to an input declared with a problem is reported: %v", p)
		}
	}
}

func TestCheckRunInputs(t *testing.T) {
	c := load(t, withActions())
	m, _ := c.Action("migrate")
	got, err := m.CheckRunInputs(map[string]string{"token": "s3cret", "steps": "4"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"target": "latest", "steps": json.Number("4"), "token": "s3cret"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs = %#v, want the default, the typed number and the token %#v", got, want)
	}
	got, _ = m.CheckRunInputs(map[string]string{"token": "t", "target": "v2"})
	if got["target"] != "v2" || got["steps"] != json.Number("0") {
		t.Errorf("inputs = %#v, want the given target and steps' zero value", got)
	}
	for _, tc := range []struct {
		in        map[string]string
		key, want string
	}{
		{map[string]string{}, "inputs.token", `input "token" is required`},
		{map[string]string{"token": "t", "steps": "four"}, "inputs.steps", `"four" is not a number`},
		{map[string]string{"token": "t", "tagret": "v2"}, "inputs.tagret", `action "migrate" has no input "tagret" (inputs: "target", "steps", "token")`},
	} {
		_, err := m.CheckRunInputs(tc.in)
		var ps Problems
		if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Key != tc.key || !strings.Contains(ps[0].Message, tc.want) {
			t.Errorf("CheckRunInputs(%v) = %v; want one problem at %s containing %q", tc.in, err, tc.key, tc.want)
		}
		if !strings.HasPrefix(err.Error(), tc.key+": ") {
			t.Errorf("error %q does not start with %s", err, tc.key)
		}
	}
}

func TestRenderActionEnv(t *testing.T) {
	c := load(t, withActions())
	d := Data{InstallID: "ins_1", InstallName: "acme",
		Inputs:         map[string]Value{"region": {Value: "us"}},
		SandboxOutputs: map[string]Value{"cluster": {Value: "c9"}},
		Components:     map[string]map[string]Value{"db": {"url": {Value: "postgres://pw@db", Sensitive: true}, "host": {Value: "db.internal"}}}}
	m, _ := c.Action("migrate")
	in, err := m.CheckRunInputs(map[string]string{"token": "tok-123", "target": "v7"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.RenderActionEnv("migrate", d, in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"DB_URL": "postgres://pw@db", "DB_HOST": "db.internal", "TARGET": "v7", "TOKEN": "tok-123", "REGION": "us", "CLUSTER": "c9"}
	if !reflect.DeepEqual(r.EnvVars, want) || len(r.Variables) != 0 {
		t.Errorf("env = %v, variables %v; want %v", r.EnvVars, r.Variables, want)
	}
	if want := []string{"env_vars.DB_URL", "env_vars.TOKEN"}; !reflect.DeepEqual(r.Sensitive, want) {
		t.Errorf("sensitive = %v, want the sensitive output and the sensitive input %v", r.Sensitive, want)
	}
	if red := r.Redacted(); red.EnvVars["TOKEN"] != RedactedValue || red.EnvVars["DB_URL"] != RedactedValue || red.EnvVars["TARGET"] != "v7" {
		t.Errorf("redacted = %v", red.EnvVars)
	}
	if got := r.Secrets(); !reflect.DeepEqual(got, []string{"postgres://pw@db", "tok-123"}) {
		t.Errorf("secrets = %v", got)
	}
	delete(d.Components, "db")
	if _, err := c.RenderActionEnv("migrate", d, in); err == nil || !strings.Contains(err.Error(), `actions/migrate.toml: env_vars.DB_HOST: component "db" has no output "host"`) {
		t.Errorf("without db's outputs: %v", err)
	}
	if _, err := c.RenderActionEnv("nope", d, in); err == nil {
		t.Error("RenderActionEnv(nope) rendered")
	}
}

// TestRenderHookInputs: a hook's inputs render with the install's data
// when it runs; one that reads a sensitive value, or that the action
// declares sensitive, is given apart; the trigger of a hook step is found
// by its type, operation and component.
func TestRenderHookInputs(t *testing.T) {
	c := load(t, withActions())
	d := Data{InstallID: "ins_1", InstallName: "acme", Inputs: map[string]Value{"region": {Value: "us"}},
		Components: map[string]map[string]Value{"db": {"url": {Value: "postgres://pw@db", Sensitive: true}, "host": {Value: "db.internal"}}}}
	m, _ := c.Action("migrate")
	before, ok := m.HookTrigger(TriggerBefore, "deploy_config", "db")
	after, ok2 := m.HookTrigger(TriggerAfter, "provision", "")
	if !ok || !ok2 || before != 1 || after != 2 {
		t.Fatalf("HookTrigger = %d %v, %d %v; want triggers 1 and 2", before, ok, after, ok2)
	}
	if i, ok := m.HookTrigger(TriggerAfter, "deprovision", ""); ok {
		t.Errorf("HookTrigger(after deprovision) = %d; migrate has no such hook", i)
	}
	plain, secret, err := c.RenderHookInputs("migrate", before, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"steps": "3"}; !reflect.DeepEqual(plain, want) || !reflect.DeepEqual(secret, map[string]string{"token": "us-token"}) {
		t.Errorf("before hook inputs = %v and sensitive %v; want %v and the token (a sensitive input)", plain, secret, want)
	}
	plain, secret, err = c.RenderHookInputs("migrate", after, d)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, map[string]string{"target": "db.internal"}) || !reflect.DeepEqual(secret, map[string]string{"token": "postgres://pw@db"}) {
		t.Errorf("after hook inputs = %v and sensitive %v", plain, secret)
	}
	typed, err := m.CheckRunInputs(mergeInputs(plain, secret))
	if err != nil || typed["target"] != "db.internal" || typed["token"] != "postgres://pw@db" {
		t.Errorf("the rendered inputs checked = %v, %v", typed, err)
	}
	delete(d.Components, "db")
	if _, _, err := c.RenderHookInputs("migrate", after, d); err == nil ||
		!strings.Contains(err.Error(), `actions/migrate.toml: triggers[2].inputs.target: component "db" has no output "host"`) {
		t.Errorf("without db's outputs: %v", err)
	}
}

func mergeInputs(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
