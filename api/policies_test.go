package api

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A step waiting for approval carries what its plan policies said: the
// operation's answer lists each policy with its warnings.
func TestWaitingStepShowsItsPolicies(t *testing.T) {
	e := newTestEnv(t)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	e.syncConfig(app.ID, exampleFiles(t), 201)
	var inst installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": app.ID, "name": "customer-1"}, 201, &inst)
	op := e.waitingStep(inst.ID)
	results := []protocol.PolicyResult{
		{Source: protocol.PolicyVendor, Policy: "vendor.review", File: "policies/review.rego", Warn: []string{"terraform_data.app is new: review it"}},
		{Source: protocol.PolicyCustomer, Policy: "outpost.no_destroy_in_prod", File: "no_destroy_in_prod.rego"},
	}
	if err := e.store.UpdateStep(context.Background(), op.ID, status.SandboxStep, store.StepChange{Policies: &results}); err != nil {
		t.Fatal(err)
	}
	var got wire.Operation
	e.call("GET", "/v1/installs/"+inst.ID+"/operations/"+op.ID, nil, 200, &got)
	if len(got.Steps) != 1 || got.Steps[0].Status != "waiting_approval" {
		t.Fatalf("steps %+v", got.Steps)
	}
	want := []wire.PolicyResult{
		{Source: "vendor", Policy: "vendor.review", File: "policies/review.rego", Warn: []string{"terraform_data.app is new: review it"}},
		{Source: "customer", Policy: "outpost.no_destroy_in_prod", File: "no_destroy_in_prod.rego"},
	}
	if !slices.EqualFunc(got.Steps[0].Policies, want, func(a, b wire.PolicyResult) bool {
		return a.Source == b.Source && a.Policy == b.Policy && a.File == b.File && strings.Join(a.Warn, "|") == strings.Join(b.Warn, "|") && len(a.Deny) == 0
	}) {
		t.Fatalf("policies %+v, want %+v", got.Steps[0].Policies, want)
	}
}
