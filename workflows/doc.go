// Package workflows holds Outpost's Temporal workflows: one per user-visible
// operation, each with a deterministic, readable workflow ID such as
// "install/<id>/command/<command id>", and RunJob, the one way a workflow has
// a runner do something.
//
// Workflows wait only on activities, timers and signals — never by polling
// the database — and carry IDs rather than manifests or secrets. The install
// operations share one workflow body (operation.go) whose steps a scheduler
// runs as a dependency graph (operation_scheduler.go); each kind of step has
// its file (step_*.go). docs/architecture/operations.md says why, and
// docs/architecture/temporal.md how a change to released workflow code is
// versioned (replay_test.go).
//
// An operation begins with local activities (BeginOperation, then a look at
// the runner) in its first workflow task. The scheduler starts each step in a
// workflow goroutine of its own once what it starts after has ended
// (startAfter: a step that deploys a build, only the sandbox, so its build and
// sync overlap its dependencies' deploys; it waits for them before its own
// deploy), skips a step after one that did not succeed, starts nothing new
// after a denial or a cancellation, and may queue a terraform step's
// plan_apply job up to two steps ahead of what runs (prestart), so that the
// runner fetches its module and runs init meanwhile and gets its variables
// once its dependencies are done.
//
// Workflows reach activities only through package contract: by their names
// (call, callLocal and runLocal in activity.go check each call against the
// contract's signature first), with the contract's inputs and results. They
// link nothing of the activities' implementation, the store, the app config
// or the API (deps_test.go fails if they link gorm, a SQL driver, HCL, TOML,
// echo or helm); their tests register stubs of the contract's signatures
// and mock them.
package workflows
