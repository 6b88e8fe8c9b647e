package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// terraformRun is how a terraform step's plan_apply job is queued.
type terraformRun struct {
	// syncBuild is the build the job copies into the install's registry
	// ("": a sync job did, or there is none).
	syncBuild string
	// deferInputs: the job is queued before the step's dependencies end,
	// its variables given once they have (prestart).
	deferInputs bool
	// deferRegistry: the install's registry comes with the inputs (the
	// sandbox, which provides it, still runs).
	deferRegistry bool
}

// runTerraform plans the step's module, waits for approval if the install asks for it, and
// applies exactly the approved plan; without approval, one plan_apply job (maybe prestarted).
func (s *step) runTerraform(ctx workflow.Context, tf terraformRun) stepOutcome {
	planOp, recordPlan := protocol.TerraformPlan, contract.RecordPlan
	if s.oneJob() {
		planOp, recordPlan = protocol.TerraformPlanApply, contract.RecordPlanApply
	}
	plan := func(ctx workflow.Context) (contract.JobResult, error) { return s.terraformJob(ctx, planOp, "", tf) }
	var summary contract.PlanSummary
	planJobID, outcome, msg := s.runAndRecord(ctx, plan, &summary, recordPlan)
	if outcome != "" {
		return s.end(ctx, outcome, msg)
	}
	apply := func(ctx workflow.Context) (contract.JobResult, error) {
		return s.terraformJob(ctx, protocol.TerraformApply, planJobID, terraformRun{})
	}
	return s.applyPlan(ctx, summary, apply, contract.RecordApply)
}

// terraformJob runs one terraform job of the step (operation: plan,
// plan_apply or apply of the plan job planJobID).
func (s *step) terraformJob(ctx workflow.Context, operation, planJobID string, tf terraformRun) (contract.JobResult, error) {
	in := contract.TerraformJobInput{OperationID: s.opID, Step: s.spec.Name, Operation: operation, Destroy: s.spec.Destroy,
		PlanJobID: planJobID, Key: s.jobKey(ctx, operation), DeferInputs: tf.deferInputs}
	p := s.jobs
	if operation == protocol.TerraformPlanApply {
		in.SyncBuildID, in.DeferRegistry = tf.syncBuild, tf.deferRegistry
		p.Queued = func(ctx workflow.Context, jobID string) error { return s.launch(ctx, in, jobID) }
	}
	return RunJob(ctx, func(c workflow.Context) workflow.Future {
		return callLocal(c, contract.EnqueueTerraformJob, in)
	}, p)
}

// launch runs once the step's plan_apply job is queued: a job queued with
// deferred inputs is given them once the step's dependencies are done (a
// skipError when one did not succeed). Then the step's last job is
// launched: it runs to the end without the workflow.
func (s *step) launch(ctx workflow.Context, in contract.TerraformJobInput, jobID string) error {
	if in.DeferInputs {
		s.sched.queued[s.spec.Name] = true
		if skipped := s.sched.waitDeps(ctx, s.spec); skipped != "" {
			return skipError{skipped}
		}
		if err := runLocal(ctx, contract.ProvideTerraformInputs, in, jobID).Get(ctx, nil); err != nil {
			return err
		}
	}
	s.sched.launched[s.spec.Name] = true
	return nil
}
