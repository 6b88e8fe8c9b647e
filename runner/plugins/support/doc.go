// Package support runs support jobs (protocol.JobTypeSupport): it collects an install's diagnostics in
// the customer's account — the runner's recent log, the control plane's parts, each helm release's
// status and history, the events and recent container logs of the releases' namespaces — redacts
// every part, and writes them as one tar.gz the runner uploads. It also runs kube_logs jobs, which
// print one namespace's (or workload's) events and container logs as the job's log.
package support
