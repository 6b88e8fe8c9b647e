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
package store
