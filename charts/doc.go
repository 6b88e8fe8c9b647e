// Package charts holds the project's Helm charts, embedded: the runner's own
// chart (outpost-runner/), which installs outpost-runner into a customer's
// cluster, and the control plane's (outpost/: outpost api and outpost
// worker, their Services, `outpost migrate` as a hook; docs/production.md).
// The control plane serves the `helm install` command line for the runner's
// (RunnerInstall.Command) and can hand that chart to a helm job
// (RunnerChartArchive).
package charts
