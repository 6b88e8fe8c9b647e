// Package status holds the statuses that the store records and the API,
// activities and workflows read: of installs, operations and their steps,
// jobs and builds, each a string type of its own (Install, Op, Step, Job,
// Build), so that a step's status cannot be passed where a job's or an
// install's is meant. It also names the install's approval modes (Approval)
// and the sandbox's step, which the workflows need too.
//
// It imports nothing, so a workflow can read a status without importing the
// store (gorm) or the app config (HCL, TOML).
package status
