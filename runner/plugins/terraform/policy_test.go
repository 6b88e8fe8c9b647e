package terraform_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// vendorWarnsOnCreate is a vendor policy that warns about every new resource.
const vendorWarnsOnCreate = `package vendor.review

warn contains sprintf("%s is new: review it", [rc.address]) if {
	some rc in input.terraform.resource_changes
	"create" in rc.change.actions
}
`

// withPolicies restarts the harness's runner with dir as its customer's
// plan policies ("" for none).
func (h *harness) withPolicies(dir string) {
	h.stop()
	h.policies = dir
	h.startRunner()
}

// prodPlan is a plan job of mod on ws for an install labelled env=prod,
// with the vendor's policy.
func (h *harness) prodPlan(op, ws string, mod []byte, destroy bool) protocol.TerraformManifest {
	m := h.manifest(op, ws, mod)
	m.Destroy = destroy
	m.Variables = map[string]json.RawMessage{"name": json.RawMessage(`"world"`), "password": json.RawMessage(`"` + password + `"`), "replicas": json.RawMessage(`1`)}
	m.Policies = &protocol.PlanPolicies{Step: "sandbox", Modules: []protocol.PolicyModule{{File: "policies/review.rego", Source: vendorWarnsOnCreate}},
		Install: protocol.PolicyInstall{ID: h.inst.ID, Labels: map[string]string{"env": "prod"}}}
	return m
}

// TestCustomerPolicyDeniesWhatTheVendorApproved: real runner processes and
// real terraform plans, the customer's policy (examples/policies) on the
// runner, the vendor's in the manifest. The vendor's warns and the plan
// goes on; a destroy the customer's denies fails its job naming the policy,
// whether it is planned, planned and applied in one job, or brought as a
// saved plan to apply, and nothing is destroyed.
func TestCustomerPolicyDeniesWhatTheVendorApproved(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../../examples/policies/no_destroy_in_prod.rego")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "no_destroy_in_prod.rego"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.withPolicies(dir)
	ws := h.inst.ID + ".sandbox"
	mod := testutil.TarGz(t, app)

	// A create: the vendor's policy warns, the customer's passes.
	planJob := h.run("plan-create", h.prodPlan(protocol.TerraformPlan, ws, mod, false))
	var plan protocol.TerraformPlanOutputs
	h.succeeded(planJob, &plan)
	var said []string
	for _, r := range plan.Policies {
		said = append(said, r.Source+" "+r.Policy+" deny="+strings.Join(r.Deny, ",")+" warn="+strings.Join(r.Warn, ","))
	}
	want := []string{
		"vendor vendor.review deny= warn=terraform_data.app is new: review it,terraform_data.env is new: review it,terraform_data.secret is new: review it",
		"customer outpost.no_destroy_in_prod deny= warn=",
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Fatalf("policies said:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(want, "\n"))
	}
	if logs := h.logs(planJob.ID); !strings.Contains(logs, "outpost: vendor policy vendor.review warns: terraform_data.app is new") {
		t.Errorf("plan logs lack the warning:\n%s", logs)
	}
	h.succeeded(h.apply("apply-create", ws, mod, plan.PlanFile), nil)
	before := h.stateOutputs(ws)

	// A destroy, planned: denied.
	denied := h.run("plan-destroy", h.prodPlan(protocol.TerraformPlan, ws, mod, true))
	wantErr := "customer policy outpost.no_destroy_in_prod denies: terraform_data.app would be destroyed in a production install"
	h.failedWith(denied, wantErr)

	// Planned and applied in one job (approve-all): denied before apply.
	h.failedWith(h.run("plan-apply-destroy", h.prodPlan(protocol.TerraformPlanApply, ws, mod, true)), wantErr)

	// A destroy plan made where the customer's policy was not (the runner
	// without it), brought to apply: checked again, refused.
	h.withPolicies("")
	_, destroyPlan := h.plan("plan-destroy-unchecked", ws, mod, map[string]any{"name": "world", "password": password, "replicas": 1}, true)
	h.withPolicies(dir)
	m := h.prodPlan(protocol.TerraformApply, ws, mod, false) // an apply applies the plan it is given
	m.PlanFile = destroyPlan.PlanFile
	h.failedWith(h.run("apply-destroy", m), wantErr)

	after := h.stateOutputs(ws)
	if len(after) == 0 || string(after["greeting"].Value) != string(before["greeting"].Value) {
		t.Fatalf("state outputs after the denied destroys: %v, want them as before: %v", after, before)
	}
}

// failedWith checks the job failed with an error containing want.
func (h *harness) failedWith(j store.Job, want string) {
	h.t.Helper()
	if j.Status != status.JobFailed || !strings.Contains(j.Error, want) {
		h.t.Fatalf("job %s: %s %q, want failed with %q\nlogs:\n%s", j.Key, j.Status, j.Error, want, h.logs(j.ID))
	}
}
