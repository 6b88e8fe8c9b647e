package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/workflows"
)

// DefaultTaskQueue is the task queue of the control plane's workflows.
const DefaultTaskQueue = "outpost-control"

// Dial connects to a Temporal frontend.
func Dial(ctx context.Context, address, namespace string, log *slog.Logger) (client.Client, error) {
	if log == nil {
		log = slog.Default()
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace,
		Logger: tlog.NewStructuredLogger(log)})
	if err != nil {
		return nil, fmt.Errorf("dial temporal at %s (namespace %s): %w", address, namespace, err)
	}
	return c, nil
}

// Config configures the worker.
type Config struct {
	Client    client.Client
	Store     *store.Store
	TaskQueue string // default DefaultTaskQueue
	Logger    *slog.Logger
}

// New returns a worker with every workflow and activity registered; Start or
// Run it.
func New(cfg Config) worker.Worker {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = DefaultTaskQueue
	}
	w := worker.New(cfg.Client, cfg.TaskQueue, worker.Options{})
	w.RegisterWorkflow(workflows.InstallCommand)
	w.RegisterActivity(&activities.Activities{Store: cfg.Store, Logger: cfg.Logger})
	return w
}

// Operations implements the API's Operations with a Temporal client.
type Operations struct {
	Client    client.Client
	TaskQueue string
}

func (o *Operations) queue() string {
	if o.TaskQueue == "" {
		return DefaultTaskQueue
	}
	return o.TaskQueue
}

// StartInstallCommand starts the workflow that runs a debug command.
func (o *Operations) StartInstallCommand(ctx context.Context, cmd store.InstallCommand) error {
	_, err := o.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    cmd.WorkflowID,
		TaskQueue:             o.queue(),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.InstallCommand, workflows.InstallCommandInput{InstallID: cmd.InstallID, CommandID: cmd.ID, TimeoutMS: cmd.TimeoutMS})
	if err != nil {
		return fmt.Errorf("start workflow %s: %w", cmd.WorkflowID, err)
	}
	return nil
}

// CancelWorkflow requests cancellation of a running workflow.
func (o *Operations) CancelWorkflow(ctx context.Context, workflowID string) error {
	if err := o.Client.CancelWorkflow(ctx, workflowID, ""); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return fmt.Errorf("workflow %s: %w", workflowID, store.ErrNotFound)
		}
		return fmt.Errorf("cancel workflow %s: %w", workflowID, err)
	}
	return nil
}

// AwaitWorkflow returns when the workflow has closed (whatever its outcome)
// or ctx is done.
func (o *Operations) AwaitWorkflow(ctx context.Context, workflowID string) error {
	err := o.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("workflow %s: %w", workflowID, store.ErrNotFound)
	}
	return nil // the workflow closed; its outcome is in the store
}
