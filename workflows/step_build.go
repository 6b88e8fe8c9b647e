package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// hasBuild says the step deploys a build: a component deploy (a destroy
// uses what the install runs).
func hasBuild(st contract.StepSpec) bool {
	return !st.Destroy && st.Name != status.SandboxStep
}

// deliverBuild waits for the component's build, then has the install's
// runner copy it by digest into the install's own registry. done says the
// step ended here: with an error, or because copying the image was the
// whole deploy (container_image, docker_build).
func (s *step) deliverBuild(ctx workflow.Context) (done bool, outcome status.Step, msg string) {
	build, outcome, msg := s.readyBuild(ctx)
	if outcome != "" {
		return true, outcome, msg
	}
	sync := func(ctx workflow.Context) (contract.JobResult, error) {
		in := contract.SyncJobInput{OperationID: s.opID, Step: s.spec.Name, BuildID: build.BuildID, Key: s.jobKey(ctx, "sync")}
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return callLocal(c, contract.EnqueueSyncJob, in)
		}, s.jobs)
	}
	var synced contract.SyncSummary
	if _, outcome, msg := s.runAndRecord(ctx, sync, &synced, contract.RecordSync, build.BuildID); outcome != "" {
		return true, outcome, msg
	}
	switch {
	case synced.Failed:
		return true, status.StepFailed, synced.Error
	case contract.DeploysImage(s.spec.Type) && s.plan.PlanOnly:
		return true, status.StepPlanned, ""
	case contract.DeploysImage(s.spec.Type):
		return true, status.StepSucceeded, ""
	}
	return false, "", ""
}

// endImage ends a container_image step whose sync was its deploy, once its
// dependencies are done: RecordImage records its outputs and build.
func (s *step) endImage(ctx workflow.Context, outcome status.Step, msg string) stepOutcome {
	if contract.DeploysImage(s.spec.Type) && outcome == status.StepSucceeded {
		if err := runLocal(ctx, contract.RecordImage, s.opID, s.spec.Name).Get(ctx, nil); err != nil {
			return s.end(ctx, status.StepFailed, rootMessage(err))
		}
	}
	return s.end(ctx, outcome, msg)
}

// forgetImage tears a container_image component down: nothing runs, the
// install forgets it.
func (s *step) forgetImage(ctx workflow.Context) stepOutcome {
	if s.plan.PlanOnly {
		return s.end(ctx, status.StepPlanned, "")
	}
	if err := runLocal(ctx, contract.ForgetComponent, s.opID, s.spec.Name).Get(ctx, nil); err != nil {
		return s.end(ctx, status.StepFailed, rootMessage(err))
	}
	return s.end(ctx, status.StepSucceeded, "")
}

// readyBuild waits for the step's build. status is what the step ends
// with when there is none to deploy ("" when there is).
func (s *step) readyBuild(ctx workflow.Context) (build contract.BuildSummary, outcome status.Step, msg string) {
	build, err := awaitBuild(ctx, s.opID, s.spec.Name)
	if err != nil {
		outcome, msg = interrupted(ctx, err)
		return build, outcome, msg
	}
	if build.Status != status.BuildSucceeded {
		return build, status.StepFailed, "build " + build.BuildID + " failed: " + build.Error
	}
	return build, "", ""
}

// readyBuildUnlessFailed is readyBuild for a step that started before the
// steps it comes after ended: it stops waiting for the build (which goes on:
// it is the app's) as soon as one of them fails, and the step is skipped.
func (s *step) readyBuildUnlessFailed(ctx workflow.Context) (build contract.BuildSummary, outcome status.Step, msg string) {
	bctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	done := false
	workflow.Go(bctx, func(c workflow.Context) {
		build, outcome, msg = s.readyBuild(c)
		done = true
	})
	failed := ""
	_ = workflow.Await(ctx, func() bool {
		failed = s.sched.failedDep(s.spec)
		return done || failed != ""
	})
	switch {
	case done:
		return build, outcome, msg
	case failed != "":
		return build, status.StepSkipped, "skipped: " + failed + " did not succeed"
	}
	return build, status.StepCancelled, "operation cancelled"
}
