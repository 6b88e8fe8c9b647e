// Package runner is the Outpost runner: the process that lives in a
// customer's account, makes only outbound HTTPS calls to the control plane's
// gateway (/runner/v1, package protocol) and runs the jobs it claims there.
//
// A Runner authenticates (registering first when given a registration token),
// then long-polls the gateway for jobs while it has a free slot, and reports
// its version and capabilities on a runner heartbeat. Each claimed job attempt
// gets a supervisor, which:
//
//   - prepares the job's directory (work-dir/jobs/<id>-<attempt>/, with
//     job.json) and re-executes the runner binary there as
//     "outpost-runner job --dir DIR" (RunJobProcess), with a clean
//     environment and in a process group of its own, which dies with the
//     runner (Pdeathsig): no attempt outlives the runner that renews its lease.
//     Until the job process handles that SIGHUP, its default action ends the
//     process, which has started nothing yet; a runner that died before the
//     fork finished is caught by the fork (Go re-checks the parent after
//     setting Pdeathsig). There is no "parent is PID 1" check: in a container
//     the runner itself is often PID 1;
//   - reads the job's stdout and stderr line by line into a spool file, and
//     ships the spool to the gateway in order, resending until acknowledged
//     (the gateway stores each sequence number once);
//   - renews the job's lease with held heartbeats, stops the job on a cancel
//     request or timeout (SIGTERM to the group, SIGKILL after a grace
//     period), kills it at once when the attempt is no longer current, and
//     kills it itself when it could not renew the lease for Lease minus
//     JobHeartbeat (self-fencing: another attempt may start after that);
//   - once the process is gone and every log chunk acknowledged, reports the
//     completion, retrying until the gateway accepts or refuses it.
//
// The job process runs the plugin of the job's type (package plugins) and
// writes result.json for the supervisor to read.
//
// With Config.HealthAddr the runner answers liveness probes (GET /healthz,
// 200 while Run runs, gateway or not): the Helm chart charts/outpost-runner
// points its Deployment's liveness probe there.
package runner
