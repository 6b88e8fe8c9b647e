package api

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// Four eyes: in an app that requires it, the user who started an operation
// cannot approve its plans (403 four_eyes, nothing recorded or signalled);
// another approver can, and the step and the operation name both users.
// Without the rule the starter may approve.
func TestFourEyes(t *testing.T) {
	e := newTestEnv(t)
	e.ops.acceptOps = true
	app, inst := e.fixture()
	e.syncConfig(app.ID, exampleFiles(t), 201)
	e.call("PATCH", "/v1/installs/"+inst.ID+"/inputs", map[string]any{"set": []map[string]any{
		{"name": "db_password", "value": "s3cret", "sensitive": true}}}, 200, nil)
	alice := e.userToken("alice", "operator", "approver")
	bob := e.userToken("bob", "approver")

	// Without the rule, alice approves her own operation's plan.
	op := e.startWaiting(alice, inst.ID)
	e.callAs(alice, "POST", stepPath(inst.ID, op.ID)+"/approve", nil, 202, nil)
	e.finish(op)

	var got wire.App
	e.call("PUT", "/v1/apps/"+app.ID+"/four-eyes", map[string]any{"four_eyes": true}, 200, &got)
	if !got.FourEyes {
		t.Fatalf("PUT four-eyes: %+v", got)
	}
	op = e.startWaiting(alice, inst.ID)
	signalled := len(e.ops.decisions)
	res := e.callAs(alice, "POST", stepPath(inst.ID, op.ID)+"/approve", nil, 403, nil)
	if res.apiError(t).Code != codeFourEyes {
		t.Fatalf("alice approves her own operation: %s, want 403 %s", res, codeFourEyes)
	}
	if d, err := e.store.StepDecision(context.Background(), op.ID, status.SandboxStep); err != nil || d != "" ||
		len(e.ops.decisions) != signalled {
		t.Fatalf("after the refusal: decision %q (%v), signals %v; want none", d, err, e.ops.decisions[signalled:])
	}
	var dec wire.Decision
	e.callAs(bob, "POST", stepPath(inst.ID, op.ID)+"/approve", nil, 202, &dec)
	if dec.Decision != "approved" || dec.DecidedBy != "bob" || !slices.Contains(e.ops.decisions, op.WorkflowID+" sandbox true") {
		t.Fatalf("bob approves: %+v, signals %v", dec, e.ops.decisions)
	}
	var view wire.Operation
	e.call("GET", "/v1/installs/"+inst.ID+"/operations/"+op.ID, nil, 200, &view)
	if view.StartedBy != "alice" || len(view.Steps) != 1 || view.Steps[0].Decision != "approved" ||
		view.Steps[0].DecidedBy != "bob" || view.Steps[0].DecidedAt == nil {
		t.Fatalf("the operation shows started_by %q, steps %+v; want alice, approved by bob", view.StartedBy, view.Steps)
	}
	// The audit log names the users, and filters by user.
	want := map[string][]string{"alice": {"provisionInstall 202", "approveStep 202", "provisionInstall 202", "approveStep 403"},
		"bob": {"approveStep 202"}}
	for user, calls := range want {
		var log wire.AuditEventList
		e.call("GET", "/v1/audit?user="+user, nil, 200, &log)
		var got []string
		for _, ev := range slices.Backward(log.Events) {
			if ev.UserName != user {
				t.Errorf("?user=%s lists an event of %q: %+v", user, ev.UserName, ev)
			}
			got = append(got, ev.Action+" "+strconv.Itoa(ev.Status))
		}
		if !slices.Equal(got, calls) {
			t.Errorf("audit log of %s: %v, want %v", user, got, calls)
		}
	}
}

// userToken makes a user with roles and returns an API token of theirs.
func (e *testEnv) userToken(name string, roles ...string) string {
	e.t.Helper()
	var bindings []map[string]any
	for _, r := range roles {
		bindings = append(bindings, map[string]any{"role": r})
	}
	var u wire.User
	e.call("POST", "/v1/users", map[string]any{"name": name, "roles": bindings}, 201, &u)
	var tok wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": name, "user_id": u.ID}, 201, &tok)
	return tok.Token
}

// startWaiting provisions the install with token and puts the operation's
// sandbox step in waiting_approval, as the workflow would.
func (e *testEnv) startWaiting(token, installID string) wire.Operation {
	e.t.Helper()
	var op wire.Operation
	e.callAs(token, "POST", "/v1/installs/"+installID+"/provision", nil, 202, &op)
	ctx := context.Background()
	err := e.store.AddSteps(ctx, op.ID, []store.NewStep{{Name: status.SandboxStep}})
	if err == nil {
		err = e.store.UpdateStep(ctx, op.ID, status.SandboxStep, store.StepChange{Status: new(status.StepWaitingApproval)})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return op
}

// finish records op as succeeded, releasing its install.
func (e *testEnv) finish(op wire.Operation) {
	e.t.Helper()
	if err := e.store.FinishOperation(context.Background(), op.ID, status.OpSucceeded, "", ""); err != nil {
		e.t.Fatal(err)
	}
}

func stepPath(installID, opID string) string {
	return "/v1/installs/" + installID + "/operations/" + opID + "/steps/" + status.SandboxStep
}
