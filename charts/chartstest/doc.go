// Package chartstest runs helm's actions on the charts of package charts
// with helm's SDK, as the helm command does: install, upgrade, rollback on a
// test cluster, and template; for the charts' own tests and the end-to-end
// tests that run a runner or the control plane under them. It is test support:
// the control plane never imports it, so helm's action package stays out of
// the api binary.
package chartstest
