// Package chartstest installs the runner chart (package charts) on a test
// cluster with helm's SDK, as `helm install` does: for the chart's own tests
// and the end-to-end tests that run a runner under it. It is test support:
// the control plane never imports it, so helm's action package stays out of
// the api binary.
package chartstest
