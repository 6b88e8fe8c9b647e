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
package gateway
