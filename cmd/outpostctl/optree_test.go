package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	"github.com/charmbracelet/x/ansi"

	"github.com/outpost-dev/outpost/apiclient"
)

// operations show draws the steps as a tree of their dependencies, each
// job once with what it did.
func TestShowOperationTree(t *testing.T) {
	var op apiclient.Operation
	err := json.Unmarshal([]byte(`{"id": "op_1", "kind": "provision", "status": "running", "steps": [
		{"name": "sandbox", "status": "succeeded", "plan_job_id": "job_s", "apply_job_id": "job_s"},
		{"name": "network", "status": "succeeded", "sync_job_id": "job_n", "plan_job_id": "job_n", "apply_job_id": "job_n"},
		{"name": "database", "status": "waiting_approval", "plan_job_id": "job_d"},
		{"name": "cache", "status": "failed", "error": "boom"},
		{"name": "api", "status": "pending"}]}`), &op)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{stdout: &out}
	c.showOperation(op, "cust-a", map[string][]string{"database": {"network"}, "cache": {"network"}, "api": {"database", "cache"}}, false)
	want := []string{
		"├─ sandbox      succeeded         -        -     job_s (plan, apply)\n",
		"└─ network      succeeded         -        -     job_n (sync, plan, apply)\n",
		"   ├─ database  waiting_approval  -        -     job_d (plan)\n",
		"   │  └─ api    pending ",
		"   └─ cache     failed ",
		"cache failed: boom",
		"database waits for approval: `outpostctl approve cust-a database --operation op_1` (or deny)",
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("lacks %q:\n%s", w, out.String())
		}
	}
}

// The live tree of an update_inputs that succeeded: its unchanged steps are
// done (✓), and no step of a finished operation keeps the spinner.
func TestLiveTreeUnchangedStepsAreDone(t *testing.T) {
	var op apiclient.Operation
	err := json.Unmarshal([]byte(`{"id": "op_1", "kind": "update_inputs", "status": "succeeded",
		"created_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:09Z", "steps": [
		{"name": "sandbox", "status": "unchanged"},
		{"name": "api", "status": "succeeded"},
		{"name": "web", "status": "some_new_status"}]}`), &op)
	if err != nil {
		t.Fatal(err)
	}
	m := tuiModel{inst: apiclient.Install{Name: "cust-a"}, snap: snapshot{op: op, steps: stepsOf(op)},
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
	out := ansi.Strip(m.view(time.Now()))
	for _, want := range []string{"✓ sandbox  unchanged", "✓ api      succeeded", "· web      some_new_status"} {
		if !strings.Contains(out, want) {
			t.Errorf("the finished operation's tree lacks %q:\n%s", want, out)
		}
	}
	if frame := m.spin.View(); strings.Contains(out, ansi.Strip(frame)) {
		t.Errorf("a step of the finished operation spins (%q):\n%s", frame, out)
	}
}

// What a step's plan policies said is under the tree, and in the approval's
// summary; a policy that passed says nothing.
func TestShowOperationPolicies(t *testing.T) {
	var op apiclient.Operation
	err := json.Unmarshal([]byte(`{"id": "op_1", "kind": "deploy", "status": "running", "steps": [
		{"name": "sandbox", "status": "waiting_approval", "plan_job_id": "job_s", "plan": "Plan: 1 to add",
		 "policies": [{"source": "vendor", "policy": "vendor.review", "warn": ["terraform_data.app is new: review it"]},
		              {"source": "customer", "policy": "outpost.no_destroy_in_prod"}]}]}`), &op)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{stdout: &out}
	c.showOperation(op, "cust-a", nil, false)
	if want := "sandbox: vendor policy vendor.review warns: terraform_data.app is new: review it\n"; !strings.Contains(out.String(), want) {
		t.Errorf("lacks %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "no_destroy_in_prod") {
		t.Errorf("a policy that passed is shown:\n%s", out.String())
	}
	out.Reset()
	if err := c.confirm("approve", op, stepRows(op)[0], true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Plan: 1 to add\n", "2 plan policies: 1 passed, 1 warn\n", "vendor policy vendor.review warns: terraform_data.app is new: review it\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("approval lacks %q:\n%s", want, out.String())
		}
	}
}

// A deprovision with forget names, under its tree, in its live view and in
// the summary that ends following, each step it could not destroy, why,
// and what that step left behind.
func TestForgottenStepsNameWhatTheyLeftBehind(t *testing.T) {
	var op apiclient.Operation
	err := json.Unmarshal([]byte(`{"id": "op_1", "kind": "deprovision", "status": "succeeded", "forget": true,
		"created_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:09Z", "steps": [
		{"name": "web", "status": "succeeded"},
		{"name": "stuck", "status": "left_behind", "error": "the account is gone", "left_behind": ["terraform_data.stuck", "aws_s3_bucket.logs"]},
		{"name": "sandbox", "status": "left_behind", "error": "the account is gone", "left_behind": []}]}`), &op)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{stdout: &out}
	c.showOperation(op, "cust-a", nil, false)
	m := tuiModel{inst: apiclient.Install{Name: "cust-a"}, snap: snapshot{op: op, steps: stepsOf(op)},
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
	live := ansi.Strip(m.view(time.Now()))
	sum := summary(snapshot{op: op, steps: stepsOf(op)}, 9*time.Second)
	for _, check := range []struct{ what, text, want string }{
		{"operations show", out.String(), "stuck could not be destroyed (the account is gone): left behind: terraform_data.stuck, aws_s3_bucket.logs\n"},
		{"operations show", out.String(), "sandbox could not be destroyed (the account is gone): left behind: nothing recorded in its state\n"},
		{"the live tree", live, "! stuck    left_behind"},
		{"the live tree", live, "left behind: terraform_data.stuck, aws_s3_bucket.logs"},
		{"the summary", sum, "deprovision op_1 succeeded in 9s (3 steps: 1 succeeded, 2 left_behind)\n"},
		{"the summary", sum, "stuck could not be destroyed (the account is gone): left behind: terraform_data.stuck, aws_s3_bucket.logs"},
	} {
		if !strings.Contains(check.text, check.want) {
			t.Errorf("%s lacks %q:\n%s", check.what, check.want, check.text)
		}
	}
	if strings.Contains(out.String(), "failed") {
		t.Errorf("a step left behind is shown failed:\n%s", out.String())
	}
}

// Hook steps show in the tree by name: a component's after-hook below the
// component, the operation's before-hook at the top.
func TestShowOperationTreeWithHooks(t *testing.T) {
	var op apiclient.Operation
	err := json.Unmarshal([]byte(`{"id": "op_1", "kind": "provision", "status": "failed", "error": "before:gate: action gate (run act_1): step check failed", "steps": [
		{"name": "before:gate", "status": "failed", "error": "action gate (run act_1): step check failed"},
		{"name": "sandbox", "status": "skipped", "after": ["before:gate"]},
		{"name": "api", "status": "skipped", "after": ["sandbox", "before:gate"]},
		{"name": "after:report:api", "status": "skipped", "after": ["api"]}]}`), &op)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{stdout: &out}
	c.showOperation(op, "cust-a", map[string][]string{"api": nil}, false)
	for _, w := range []string{
		"error: before:gate: action gate (run act_1): step check failed\n",
		"├─ before:gate          failed ",
		"└─ api                  skipped",
		"   └─ after:report:api  skipped",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("lacks %q:\n%s", w, out.String())
		}
	}
}
