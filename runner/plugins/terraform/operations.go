package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// plan saves a plan (a destroy plan when asked) and describes it: the text
// terraform showed, its JSON with sensitive values redacted, and the counts;
// then checks it against the plan policies. A drift check (NoLock) plans
// without the state lock.
func (p *plugin) plan(ctx context.Context, tf *tfexec.Terraform, cmd cli, run plugins.Run) (json.RawMessage, error) {
	out, path, err := p.checkedPlan(ctx, tf, cmd, run, p.m.NoLock)
	if err != nil {
		return nil, err
	}
	if out.PlanFile, err = os.ReadFile(path); err != nil {
		return nil, err
	}
	reportPlan(run, out)
	return p.fitPlanOutputs(out)
}

// planApply plans and applies in one "apply -auto-approve" (see the package doc), recording
// the plan as apply printed it; with a pipe, giveVariables fills it once the inputs come.
func (p *plugin) planApply(ctx context.Context, cmd cli, run plugins.Run, pipe *varsPipe) (json.RawMessage, error) {
	args := []string{"apply", "-no-color", "-input=false", "-auto-approve"}
	if p.m.Destroy {
		args = append(args, "-destroy")
	}
	if pipe != nil {
		args = append(args, "-var-file="+pipe.path)
	}
	// The plan comes first; what apply prints after it (a provisioner's
	// output, say) is only kept up to a bound.
	printed := &capped{max: 2 * protocol.MaxOutputsBytes}
	proc, err := cmd.start(ctx, io.MultiWriter(run.Stdout, printed), run.Stderr, args...)
	if err != nil {
		if pipe != nil {
			pipe.release()
		}
		return nil, failure("apply", err)
	}
	if pipe != nil {
		if err := p.giveVariables(ctx, run, proc, pipe); err != nil {
			return nil, err
		}
	}
	if err := proc.wait(); err != nil {
		return nil, failure("apply", err)
	}
	text := appliedPlanText(printed.String())
	out := protocol.TerraformPlanOutputs{HasChanges: !noChanges.MatchString(text), PlanText: text}
	out.Add, out.Change, out.Destroy = countsFromText(text)
	fmt.Fprintf(run.Stdout, "outpost: plan applied: %d to add, %d to change, %d to destroy (changes: %v)\n",
		out.Add, out.Change, out.Destroy, out.HasChanges)
	return p.fitPlanApplyOutputs(out, out.HasChanges)
}

// giveVariables waits for the job's inputs (syncing the module when they bring its registry)
// and writes the variables to pipe. Inputs that never come kill terraform, which holds no lock
// yet; terraform ending first ends the wait with a nil error (apply's wait reports its own).
func (p *plugin) giveVariables(ctx context.Context, run plugins.Run, proc *process, pipe *varsPipe) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-proc.done:
			stop()
		case <-wctx.Done():
		}
	}()
	var b []byte
	err := errors.Join(p.awaitInputs(wctx, run), p.joinSync())
	if err == nil {
		b, err = variablesJSON(p.m.Variables)
	}
	if err != nil {
		if exited(proc) {
			err = nil // terraform's own error says why
		} else {
			proc.kill()
		}
		pipe.release()
		return err
	}
	if err := pipe.give(b, proc.done); err != nil && !errors.Is(err, errNotRead) && !exited(proc) {
		proc.kill()
		return err
	}
	return nil // when terraform ended without reading them, its own error says why
}

// exited says the process has ended.
func exited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// savePlan runs terraform plan -out, keeping the plan's text as terraform
// prints it (it goes to the job's logs as well).
func savePlan(ctx context.Context, tf *tfexec.Terraform, run plugins.Run, destroy, noLock bool) (protocol.TerraformPlanOutputs, string, error) {
	path := filepath.Join(run.Dir, planFileName)
	var text bytes.Buffer
	tf.SetStdout(io.MultiWriter(run.Stdout, &text))
	changes, err := tf.Plan(ctx, tfexec.Out(path), tfexec.Destroy(destroy), tfexec.Lock(!noLock))
	tf.SetStdout(run.Stdout)
	if err != nil {
		return protocol.TerraformPlanOutputs{}, "", failure("plan", err)
	}
	return protocol.TerraformPlanOutputs{HasChanges: changes, PlanText: planText(text.String())}, path, nil
}

func reportPlan(run plugins.Run, out protocol.TerraformPlanOutputs) {
	fmt.Fprintf(run.Stdout, "outpost: plan saved: %d to add, %d to change, %d to destroy (changes: %v)\n",
		out.Add, out.Change, out.Destroy, out.HasChanges)
}

// describe fills in the plan's JSON (sensitive values redacted) and counts
// from "terraform show -json".
func describe(ctx context.Context, cmd cli, planFile string, out *protocol.TerraformPlanOutputs) error {
	var stdout bytes.Buffer
	if err := cmd.run(ctx, &stdout, nil, "show", "-json", "-no-color", planFile); err != nil {
		return failure("show -json", err)
	}
	planJSON, err := redactPlanJSON(stdout.Bytes())
	if err != nil {
		return err
	}
	add, change, del, err := countChanges(stdout.Bytes())
	if err != nil {
		return err
	}
	out.PlanJSON, out.Add, out.Change, out.Destroy = planJSON, add, change, del
	return nil
}

// apply applies exactly the saved plan, once the plan policies passed it
// (again). Its outputs are in the state it stored, where the control plane
// reads them.
func (p *plugin) apply(ctx context.Context, tf *tfexec.Terraform, cmd cli, run plugins.Run, planFile []byte) error {
	path := filepath.Join(run.Dir, planFileName)
	if err := os.WriteFile(path, planFile, 0o600); err != nil {
		return err
	}
	if _, err := p.checkSavedPlan(ctx, cmd, run, path); err != nil {
		return err
	}
	if err := tf.Apply(ctx, tfexec.DirOrPlan(path)); err != nil {
		return failure("apply", err)
	}
	return nil
}
