package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/protocol"
)

// fitPlanOutputs keeps a plan job's outputs under the size a job's outputs
// may have (see fitPlan).
func fitPlanOutputs(out protocol.TerraformPlanOutputs) (json.RawMessage, error) {
	return fitPlan(&out, func() ([]byte, error) { return json.Marshal(out) })
}

// fitPlanApplyOutputs is fitPlanOutputs for a plan_apply job, whose plan
// file, applied already, is not kept.
func fitPlanApplyOutputs(plan protocol.TerraformPlanOutputs, applied bool, synced *protocol.Artifact) (json.RawMessage, error) {
	out := protocol.TerraformPlanApplyOutputs{Applied: applied, Synced: synced}
	return fitPlan(&plan, func() ([]byte, error) { out.Plan = plan; return json.Marshal(out) })
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
