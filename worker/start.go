package worker

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// idPolicy is how a workflow start treats a workflow ID used before.
type idPolicy int

const (
	// idNew: the ID is a new request's; a start under one used before fails.
	idNew idPolicy = iota
	// idNamesWork: the ID names the work (a build, a delivery), so a second
	// start is refused, and that is no error (the work is under way).
	idNamesWork
	// idReused: the ID is reused once its previous workflow has closed; a
	// start while one runs fails (serviceerror.WorkflowExecutionAlreadyStarted).
	idReused
)

// start starts workflow wf with arg under id, on the control plane's queue.
func (o *Operations) start(ctx context.Context, id string, p idPolicy, wf, arg any) error {
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: o.queue(),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}
	switch p {
	case idNamesWork:
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	case idReused:
		opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	}
	_, err := o.Client.ExecuteWorkflow(ctx, opts, wf, arg)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err == nil || (p == idNamesWork && errors.As(err, &started)) {
		return nil
	}
	return fmt.Errorf("start workflow %s: %w", id, err)
}
