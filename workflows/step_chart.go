package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// runChart deploys a helm_chart component from the install's registry: a plan, approval when
// asked, then the deploy; tearing it down uninstalls the release after the same approval.
func (s *step) runChart(ctx workflow.Context) stepOutcome {
	var summary contract.PlanSummary
	release := protocol.HelmDeploy
	if s.spec.Destroy {
		// The plan of a teardown needs no job: the whole release goes.
		release = protocol.HelmUninstall
		if err := runLocal(ctx, contract.PlanUninstall, s.opID, s.spec.Name).Get(ctx, &summary); err != nil {
			return s.end(ctx, status.StepFailed, rootMessage(err))
		}
	} else if _, outcome, msg := s.runAndRecord(ctx, s.helmJob(protocol.HelmPlan), &summary, contract.RecordHelmPlan); outcome != "" {
		return s.end(ctx, outcome, msg)
	}
	return s.applyPlan(ctx, summary, s.helmJob(release), contract.RecordHelmRelease)
}

// helmJob runs one helm job of the step (operation: plan, deploy or
// uninstall).
func (s *step) helmJob(operation string) func(workflow.Context) (contract.JobResult, error) {
	return func(ctx workflow.Context) (contract.JobResult, error) {
		in := contract.HelmJobInput{OperationID: s.opID, Step: s.spec.Name, Operation: operation,
			Key: s.jobKey(ctx, "helm-"+operation)}
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return callLocal(c, contract.EnqueueHelmJob, in)
		}, s.jobs)
	}
}
