package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// fitPlanOutputs keeps a plan job's outputs, scrubbed, under the size a
// job's outputs may have (see fitPlan).
func (p *plugin) fitPlanOutputs(out protocol.TerraformPlanOutputs) (json.RawMessage, error) {
	if err := scrubPlan(p.secrets, &out); err != nil {
		return nil, err
	}
	return fitPlan(&out, func() ([]byte, error) { return json.Marshal(out) })
}

// fitPlanApplyOutputs is fitPlanOutputs for a plan_apply job, whose plan
// file, applied already, is not kept.
func (p *plugin) fitPlanApplyOutputs(plan protocol.TerraformPlanOutputs, applied bool) (json.RawMessage, error) {
	if err := scrubPlan(p.secrets, &plan); err != nil {
		return nil, err
	}
	out := protocol.TerraformPlanApplyOutputs{Applied: applied, Synced: p.synced}
	return fitPlan(&plan, func() ([]byte, error) { out.Plan = plan; return json.Marshal(out) })
}

// scrubPlan scrubs the install's sensitive values from what a plan shows:
// its text, its JSON and the policies' messages (the saved plan, which the
// apply needs, is sealed at rest in the control plane).
func scrubPlan(s *plugins.Secrets, out *protocol.TerraformPlanOutputs) error {
	out.PlanText = s.String(out.PlanText)
	var err error
	if out.PlanJSON, err = s.JSON(out.PlanJSON); err != nil {
		return fmt.Errorf("scrubbing the plan's JSON: %w", err)
	}
	for i := range out.Policies {
		r := &out.Policies[i]
		r.Error = s.String(r.Error)
		for _, msgs := range [][]string{r.Deny, r.Warn} {
			for j := range msgs {
				msgs[j] = s.String(msgs[j])
			}
		}
	}
	return nil
}

// fitPlan cuts a plan until encode gives no more than a job's outputs may
// hold: the JSON goes first, then the text is cut (the plan file, which the
// apply needs, is never cut). Truncated says so.
func fitPlan(out *protocol.TerraformPlanOutputs, encode func() ([]byte, error)) (json.RawMessage, error) {
	b, err := encode()
	if err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	out.PlanJSON, out.Truncated = nil, true
	if b, err = encode(); err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	over := len(b) - protocol.MaxOutputsBytes + 200
	if over >= len(out.PlanText) {
		out.PlanText = ""
	} else {
		keep := len(out.PlanText) - over
		for keep > 0 && !utf8.RuneStart(out.PlanText[keep]) {
			keep--
		}
		out.PlanText = out.PlanText[:keep] + "\n… (cut: the plan is too large for the job's outputs; the logs have it whole)\n"
	}
	if b, err = encode(); err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	return nil, fmt.Errorf("the saved plan is %d bytes: more than a job's outputs may hold (%d)", len(out.PlanFile), protocol.MaxOutputsBytes)
}

// outputs reads the module's outputs; their values stay out of the logs.
func outputs(ctx context.Context, tf *tfexec.Terraform) (json.RawMessage, error) {
	tf.SetStdout(nil)
	metas, err := tf.Output(ctx)
	if err != nil {
		return nil, failure("output", err)
	}
	out := protocol.TerraformApplyOutputs{Outputs: make(map[string]protocol.TerraformOutput, len(metas))}
	for name, m := range metas {
		out.Outputs[name] = protocol.TerraformOutput{Value: m.Value, Sensitive: m.Sensitive}
	}
	return json.Marshal(out)
}

func (p *plugin) Outputs() (json.RawMessage, error) { return p.outputs, nil }
