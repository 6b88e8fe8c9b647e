package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// stepStore is what a step's jobs read and write of the store.
type stepStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetStep(ctx context.Context, opID, name string) (store.InstallStep, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
	GetInstallRunner(ctx context.Context, orgID, installID string) (store.Runner, error)
	EnqueueJob(ctx context.Context, spec store.JobSpec) (store.Job, bool, error)
	GetJobOutcome(ctx context.Context, jobID string) (store.Job, error)
}

// stepJobs queues the jobs of an operation's steps and reads how they
// ended.
type stepJobs struct {
	store stepStore
}

// stepOf reads an operation and one of its steps (whether a step destroys
// is the step's: a deploy_config deploys some and tears others down).
func (s *stepJobs) stepOf(ctx context.Context, opID, step string) (store.InstallOperation, store.InstallStep, error) {
	op, err := s.store.GetOperationByID(ctx, opID)
	if err != nil {
		return op, store.InstallStep{}, err
	}
	st, err := s.store.GetStep(ctx, opID, step)
	return op, st, err
}

// enqueue queues a step's job on the install's runner (idempotent by
// spec.Key) and records it on the step: change gives the step's new fields
// for the job's ID. spec names the job's type, timeout and state workspace;
// m is its manifest.
func (s *stepJobs) enqueue(ctx context.Context, op store.InstallOperation, step string, spec store.JobSpec, m any,
	change func(jobID string) store.StepChange) (contract.JobRef, error) {
	raw, err := manifest(m)
	if err != nil {
		return contract.JobRef{}, err
	}
	r, err := s.store.GetInstallRunner(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	spec.OrgID, spec.RunnerID, spec.InstallID, spec.Manifest = op.OrgID, r.ID, &op.InstallID, raw
	j, created, err := s.store.EnqueueJob(ctx, spec)
	if err != nil {
		return contract.JobRef{}, err
	}
	if err := s.store.UpdateStep(ctx, op.ID, step, change(j.ID)); err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

// outputs decodes a finished job's outputs into v. A job that did not
// succeed gives its error message (recorded on the step, when opID names
// one), not an error.
func (s *stepJobs) outputs(ctx context.Context, opID, step, jobID string, v any) (failed string, err error) {
	j, err := s.store.GetJobOutcome(ctx, jobID)
	if err != nil {
		return "", err
	}
	if j.Status != status.JobSucceeded {
		msg := jobError(j)
		if opID == "" {
			return msg, nil
		}
		return msg, s.store.UpdateStep(ctx, opID, step, store.StepChange{Error: &msg})
	}
	if v == nil {
		return "", nil
	}
	if err := json.Unmarshal([]byte(j.Outputs), v); err != nil {
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("outputs of job %s: %v", jobID, err), "BadOutputs", err)
	}
	return "", nil
}

// jobError is the message of a job that did not succeed.
func jobError(j store.Job) string {
	switch {
	case j.Error != "":
		return j.Error
	case j.Status == status.JobCancelled:
		return "cancelled"
	case j.ExitCode != nil:
		return fmt.Sprintf("exited with code %d", *j.ExitCode)
	}
	return string(j.Status)
}

// manifest marshals a manifest value.
func manifest(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal manifest: %w", err)
	}
	return b, nil
}

// failedPlan is the summary of a plan whose job did not succeed (failed)
// or could not be read (err).
func failedPlan(failed string, err error) (contract.PlanSummary, error) {
	return contract.PlanSummary{Failed: failed != "", Error: failed}, err
}
