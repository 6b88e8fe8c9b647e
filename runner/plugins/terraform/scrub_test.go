package terraform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store/storetest"
)

// leaky is a module that leaks what it is given: a sensitive variable it
// echoes from a local-exec (nonsensitive() lifts terraform's own guard), and
// a value it takes in a variable not declared sensitive, which terraform
// then shows in clear in the plan.
var leaky = map[string]string{"main.tf": `
variable "password" {
  type      = string
  sensitive = true
}
variable "token" {
  type = string
}
resource "terraform_data" "echo" {
  input = var.token
  provisioner "local-exec" {
    command = "echo \"echoed: ${nonsensitive(var.password)}\""
  }
}
output "token_length" {
  value = length(var.token)
}
`}

// The install's sensitive values (the manifest's Scrub, and a deferred
// job's inputs') are in none of the job's logs, plan text, plan JSON, error
// or the database, whatever the module does with them.
func TestSensitiveValuesAreScrubbedFromLogsAndPlans(t *testing.T) {
	const echoed, plain = "echoed-pw-1f6b93", "plain-token-c08e57"
	h := newHarness(t)
	mod := testutil.TarGz(t, leaky)
	vars := map[string]json.RawMessage{"password": []byte(`"` + echoed + `"`), "token": []byte(`"` + plain + `"`)}

	// A plan: its text and JSON show the token in clear, unless scrubbed.
	m := h.manifest(protocol.TerraformPlan, h.inst.ID+".leaky", mod)
	m.Variables, m.Scrub = vars, []string{echoed, plain}
	planJob := h.run("plan", m)
	var plan protocol.TerraformPlanOutputs
	h.succeeded(planJob, &plan)
	if !strings.Contains(plan.PlanText, "(sensitive value)") || !json.Valid(plan.PlanJSON) || len(plan.PlanJSON) == 0 {
		t.Errorf("plan text without the token scrubbed, or no valid JSON:\n%s\n%s", plan.PlanText, plan.PlanJSON)
	}

	// A plan_apply whose variables, and what to scrub, come later: the
	// local-exec echoes the password.
	m = h.manifest(protocol.TerraformPlanApply, h.inst.ID+".leaky", mod)
	deferred, _ := h.enqueueSpec("deferred", m, true)
	inputs, _ := json.Marshal(protocol.TerraformInputs{Variables: vars, Scrub: []string{echoed, plain}})
	if err := h.s.ProvideJobInputs(context.Background(), deferred.ID, inputs); err != nil {
		t.Fatal(err)
	}
	var applied protocol.TerraformPlanApplyOutputs
	h.succeeded(h.wait(deferred.ID), &applied)
	logs := h.logs(deferred.ID)
	if !applied.Applied || !strings.Contains(logs, "echoed: (sensitive value)") {
		t.Errorf("applied %v; want the local-exec's echo scrubbed in the logs:\n%s", applied.Applied, logs)
	}

	shown := map[string]string{"plan logs": h.logs(planJob.ID), "plan text": plan.PlanText, "plan JSON": string(plan.PlanJSON),
		"plan_apply logs": logs, "plan_apply plan": applied.Plan.PlanText}
	for where, text := range shown {
		for _, secret := range []string{echoed, plain} {
			if strings.Contains(text, secret) {
				t.Errorf("%s show %s:\n%s", where, secret, text)
			}
		}
	}
	dump := storetest.DatabaseBytes(t, h.s)
	for _, secret := range []string{echoed, plain} {
		if bytes.Contains(dump, []byte(secret)) {
			t.Errorf("a dump of the database holds %s", secret)
		}
	}
}
