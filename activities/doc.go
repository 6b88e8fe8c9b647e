// Package activities holds Outpost's Temporal activities, by domain: Jobs
// (RunJob's enqueue, await, retry, cancel), Operations (an operation's plan,
// runner and end), Steps, Maintenance, Terraform, Helm, Builds, Syncs,
// Drift, Releases, Commands, Support and RunnerUpdates. Each is a struct
// whose exported methods are activities, registered under their names (the
// contract's: package contract declares every activity's name and
// signature), over a small interface of the store methods it uses, declared
// beside it. Register registers them all; the worker's test checks that it
// registers exactly the contract's table.
//
// What several domains share are small helpers, each over an interface of
// its own: renderer (the app config versions an operation runs, parsed once
// per worker, and what templates read), stepJobs (a step's jobs and their
// outputs), installed (what an install's components run), artifacts (the
// vendor registry and syncs), jobQueue (a rendered job on an install's
// runner) and planner (an operation's steps from the config's graph, and
// which of them changed: plan.go, deploy.go).
//
// The RunJob activities are the one way a workflow reaches a runner: an
// idempotent enqueue keyed by workflow ID and step, an await that heartbeats
// Temporal while it waits for the job row to finish and is woken by the bus
// rather than by polling, a retry of a lost attempt, and a cancel request the
// runner sees on its held heartbeat. Job manifests are rendered here, from the
// store, so workflow inputs and histories carry IDs, not manifests or secrets.
//
// Every activity's error is classified in one place, Classifier, a worker
// interceptor (the SDK runs it around regular and local activities alike):
// a row that is not there (store.ErrNotFound) will not appear on a retry, so
// it fails for good ("NotFound"), as bad input does ("InvalidInput"); an
// ApplicationError an activity raised (a config that cannot work, a job
// without outputs) keeps its class, also when wrapped; anything else (the
// database restarting, a connection cut, a timeout) is retried by Temporal
// under the workflow's retry policy.
package activities
