package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
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
	// Operations configures install operations (runner wait, gateway URL…).
	Operations activities.OperationConfig
	// Notify configures notifications (Deliveries is set from Client).
	Notify activities.NotifyConfig
}

// New returns a worker with every workflow and activity registered, and
// every activity's error classified (activities.Classifier); Start or Run
// it.
func New(cfg Config) worker.Worker {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = DefaultTaskQueue
	}
	w := worker.New(cfg.Client, cfg.TaskQueue, Options())
	RegisterWorkflows(w)
	RegisterActivities(w, cfg)
	return w
}

// NewOutbox returns the loop that dispatches the worker's notification
// outbox (Outbox), delivering as the worker's activities do.
func NewOutbox(cfg Config) *Outbox {
	cfg.Notify = notifyConfig(cfg)
	return &Outbox{Store: cfg.Store, Dispatcher: activities.NewDispatcher(cfg.Store, cfg.Notify), Logger: cfg.Logger}
}

// notifyConfig is cfg's Notify, its Deliveries started by cfg's client.
func notifyConfig(cfg Config) activities.NotifyConfig {
	if cfg.Client != nil && cfg.Notify.Deliveries == nil {
		cfg.Notify.Deliveries = &Operations{Client: cfg.Client, TaskQueue: cfg.TaskQueue}
	}
	return cfg.Notify
}

// RegisterActivities registers every activity of the contract, by domain.
func RegisterActivities(r activities.Registry, cfg Config) {
	cfg.Notify = notifyConfig(cfg)
	d := activities.Deps{Store: cfg.Store, Operations: cfg.Operations, TaskQueue: cfg.TaskQueue, Notify: cfg.Notify}
	if d.TaskQueue == "" {
		d.TaskQueue = DefaultTaskQueue
	}
	if cfg.Client != nil {
		d.Schedules = cfg.Client.ScheduleClient()
	}
	activities.Register(r, d)
}

// Options are the worker's options: its interceptors.
func Options() worker.Options {
	return worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}}
}

// WorkflowRegistry is where workflows are registered: a worker, or a
// replayer (worker.NewWorkflowReplayer) that checks recorded histories
// against today's workflow code.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// RegisterWorkflows registers every workflow of the control plane under its
// contract name.
func RegisterWorkflows(r WorkflowRegistry) {
	for name, wf := range Workflows {
		r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: name})
	}
}

// Workflows are the control plane's workflows by their contract names.
var Workflows = map[string]any{
	contract.WorkflowProvisionInstall:    workflows.ProvisionInstall,
	contract.WorkflowDeprovisionInstall:  workflows.DeprovisionInstall,
	contract.WorkflowReprovisionInstall:  workflows.ReprovisionInstall,
	contract.WorkflowDeployComponent:     workflows.DeployComponent,
	contract.WorkflowTeardownComponent:   workflows.TeardownComponent,
	contract.WorkflowUpdateInputs:        workflows.UpdateInputs,
	contract.WorkflowDeployConfig:        workflows.DeployConfig,
	contract.WorkflowDriftCheck:          workflows.DriftCheck,
	contract.WorkflowReconcileDrift:      workflows.ReconcileDrift,
	contract.WorkflowBuildComponent:      workflows.BuildComponent,
	contract.WorkflowRelease:             workflows.Release,
	contract.WorkflowInstallCommand:      workflows.InstallCommand,
	contract.WorkflowActionRun:           workflows.ActionRun,
	contract.WorkflowRunbookRun:          workflows.RunbookRun,
	contract.WorkflowUpdateRunner:        workflows.UpdateRunner,
	contract.WorkflowSupportBundle:       workflows.SupportBundle,
	contract.WorkflowKubeLogs:            workflows.KubeLogs,
	contract.WorkflowDeliverNotification: workflows.DeliverNotification,
}

// StartOperation starts the workflow of an install operation. Its ID is
// reused across operations of the same kind (the store's install lock is
// what keeps two from running at once).
func (o *Operations) StartOperation(ctx context.Context, op store.InstallOperation) error {
	wf, ok := contract.OperationWorkflows[op.Kind]
	if !ok {
		return fmt.Errorf("no workflow for operation kind %q", op.Kind)
	}
	return o.start(ctx, op.WorkflowID, idReused, wf, contract.OperationInput{OperationID: op.ID})
}

// StartBuild starts a build's workflow. Its ID names the build, so a second
// start of the same build is refused rather than run twice; that refusal is
// not an error here (the build is under way).
func (o *Operations) StartBuild(ctx context.Context, b store.Build) error {
	return o.start(ctx, b.WorkflowID, idNamesWork, contract.WorkflowBuildComponent, contract.BuildInput{BuildID: b.ID})
}

// StartRelease starts a release's workflow (its ID names the release).
func (o *Operations) StartRelease(ctx context.Context, r store.Release) error {
	return o.start(ctx, r.WorkflowID, idNew, contract.WorkflowRelease, contract.ReleaseInput{ReleaseID: r.ID})
}

// SignalRelease pauses, resumes or cancels a release (contract.ReleasePause…);
// a workflow that has ended is store.ErrNotFound.
func (o *Operations) SignalRelease(ctx context.Context, workflowID, action string) error {
	err := o.Client.SignalWorkflow(ctx, workflowID, "", contract.ReleaseSignal, contract.ReleaseControl{Action: action})
	if nf := (*serviceerror.NotFound)(nil); errors.As(err, &nf) {
		return fmt.Errorf("workflow %s has ended: %w", workflowID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("signal %s: %w", workflowID, err)
	}
	return nil
}

// SignalApproval sends a step's approval or denial to its operation.
func (o *Operations) SignalApproval(ctx context.Context, workflowID, step string, approve bool) error {
	err := o.Client.SignalWorkflow(ctx, workflowID, "", contract.ApprovalSignal, contract.Approval{Step: step, Approve: approve})
	if err != nil {
		return fmt.Errorf("signal %s: %w", workflowID, err)
	}
	return nil
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
	return o.start(ctx, cmd.WorkflowID, idNew, contract.WorkflowInstallCommand,
		contract.InstallCommandInput{InstallID: cmd.InstallID, CommandID: cmd.ID, TimeoutMS: cmd.TimeoutMS})
}

// StartRunnerUpdate starts the workflow that updates an install's runner;
// while one runs for the install, it is store.ErrConflict.
func (o *Operations) StartRunnerUpdate(ctx context.Context, u store.RunnerUpdate, deadline, drain time.Duration) error {
	err := o.start(ctx, u.WorkflowID, idReused, contract.WorkflowUpdateRunner,
		contract.RunnerUpdateInput{UpdateID: u.ID, HealthDeadline: deadline, DrainTimeout: drain})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("a runner update of install %s is under way: %w", u.InstallID, store.ErrConflict)
	}
	return err
}

// StartSupportBundle starts the workflow that collects a support bundle.
func (o *Operations) StartSupportBundle(ctx context.Context, b store.SupportBundle) error {
	return o.start(ctx, b.WorkflowID, idNew, contract.WorkflowSupportBundle, contract.SupportBundleInput{InstallID: b.InstallID, BundleID: b.ID})
}

// StartKubeLogs starts the workflow of a logs request.
func (o *Operations) StartKubeLogs(ctx context.Context, workflowID string, req contract.KubeLogsRequest) error {
	return o.start(ctx, workflowID, idNew, contract.WorkflowKubeLogs, req)
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

// StartActionRun starts the workflow that runs a recorded action run.
func (o *Operations) StartActionRun(ctx context.Context, run store.ActionRun) error {
	return o.start(ctx, run.WorkflowID, idNew, contract.WorkflowActionRun,
		contract.ActionRunInput{RunID: run.ID, InstallID: run.InstallID, Action: run.Action})
}
