// Package runnerupdate is the plugin of the "runner_update" job type: it
// downloads a runner binary by digest from the install's registry, checks
// it, and stages it next to the running runner as "<runner>.new". The
// hand-over to it is the runner's own (runner/update.go), once the job
// succeeded.
package runnerupdate
