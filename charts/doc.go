// Package charts holds the project's Helm charts, embedded: today the
// runner's own chart (outpost-runner/), which installs outpost-runner into a
// customer's cluster. The control plane serves the `helm install` command
// line for it (RunnerInstall.Command) and can hand the chart itself to a helm
// job (RunnerChartArchive).
package charts
