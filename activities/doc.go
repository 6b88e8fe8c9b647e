// Package activities holds Outpost's Temporal activities: methods on
// Activities, which holds their dependencies (the store and its bus).
//
// The RunJob activities are the one way a workflow reaches a runner: an
// idempotent enqueue keyed by workflow ID and step, an await that heartbeats
// Temporal while it waits for the job row to finish and is woken by the bus
// rather than by polling, a retry of a lost attempt, and a cancel request the
// runner sees on its held heartbeat. Job manifests are rendered here, from the
// store, so workflow inputs and histories carry IDs, not manifests or secrets.
//
// Every activity returns its error through classify (errors.go): a row that
// is not there (store.ErrNotFound) will not appear on a retry, so it fails
// for good ("NotFound"); a classified input problem (an ApplicationError: bad
// input, a config that cannot work) keeps its class, also when wrapped; and
// anything else (the database restarting, a connection cut, a timeout) is
// retried by Temporal under the workflow's retry policy.
// BeginOperation plans an operation's steps from the app config's graph
// (plan.go).
package activities
