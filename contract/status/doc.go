// Package status holds every status that the store records and the API,
// activities and workflows read: of installs, operations and their steps,
// jobs, builds, releases and their installs, and runner updates, each a
// string type of its own (Install, Op, Step, Job, Build, Release,
// ReleaseInstall, RunnerUpdate), so that a step's status cannot be passed
// where a job's or an install's is meant. It also names the install's
// approval modes (Approval) and the sandbox's step, which the workflows
// need too.
//
// It is part of the workflow contract (package contract) and imports
// nothing, so a workflow can read a status without linking the store (gorm)
// or the app config (HCL, TOML).
package status
