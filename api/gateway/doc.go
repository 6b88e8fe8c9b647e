// Package gateway is the thin HTTP surface runners talk to (/runner/v1):
// register, runner heartbeat, long-poll claim, job heartbeat (held open so a
// cancel arrives at once), log chunks and completion. Runners only ever call
// out to it; it never calls a runner.
//
// It is built to make idle runners cheap: a claim asks the database only when
// the runner may have work (first poll, or after a notification for it), runner
// tokens are cached briefly, and last-seen times are written for all runners
// in one statement every few seconds. It also runs the lease reaper that marks
// attempts whose runner stopped renewing as lost.
//
// # Terraform state
//
// The gateway is terraform's standard http backend (state.go):
//
//	GET    /state/{workspace}         the latest state (204 when there is none)
//	POST   /state/{workspace}?ID=…    a new state version (ID: the lock held)
//	DELETE /state/{workspace}?ID=…    discard the workspace's state
//	LOCK   /state/{workspace}/lock    take the lock (body: terraform's lock info)
//	UNLOCK /state/{workspace}/lock    release it (body: the lock info, or ?ID=)
//
// Terraform authenticates with HTTP basic auth: the job ID and the job's state
// credential, valid while the job's current attempt runs, for the job's own
// workspace only. A lock held by someone else answers 423 with the holder's
// lock info, as terraform expects.
package gateway
