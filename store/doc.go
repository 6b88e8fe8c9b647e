// Package store is Outpost's persistence: gorm models, versioned migrations,
// and the job queue (enqueue, claim with a lease, heartbeat, logs, complete,
// lease expiry) that the gateway and the RunJob activities share.
//
// It runs on PostgreSQL when a database URL is given and on a SQLite file
// otherwise (the embedded default). Every read that a tenant can trigger takes
// the org ID, so one org can never see another's rows. Secrets (API, runner and
// registration tokens) are stored only as SHA-256 hashes.
//
// Changes that someone may be waiting for (a job queued for a runner, a job
// finishing, a cancel request, new log lines) are published on a notify.Bus
// after they commit.
//
// Callers change rows through typed changes (StepChange, ReleaseInstallChange:
// a field set is written, zero values included), never column-name maps; the
// store writes rows through update (changes.go), which names the fields it
// writes and refuses one the model does not have. Statuses, operation kinds
// and workflow IDs are the contract's (package contract).
package store
