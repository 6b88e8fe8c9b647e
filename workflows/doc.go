// Package workflows holds Outpost's Temporal workflows: one per user-visible
// operation, each with a deterministic, readable workflow ID such as
// "install/<id>/command/<command id>", and RunJob, the one way a workflow has
// a runner do something.
//
// Workflows wait only on activities, timers and signals — never by polling
// the database — and carry IDs rather than manifests or secrets.
package workflows
