package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// actionSchedulesChange is the change that reconciles an install's action
// schedules after an operation (docs/architecture/temporal.md, "Workflow
// versions"): histories recorded before it never call the activity.
const actionSchedulesChange = "action-schedules"

// reconcileActionSchedules makes the install's cron action schedules those
// of the config version a provision, reprovision or deploy_config that
// succeeded brought it to; a deprovision that succeeded deletes them. A
// failure is logged: the operation's outcome stands (the next one retries).
func reconcileActionSchedules(ctx workflow.Context, plan contract.OperationPlan, outcome status.Op) {
	if outcome != status.OpSucceeded || plan.PlanOnly {
		return
	}
	version := plan.ConfigVersion
	switch plan.Kind {
	case contract.OpProvision, contract.OpReprovision, contract.OpDeployConfig:
	case contract.OpDeprovision:
		version = 0
	default:
		return
	}
	if workflow.GetVersion(ctx, actionSchedulesChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	if err := call(actx, contract.ReconcileActionSchedules, plan.InstallID, version).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("reconciling the install's action schedules failed", "install", plan.InstallID, "version", version, "error", err)
	}
}
