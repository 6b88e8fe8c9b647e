// Package customer is what the customer of a runner's account decides, kept
// on the runner's side where the control plane cannot change it: the
// runner's policy (which job types it runs, whether debug commands run and
// which programs they may start, whether a deprovision or a teardown runs,
// how many jobs at once), a pause, consents to destroy, and the customer's
// own append-only history of every job the runner ran.
//
// The policy comes from the runner's flags and environment (the Helm chart's
// values set them). The pause and the consents live in the runner's state
// directory, written by `outpost-runner pause|resume|consent` (or, for the
// pause, a signal or OUTPOST_PAUSED), so the customer sets them on a running
// runner. The runner reports its policy (a summary and its digest), the pause
// and the consents with each heartbeat; the control plane shows them and
// refuses work the runner will not run, and the runner still checks every
// job it claims (Policy.Check): a job the control plane queued anyway is
// refused with the same reason.
//
// The history is a JSON-lines file per day (history/YYYY-MM-DD.jsonl),
// appended to and never rewritten; files older than the retention (90 days
// by default) are removed.
package customer
