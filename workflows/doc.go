// Package workflows holds Outpost's Temporal workflows: one per user-visible
// operation, each with a deterministic, readable workflow ID such as
// "install/<id>/command/<command id>", and RunJob, the one way a workflow has
// a runner do something.
//
// Workflows wait only on activities, timers and signals — never by polling
// the database — and carry IDs rather than manifests or secrets. The install
// operations share one workflow body (operation.go) whose steps a scheduler
// runs as a dependency graph (operation_scheduler.go); each kind of step has
// its file (step_*.go). docs/ARCHITECTURE.md says why, and how a change to
// released workflow code is versioned (replay_test.go).
package workflows
