// Package planemetrics holds the control plane's Prometheus metrics
// (docs/architecture/metrics.md): the gateway's job histograms, kept in
// memory as claims and completions happen, and the fleet's gauges, counted
// in the database at each scrape (Fleet) rather than kept in memory, so
// every replica reports the same numbers and none drifts.
//
// Label values are bounded sets only (job types, operation kinds and
// statuses): never an org, install, runner or any name a user chose.
package planemetrics
