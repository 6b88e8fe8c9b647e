package activities

import (
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/store"
)

// Deps are what the activities need.
type Deps struct {
	Store *store.Store
	// Operations configures install operations (provision, deploy…).
	Operations OperationConfig
	// AwaitCheck is how often AwaitJob and AwaitBuild re-read their row when
	// no notification came (a safety net for a lost one), and heartbeat
	// Temporal. Default 5s.
	AwaitCheck time.Duration
	// Schedules and TaskQueue: where action schedules are kept, and the
	// queue their runs start on (nil: ReconcileActionSchedules fails).
	Schedules client.ScheduleClient
	TaskQueue string
	// Notify configures notifications (none without Notify.Deliveries).
	Notify NotifyConfig
}

// OperationConfig are the operation settings of the activities.
type OperationConfig struct {
	// RunnerTimeout is how long an operation waits for the install's runner
	// to come online (default 10m).
	RunnerTimeout time.Duration
	// OnlineWindow: a runner seen within it is online (default 90s).
	OnlineWindow time.Duration
	// JobWait bounds one terraform job, queueing included (default 1h).
	JobWait time.Duration
	// GatewayURL is the gateway's URL as runners reach it (the terraform
	// state backend lives there).
	GatewayURL string
	// RegistryAddress is the vendor registry's host:port as runners reach
	// it; RegistryPlainHTTP says it speaks HTTP (a loopback registry).
	RegistryAddress   string
	RegistryPlainHTTP bool
}

// withDefaults fills the settings left unset.
func (c OperationConfig) withDefaults() OperationConfig {
	if c.RunnerTimeout <= 0 {
		c.RunnerTimeout = 10 * time.Minute
	}
	if c.OnlineWindow <= 0 {
		c.OnlineWindow = store.DefaultOnlineWindow
	}
	if c.JobWait <= 0 {
		c.JobWait = time.Hour
	}
	return c
}

// Registry is where activities are registered: a worker, or a test
// environment. Temporal registers a struct's exported methods, each under
// its name (the contract's).
type Registry interface {
	RegisterActivity(a any)
}

// Register registers every activity of the contract on r.
func Register(r Registry, d Deps) {
	for _, a := range New(d) {
		r.RegisterActivity(a)
	}
}

// New builds the activities, by domain: each a struct whose exported
// methods are activities, over a small interface of the store.
func New(d Deps) []any {
	s, cfg := d.Store, d.Operations.withDefaults()
	await := d.AwaitCheck
	if await <= 0 {
		await = 5 * time.Second
	}
	render := &renderer{store: s}
	steps := &stepJobs{store: s}
	arts := &artifacts{store: s, render: render, cfg: cfg}
	inst := &installed{store: s, steps: steps, render: render}
	queue := &jobQueue{store: s}
	plan := &planner{store: s, render: render}
	tf := &Terraform{store: s, render: render, steps: steps, installed: inst, artifacts: arts, cfg: cfg}
	helm := &Helm{store: s, render: render, steps: steps, installed: inst}
	ev := newEvents(s, d.Notify)
	post := d.Notify.PostTimeout
	if post <= 0 {
		post = 30 * time.Second
	}
	return []any{
		&Jobs{store: s, queue: queue, awaitCheck: await},
		&Operations{store: s, plan: plan, cfg: cfg, events: ev},
		&Steps{store: s, render: render, events: ev},
		&Maintenance{store: s},
		tf, helm,
		&Forget{store: s, render: render, installed: inst, helm: helm},
		&Builds{store: s, render: render, steps: steps, artifacts: arts, awaitCheck: await},
		&Syncs{store: s, steps: steps, installed: inst, artifacts: arts},
		&Drift{store: s, plan: plan, steps: steps, artifacts: arts, installed: inst, terraform: tf, helm: helm, events: ev},
		&Releases{store: s, events: ev, onlineWindow: cfg.OnlineWindow},
		&Notifications{store: s, client: &http.Client{Timeout: post}},
		&Commands{store: s, queue: queue},
		&Actions{store: s, render: render, queue: queue},
		&Runbooks{store: s, render: render},
		&Support{store: s, render: render, queue: queue},
		&RunnerUpdates{store: s, render: render, artifacts: arts, queue: queue},
		&ActionSchedules{store: s, render: render, schedules: d.Schedules, taskQueue: d.TaskQueue},
	}
}
